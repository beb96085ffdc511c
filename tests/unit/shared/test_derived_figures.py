"""Figures a careful writer derives from its quotes, and the readings that support them."""

from __future__ import annotations

import pytest

from shared.verification.figures import figures
from shared.verification.grounding import check_grounding


@pytest.mark.parametrize(("sentence", "quote"), [
    ("Each request took 0.25 s on average.", "Each request took 250 ms on average."),
    ("Each request took a quarter of a second on average.", "Each request took 250 ms on average."),
    ("About a third of respondents had switched supplier.", "In the survey, 33% of respondents had switched supplier."),
    ("Half of the nodes failed.", "In the test, 50% of the nodes failed."),
    ("The trial enrolled more than 1,000 patients.", "The trial enrolled 1,214 patients."),
    ("The trial enrolled about 1,200 patients.", "The trial enrolled 1,214 patients."),
    ("Emissions fell by 20% between 2005 and 2020.",
     "The country's emissions fell from 500 Mt in 2005 to 400 Mt in 2020."),
    ("Unemployment rose by 1.4 percentage points over the year.",
     "The unemployment rate rose from 3.5% to 4.9% over the year."),
    ("The index is four times the size of the table.", "The index is 48 GB, while the table itself is 12 GB."),
    ("The cluster has 1 TB of RAM in total.", "The cluster has 16 nodes, each with 64 GB of RAM."),
    ("Emissions were 400 Mt in 2020.", "The country's emissions fell from 500 Mt in 2005 to 400 Mt in 2020."),
])
def test_a_derived_figure_is_kept(sentence: str, quote: str) -> None:
    g = check_grounding(sentence, [quote])
    assert g.ok, g.reason


@pytest.mark.parametrize(("sentence", "quote"), [
    ("Each request took 0.25 ms on average.", "Each request took 250 ms on average."),
    ("About a third of respondents had switched supplier.", "In the survey, 25% of respondents had switched supplier."),
    ("The trial enrolled more than 2,000 patients.", "The trial enrolled 1,214 patients."),
    ("The trial enrolled 1,000 patients.", "The trial enrolled 1,214 patients."),  # a rounding not said
    ("The trial enrolled about 2,000 patients.", "The trial enrolled 1,214 patients."),
    ("Emissions fell by 25% between 2005 and 2020.",
     "The country's emissions fell from 500 Mt in 2005 to 400 Mt in 2020."),
    ("The index is five times the size of the table.", "The index is 48 GB, while the table itself is 12 GB."),
    ("Ethernet frames carry up to 9,000 bytes of payload by default.",
     "Standard Ethernet frames carry up to 1,500 bytes of payload by default."),
    ("The switch costs more than a hundred nanoseconds.", "The switch costs less than a hundred nanoseconds."),
    ("The drive reads 3,500 GB/s.", "The drive reads 3,500 MB/s."),
])
def test_a_figure_not_derivable_is_refused(sentence: str, quote: str) -> None:
    assert not check_grounding(sentence, [quote]).ok


def test_a_figure_from_another_quote_is_still_a_merge() -> None:
    g = check_grounding("The thread pool version finished in 37 seconds.",
                        ["The thread pool version finished the benchmark in 42 seconds.",
                         "The asyncio version finished the same benchmark in 37 seconds."])
    assert not g.ok and g.category == "number"


def test_ranges_are_read_as_their_two_ends() -> None:
    assert [(f.value, f.unit) for f in figures("from 3.5% to 4.9%")] == [(3.5, "percentage"), (4.9, "percentage")]
    assert [f.value for f in figures("between 2005 and 2020")] == [2005, 2020]


def test_digits_the_parser_passes_over_are_still_figures() -> None:
    found = figures("from 500 Mt in 2005 to 400 Mt in 2020")
    assert [(f.value, f.unit) for f in found] == [(500, "megaton"), (2005, ""), (400, "megaton"), (2020, "")]


def test_no_two_is_no_figure() -> None:
    assert figures("No two consumers in the same group receive the same partition.") == ()
    g = check_grounding("No two consumers in the same Kafka group receive the same partition at the same time.",
                        ["Kafka consumers in the same group never receive the same partition at the same time; "
                         "each partition is assigned to one of them."])
    assert g.ok, g.reason


def test_a_converse_with_its_sides_exchanged_is_a_restatement() -> None:
    quote = "The central bank lends to commercial banks at the discount rate."
    assert check_grounding("Commercial banks borrow from the central bank at the discount rate.", [quote]).ok
    g = check_grounding("The central bank borrows from commercial banks at the discount rate.", [quote])
    assert not g.ok


def test_a_direction_stated_of_the_word_before_it() -> None:
    quote = "Deforestation in the basin has increased local surface temperatures and reduced rainfall."
    assert check_grounding("Rainfall in the basin has fallen as deforestation progressed.", [quote]).ok
    assert not check_grounding("Rainfall in the basin has risen as deforestation progressed.", [quote]).ok


def test_a_difference_of_percents_is_in_points_not_percent() -> None:
    quote = "The prevalence of diagnosed diabetes rose from 9.5% in 1999 to 12.0% in 2016."
    assert check_grounding("The prevalence of diagnosed diabetes rose by 2.5 percentage points from 1999 to 2016.",
                           [quote]).ok
    assert not check_grounding("The prevalence of diagnosed diabetes rose by 2.5% from 1999 to 2016.", [quote]).ok


def test_a_small_bare_number_is_never_computed() -> None:
    quote = "The review included 5 trials of aspirin and 3 trials of clopidogrel."
    assert not check_grounding("The review included 2 trials of aspirin and clopidogrel.", [quote]).ok


def test_a_bound_holds_only_of_a_figure_the_quote_states_plainly() -> None:
    assert not check_grounding("The trial enrolled more than 1,100 patients.",
                               ["The trial enrolled more than 1,200 patients."]).ok
    assert not check_grounding("Glaciers lost a third of their volume over 10 years.",
                               ["Glaciers lost a third of their volume over 20 years."]).ok
    assert check_grounding("The trial enrolled more than 1,000 patients.", ["The trial enrolled 1,214 patients."]).ok


@pytest.mark.parametrize(("bound", "holds_of"), [
    ("no fewer than", {1214, 1000}), ("not less than", {1214, 1000}), ("at least", {1214, 1000}),
    ("no more than", {800, 1000}), ("at most", {800, 1000}), ("fewer than", {800}), ("more than", {1214}),
])
def test_a_bound_holds_of_the_figures_on_its_side(bound: str, holds_of: set[int]) -> None:
    # "no fewer than" ends with "fewer than" but bounds from below
    for enrolled in (800, 1000, 1214):
        g = check_grounding(f"The trial enrolled {bound} 1,000 patients.",
                            [f"The trial enrolled {enrolled:,} patients."])
        assert g.ok == (enrolled in holds_of), (bound, enrolled, g.reason)


def test_quantities_in_words_and_in_as_a_preposition() -> None:
    assert [(f.value, f.unit) for f in figures("over the next decade")] == [(10.0, "year")]
    assert [(f.value, f.unit) for f in figures("one in five workers")] == [(20.0, "percentage")]
    assert [f.value for f in figures("from 56 in 2022 to 1,840 in 2023")] == [56.0, 2022.0, 1840.0, 2023.0]
    assert check_grounding("The authority plans to build 12,000 homes over the next ten years.",
                           ["The authority plans to build 12,000 homes over the next decade."]).ok
    assert check_grounding("Around 20% of surveyed workers said they had been offered training.",
                           ["One in five workers in the survey said they had been offered training."]).ok
    assert not check_grounding("Around 25% of surveyed workers said they had been offered training.",
                               ["One in five workers in the survey said they had been offered training."]).ok


def test_a_quarter_of_a_percentage_point_is_25_basis_points() -> None:
    quote = "The central bank increased its benchmark rate by 25 basis points to 5.5% on Wednesday."
    assert check_grounding("The central bank raised its benchmark rate by a quarter of a percentage point to 5.5% "
                           "on Wednesday.", [quote]).ok
    assert not check_grounding("The central bank raised its benchmark rate by half a percentage point to 5.5% on "
                               "Wednesday.", [quote]).ok


@pytest.mark.parametrize(("sentence", "quote"), [
    # a unit's symbol and its words
    ("The satellite orbits Earth every 98 minutes at about 700 km.",
     "At roughly 700 kilometres, the satellite completes one orbit of Earth every 98 minutes."),
    ("Wheat yields in the district averaged 3.4 tonnes per hectare last year.",
     "Last year the district's average wheat yield was 3.4 t/ha."),
    ("The machine advanced 15 metres per day.", "The machine's average advance rate was 15 m/day."),
    # a money figure's scale abbreviated, a number in words from thirteen to nineteen
    ("The startup raised $45 million in its Series B round.", "The startup's Series B round raised $45m."),
    ("Net profit reached €3.1 billion in 2022.", "In 2022 net profit reached €3.1bn."),
    ("Representatives of 14 states signed the treaty.", "Representatives of fourteen states signed the treaty."),
    # a share of a whole, and a change said as "or" or "below"
    ("Fifteen percent of the specimens belonged to unknown species.",
     "The expedition collected 3,200 specimens, and 480 of them belonged to unknown species."),
    ("Exports grew by $14.4 billion, or 20%, in 2023.", "Exports rose to $86.4 billion in 2023 from $72.0 billion."),
    ("Ridership in 2023 was 15% below its 2019 level.", "Ridership fell from 312,000 in 2019 to 265,200 in 2023."),
    # a figure joined to its unit by hyphens; a unit symbol; a number word before ", a"
    ("The dam holds back a 410-million-cubic-metre reservoir.",
     "The dam impounds a reservoir of 410 million cubic metres."),
    ("Each pump can sustain 340 L/min at a 25-metre head.",
     "Each pump is rated for a continuous flow of 340 litres per minute at a head of 25 metres."),
    ("Its resistance fell to zero below 12 K, a sign of superconductivity.",
     "Below 12 kelvin its resistance dropped to zero, a hallmark of superconductivity."),
])
def test_units_scales_and_shares_restated_in_other_words(sentence: str, quote: str) -> None:
    g = check_grounding(sentence, [quote])
    assert g.ok, g.reason


@pytest.mark.parametrize(("sentence", "quote"), [
    ("The drive reads 3,500 MB.", "The drive reads 3,500 MB/s."),  # a rate is not an amount
    ("The machine advanced 15 metres per week.", "The machine's average advance rate was 15 m/day."),
    ("The startup raised $45 billion in its Series B round.", "The startup's Series B round raised $45m."),
    ("Representatives of 15 states signed the treaty.", "Representatives of fourteen states signed the treaty."),
    ("Twenty percent of the specimens belonged to unknown species.",
     "The expedition collected 3,200 specimens, and 480 of them belonged to unknown species."),
])
def test_units_scales_and_shares_changed_are_refused(sentence: str, quote: str) -> None:
    g = check_grounding(sentence, [quote])
    assert not g.ok and g.category == "number", (g.ok, g.reason)


def test_a_span_of_years_may_be_the_difference_of_two_years() -> None:
    quote = "Construction of the cathedral began in 1248 and was completed in 1430."
    assert check_grounding("Construction of the cathedral took 182 years.", [quote]).ok
    assert not check_grounding("Construction of the cathedral took 200 years.", [quote]).ok


def test_a_century_of_the_era_in_words_ordinals_or_hundreds() -> None:
    quote = "A single scribe produced the manuscript in the late 1100s."
    assert check_grounding("The manuscript was copied by a single scribe in the late twelfth century.", [quote]).ok
    assert check_grounding("A single scribe produced the manuscript in the late 12th century.", [quote]).ok
    g = check_grounding("The manuscript was copied by a single scribe in the late thirteenth century.", [quote])
    assert not g.ok and g.category == "number"


def test_a_second_before_its_noun_is_an_ordinal_not_a_period() -> None:
    assert figures("A second run leaves things as they were.") == ()
    assert [(f.value, f.unit) for f in figures("It answers 1,000 requests a second and 50 a minute.")][1] == (1.0, "second")


def test_a_figure_with_a_hyphened_word_holds_no_name() -> None:
    assert check_grounding("Saturday's match was a sell-out at the 41,000-capacity stadium.",
                           ["The stadium holds 41,000 spectators.", "Saturday's match was a sell-out."]).ok
    g = check_grounding("The match was a sell-out at the 51,000-capacity stadium.",
                        ["The stadium holds 41,000 spectators.", "The match was a sell-out."])
    assert not g.ok and g.category == "number"


@pytest.mark.parametrize(("sentence", "quote"), [
    ("The tank has a capacity of 5 cubic metres.", "The tank holds 5,000 litres."),
    ("The farm covers 300 hectares.", "The farm covers 3 square kilometres."),
    ("The upgrade trimmed median response time by 20%.",
     "The server's median response time fell from 250 ms to 200 ms after the upgrade."),
    ("Over the summer the reservoir lost 36 million cubic metres.",
     "The reservoir held 120 million cubic metres at the start of summer and 84 million cubic metres at the end."),
])
def test_volumes_areas_and_changes_said_with_other_words(sentence: str, quote: str) -> None:
    assert check_grounding(sentence, [quote]).ok


@pytest.mark.parametrize(("sentence", "quote"), [
    ("The tank has a capacity of 5 cubic metres.", "The tank holds 500 litres."),
    ("The farm covers 300 hectares.", "The farm covers 300 acres."),
    ("The upgrade trimmed median response time by 25%.",
     "The server's median response time fell from 250 ms to 200 ms after the upgrade."),
])
def test_volumes_areas_and_changes_that_differ_are_refused(sentence: str, quote: str) -> None:
    g = check_grounding(sentence, [quote])
    assert not g.ok and g.category == "number"


def test_the_following_year_of_a_stated_year_is_that_year_and_one() -> None:
    quotes = ["The team won the championship in 1998.", "They retained the title the following year."]
    assert check_grounding("The team won back-to-back championships in 1998 and 1999.", quotes).ok
    g = check_grounding("The team won back-to-back championships in 1998 and 2000.", quotes)
    assert not g.ok and g.category == "number"
    assert check_grounding("The plant closed in 2021, and it had been sold in 2020.",
                           ["The plant closed in 2021.", "It had been sold the previous year."]).ok


def test_per_cent_is_read_as_a_percentage_under_every_hash_seed() -> None:
    # The quantity parser's reading of a figure and a unit two spaces apart varied with
    # Python's string hashing; "per cent" is now rewritten so that it never meets that.
    import os
    import subprocess
    import sys

    probe = ("from shared.verification.figures import figures; "
             "print([(f.surface, f.unit) for f in figures('Rates were held at 5.25 per cent for a third meeting.')])")
    seen = set()
    for seed in ("0", "1", "2"):
        out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True,
                             env={**os.environ, "PYTHONHASHSEED": seed}).stdout.strip()
        seen.add(out)
    assert seen == {"[('5.25 per cent', 'percentage'), ('a third', '')]"}


def test_a_percentage_restates_a_british_per_cent() -> None:
    from shared.verification.grounding import check_grounding

    assert check_grounding("For a third meeting in a row, the central bank held rates at 5.25%.",
                           ["The central bank left interest rates unchanged at 5.25 per cent for the third "
                            "consecutive meeting."]).ok


@pytest.mark.parametrize(("sentence", "quote"), [
    ("The ferry takes an hour and a half to cross.", "The ferry crossing takes 90 minutes."),
    ("Patients waited 260 minutes on average.", "Patients waited four hours and twenty minutes on average."),
    ("The comet stayed visible for a year and a half.", "The comet was visible for 18 months."),
    ("The lake holds 2.4 cubic kilometres of water.", "The lake holds 2.4 billion cubic metres of water."),
    ("Around a third of the ice has been lost.", "The glacier has lost one third of its ice."),
])
def test_a_time_in_two_parts_a_spaced_fraction_and_cubic_kilometres(sentence: str, quote: str) -> None:
    assert check_grounding(sentence, [quote]).ok


@pytest.mark.parametrize(("sentence", "quote"), [
    ("The ferry takes 60 minutes to cross.", "The ferry crossing takes an hour and a half."),
    ("Patients waited four hours on average.", "Patients waited four hours and twenty minutes on average."),
    ("The lake holds 2.4 cubic kilometres of water.", "The lake holds 2.4 million cubic metres of water."),
])
def test_a_part_of_a_time_or_another_volume_is_refused(sentence: str, quote: str) -> None:
    g = check_grounding(sentence, [quote])
    assert not g.ok and g.category == "number"


def test_a_list_of_times_is_read_whole() -> None:
    # (one duration, in seconds, as a race time's "19:42:08" is), and a time after "and …
    # later" is a time of its own
    assert [f.value for f in figures("She finished in 19 hours, 42 minutes and 8 seconds.")] == [70928]
    assert [f.value for f in figures("She finished in 19:42:08.")] == [70928]
    assert [f.unit for f in figures("The race took 2 hours and 30 minutes later it rained.")] == ["hour", "minute"]


def test_a_figure_within_one_percent_is_no_rounding_past_its_last_digit() -> None:
    # "1214" rounds to nothing but itself; within 1% of 1221 is still another number
    g = check_grounding("The abbey church was consecrated in 1214.", ["The abbey church was consecrated in 1221."])
    assert not g.ok and g.category == "number", g
    g = check_grounding("The archive holds 4,562 letters.", ["The archive holds 4,571 letters."])
    assert not g.ok, g
    # a rounding to its last digit is kept
    assert check_grounding("The archive holds 4,570 letters.", ["The archive holds 4,571 letters."]).ok
    assert check_grounding("The archive holds about 4,600 letters.", ["The archive holds 4,571 letters."]).ok


def test_a_race_time_in_colons_is_a_duration() -> None:
    quote = "Okello won the Lakeside half marathon in 1:02:41, a course record."
    assert check_grounding("Okello won the Lakeside half marathon in 1 hour 2 minutes 41 seconds.", [quote]).ok
    assert check_grounding("Okello won the Lakeside half marathon in 1 hour, 2 minutes and 41 seconds.", [quote]).ok
    g = check_grounding("Okello won the Lakeside half marathon in 1 hour 2 minutes 14 seconds.", [quote])
    assert not g.ok and g.category == "number", g


def test_a_score_in_digits_is_two_counts() -> None:
    quote = "The assembly approved the budget by 214 votes to 187 and then adjourned."
    assert check_grounding("The assembly approved the budget 214–187 and then adjourned.", [quote]).ok
    g = check_grounding("The assembly approved the budget 214–178 and then adjourned.", [quote])
    assert not g.ok and g.category == "number", g
    # a rising range is still a range, and a span of years cut short is a span
    assert [f.value for f in figures("between 10-20 people")] == [10.0, 20.0]
    assert [f.value for f in figures("during the 1914–18 war")][:1] == [1914.0]


def test_twice_counts_two() -> None:
    quote = "The winger scored twice in the last fifteen minutes to turn the match around."
    assert check_grounding("With two goals in the last fifteen minutes, the winger turned the match around.",
                           [quote]).ok
    g = check_grounding("With three goals in the last fifteen minutes, the winger turned the match around.", [quote])
    assert not g.ok and g.category == "number", g


def test_degrees_with_a_letter_are_degrees_of_temperature() -> None:
    assert [f.unit for f in figures("The kiln holds 72 degrees C for an hour.")][:1] == ["degree Celsius"]
    quote = "The resin cures at 85 degrees Celsius in about 40 minutes."
    assert check_grounding("The resin cures at 85 degrees C in about 40 minutes.", [quote]).ok
    assert not check_grounding("The resin cures at 58 degrees C in about 40 minutes.", [quote]).ok


def test_minutes_and_seconds_no_clock_shows_are_a_duration() -> None:
    assert [(f.value, f.unit) for f in figures("She set a meeting record of 31:07.")] == [(1867.0, "second")]
    assert [(f.value, f.unit) for f in figures("He ran 3:45.2 in the heat.")] == [(225.2, "second")]
    assert [f.unit for f in figures("The train left at 10:30.")] == ["time of day"]
    quote = "Ines Raab won the 10,000 metres in 31 minutes 7 seconds, a meeting record."
    assert check_grounding("Ines Raab won the 10,000 metres in a meeting record of 31:07.", [quote]).ok
