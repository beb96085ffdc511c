"""Rewordings a careful writer makes, kept; the turns that look like them, refused."""

from __future__ import annotations

import pytest

from shared.verification.grounding import check_grounding


def _ok(sentence: str, *quotes: str) -> bool:
    return check_grounding(sentence, list(quotes)).ok


def _refused_as(category: str, sentence: str, quote: str) -> bool:
    """The sentence is refused against its one quote, for the reason ``category``."""
    g = check_grounding(sentence, [quote])
    return not g.ok and g.category == category


def test_new_verbs_reword_but_new_nouns_are_new_matter() -> None:
    quote = "git stash saves your uncommitted changes and reverts the working directory to match the HEAD commit."
    assert _ok("git stash records your uncommitted changes and resets the working directory to match the HEAD commit.",
               quote)
    g = check_grounding("git stash saves your uncommitted changes, config files, hooks and submodules.", [quote])
    assert not g.ok and g.category == "terms"


def test_a_clause_may_condense_two_quotes_each_keeping_its_subject() -> None:
    assert _ok("Glaciers lost an estimated 267 gigatonnes of ice per year between 2000 and 2019, "
               "which contributed about 21% of observed sea-level rise.",
               "Glaciers worldwide lost an estimated 267 gigatonnes of ice per year between 2000 and 2019.",
               "This loss contributed about 21% of observed sea-level rise over the same period.")
    assert _ok("Warfarin has a narrow therapeutic index and its effect is monitored with the INR.",
               "Warfarin has a narrow therapeutic index.",
               "Its effect is monitored with the international normalised ratio (INR).")


def test_a_subject_grafted_onto_another_quotes_predicate_is_a_merge() -> None:
    quotes = ("The epoll interface scales to tens of thousands of file descriptors per process.",
              "The select call is limited to file descriptors below FD_SETSIZE, usually 1,024.")
    assert not _ok("The epoll interface is limited to file descriptors below FD_SETSIZE, usually 1,024.", *quotes)
    quotes = ("A crash in one thread can bring down the whole process.",
              "Processes are isolated from each other by the operating system.")
    for order in (quotes, quotes[::-1]):
        assert not _ok("A crash in one thread is isolated from each other by the operating system.", *order)


def test_a_condition_is_kept_only_with_most_of_its_words() -> None:
    quote = "In adults with normal renal function, the half-life of gabapentin is 5 to 7 hours."
    assert not _ok("In adults, the half-life of gabapentin is 5 to 7 hours.", quote)
    assert _ok("In adults with normal kidney function, the half-life of gabapentin is 5 to 7 hours.", quote)


def test_a_condition_stated_once_covers_the_sentence() -> None:
    assert _ok("In 2022, tuberculosis killed 1.3 million people worldwide, while 10.6 million fell ill with it.",
               "In 2022, an estimated 10.6 million people fell ill with tuberculosis worldwide, "
               "and 1.3 million died from the disease.")


def test_names_moved_across_the_verb_are_a_role_swap() -> None:
    quote = "Clarithromycin inhibits CYP3A4 and can therefore raise blood levels of drugs such as simvastatin."
    g = check_grounding("Simvastatin inhibits CYP3A4 and can therefore raise blood levels of drugs such as "
                        "clarithromycin.", [quote])
    assert not g.ok and g.category == "role"
    quote = "In 2023, Germany imported more liquefied natural gas from the United States than from any other country."
    assert not _ok("In 2023, the United States imported more liquefied natural gas from Germany than from any other "
                   "country.", quote)


def test_a_passive_restatement_is_no_role_swap() -> None:
    assert _ok("Planning and execution statistics for every SQL statement a server executes are tracked by the "
               "pg_stat_statements module.",
               "The pg_stat_statements module tracks planning and execution statistics of all SQL statements "
               "executed by a server.")


def test_bounds_are_not_negations() -> None:
    assert _ok("Within a partition, Kafka log compaction keeps no less than the last known value for each message key.",
               "Log compaction in Kafka retains at least the last known value for each message key within a "
               "partition.")


def test_the_objects_of_onto_from_and_to_are_roles() -> None:
    quote = "The Go runtime multiplexes goroutines onto a small number of operating system threads."
    g = check_grounding("The Go runtime multiplexes operating system threads onto goroutines.", [quote])
    assert not g.ok and g.category == "role"
    assert _ok("The Go runtime multiplexes goroutines onto a few operating system threads.", quote)


def test_a_predicate_after_and_is_said_of_the_subject_before_it() -> None:
    quotes = ("Redis keeps its whole dataset in memory and serves reads in well under a millisecond.",
              "Cassandra writes data to disk through an append-only commit log and scales writes across many nodes.")
    g = check_grounding("Redis keeps its whole dataset in memory and writes data to disk through an append-only "
                        "commit log.", list(quotes))
    assert not g.ok and g.category == "merge"
    assert _ok("QUIC integrates TLS 1.3 into its handshake and runs over UDP.",
               "QUIC integrates TLS 1.3 into its handshake.", "QUIC runs over UDP.")


def test_a_subject_both_quotes_name_may_join_them() -> None:
    quotes = ("US consumer prices rose 9.1% in the year to June 2022, the fastest pace since November 1981.",
              "By June 2023 annual inflation had slowed to 3.0%.")
    assert _ok("US consumer price inflation eased from 9.1% in the year to June 2022 to 3.0% a year later.", *quotes)
    # a subject's name swapped for the other quote's is still a merge
    quotes = ("Norway's greenhouse gas emissions fell by 4.7% in 2022 as more cars ran on electricity.",
              "Poland's emissions rose by 1.9% in 2022, driven by coal power.")
    assert not _ok("Norway's emissions rose by 1.9% in 2022, driven by coal power.", *quotes)


def test_a_time_after_a_figure_is_no_rate() -> None:
    assert _ok("The median ransom payment fell to $200,000 in 2023 from $350,000 the year before.",
               "The median ransom payment fell to $200,000 in 2023 from $350,000 a year earlier.")
    assert not _ok("Glaciers lost 267 gigatonnes of ice a month.", "Glaciers lost 267 gigatonnes of ice a year.")


def test_a_hedge_holds_only_for_the_part_of_its_quote_it_is_in() -> None:
    assert _ok("The lipid-lowering effect of statins is largely achieved within four to six weeks of starting "
               "treatment.",
               "The lipid-lowering effect of statins is largely achieved within four to six weeks of starting "
               "treatment, after which the dose can be adjusted.")
    g = check_grounding("Tariffs were responsible for the decline in imports, though exchange rates also moved.",
                        ["Tariffs may have contributed to the decline in imports, though exchange rates also moved."])
    assert not g.ok and g.category == "modality"


def test_a_bare_the_and_an_event_noun_points_back() -> None:
    quotes = ("The Dead Sea's surface level has been falling by about 1 metre per year.",
              "The decline is mainly due to diversion of water from the Jordan River and to mineral extraction.")
    assert _ok("The Dead Sea's surface level has been falling by about 1 metre per year, mainly due to diversion "
               "of water from the Jordan River and to mineral extraction.", *quotes)
    # "the kernel" names a thing, not an event told of before: its predicate is not another's
    quotes = ("The kernel schedules threads preemptively.", "Go's runtime schedules goroutines on a few threads.")
    assert not _ok("Go's runtime schedules threads preemptively.", *quotes)


def test_a_clause_spanning_two_clauses_of_its_quote_is_read_against_both() -> None:
    assert _ok("The Vertical Pod Autoscaler adjusts containers' CPU and memory requests and should not be "
               "paired with HPA on the same CPU or memory metrics.",
               "Vertical Pod Autoscaler instead adjusts the CPU and memory requests of containers, and should not "
               "be used together with HPA on the same CPU or memory metrics.")
    quote = "The cache keeps entries for an hour, but it does not keep entries larger than 1 MB."
    assert not _ok("The cache does not keep entries for an hour.", quote)


def test_an_un_word_or_a_verb_that_ends_a_state_restates_a_negation() -> None:
    assert _ok("About half of people with hepatitis C worldwide do not know they have the infection.",
               "About half of people with hepatitis C worldwide are unaware that they have the infection.")
    assert _ok("TLS 1.3 dropped support for static RSA key exchange.",
               "TLS 1.3 no longer supports static RSA key exchange.")
    # the un-word's own stem on the other side is still a flip, and "unlike" negates nothing
    assert not _ok("About half of people with hepatitis C are aware of their infection.",
                   "About half of people with hepatitis C are unaware of their infection.")
    assert not _ok("An uncaught exception in one thread terminates the other threads of a Java program.",
                   "Unlike a process crash, an uncaught exception in one thread does not terminate the other "
                   "threads of a Java program.")


def test_a_relation_that_holds_both_ways_may_be_turned_round() -> None:
    assert _ok("The extinction of the dinosaurs is widely linked to the Chicxulub impact.",
               "The Chicxulub impact is widely linked to the extinction of the dinosaurs.")
    assert not _ok("The extinction of the dinosaurs caused the Chicxulub impact.",
                   "The Chicxulub impact caused the extinction of the dinosaurs.")


def test_before_and_after_is_a_span_not_an_order() -> None:
    assert _ok("In the trial, giving pembrolizumab with chemotherapy before and after surgery lifted the "
               "response rate to 64.8%, from 51.2%.",
               "In the trial, adding pembrolizumab to chemotherapy before and after surgery increased the "
               "response rate from 51.2% to 64.8%.")


def test_two_counterparts_that_trade_places_are_a_role_swap() -> None:
    quote = "A left outer join keeps every row of the left table, filling missing columns from the right table."
    g = check_grounding("A left outer join keeps every row of the right table, filling missing columns from the left "
                        "table.", [quote])
    assert not g.ok and g.category == "role"
    assert _ok("A left outer join keeps every row of the left table and fills missing columns from the right table.",
               quote)


def test_one_quotes_subject_on_another_quotes_predicate_is_a_merge_even_when_they_share_a_word() -> None:
    g = check_grounding("Creating a thread do not share memory with other threads of the process.",
                        ["Creating a thread is cheaper than creating a process.",
                         "Threads do not share memory with other threads of the process."])
    assert not g.ok and g.category == "merge"


def test_a_phrase_of_new_matter_is_unsupported() -> None:
    quote = "The central bank raised its policy rate by 50 basis points in March, its third increase this year."
    g = check_grounding("The central bank raised its policy rate by 50 basis points in March to counter rising food "
                        "prices.", [quote])
    assert not g.ok and g.category == "terms" and "counter food prices" in (g.reason or "")
    assert _ok("In March the central bank lifted its policy rate by 50 basis points.", quote)
    # two new words after "after" or "because" give a cause the quotes do not
    g = check_grounding("The fort was abandoned in the late 3rd century after repeated raids.",
                        ["The fort was abandoned in the late 3rd century."])
    assert not g.ok and g.category == "terms" and "repeated raids" in (g.reason or "")
    assert _ok("Because the kidneys eliminate amoxicillin largely in unchanged form, patients with severe renal "
               "impairment should receive it at longer intervals.",
               "Amoxicillin is excreted mainly unchanged in the urine, so the dosing interval should be extended in "
               "patients with severe renal impairment.")



@pytest.mark.parametrize(("sentence", "quote"), [
    ("The port of Velsund handled a record 4.3 million containers in 2023.",
     "The port of Velsund handled 4.3 million containers in 2023."),
    ("Rainfall in the region was 40% below average last year, the lowest total on record.",
     "Rainfall in the region was 40% below average last year."),
    ("The court ruled unanimously that the contract was void.", "The court ruled that the contract was void."),
    ("The telescope captured the first-ever images of the galaxy cluster in infrared light.",
     "The telescope captured images of the galaxy cluster in infrared light."),
])
def test_a_record_or_superlative_its_quotes_do_not_state_is_unsupported(sentence: str, quote: str) -> None:
    g = check_grounding(sentence, [quote])
    assert not g.ok and g.category == "terms" and "record or superlative" in (g.reason or "")


def test_a_superlative_may_reword_the_quotes_superlative() -> None:
    assert _ok("This season's wheat plantings in the province totalled 3.4 million hectares, the lowest area since "
               "2009.", "Farmers in the province planted 3.4 million hectares of wheat this season, the smallest area "
               "since 2009.")

def test_an_acronym_stands_for_the_name_it_abbreviates() -> None:
    assert _ok("The ECB cut its deposit rate to 3.75% in June 2024.",
               "The European Central Bank cut its deposit rate to 3.75% in June 2024.")
    g = check_grounding("The ECB cut its deposit rate to 3.75% in June 2024.",
                        ["The Federal Reserve cut its deposit rate to 3.75% in June 2024."])
    assert not g.ok


def test_a_named_place_or_group_is_a_condition() -> None:
    quote = "Over the last 20 years, glaciers in the Alps have lost about a third of their volume."
    g = check_grounding("Glaciers have lost about a third of their volume over the last 20 years.", [quote])
    assert not g.ok and g.category == "scope"
    assert _ok("In the last 20 years, glaciers in the Alps lost about a third of their volume.", quote)
    assert _ok("The DRC produced about 70% of global cobalt output in 2022.",
               "Most cobalt is mined in the Democratic Republic of the Congo, which produced about 70% of global "
               "cobalt output in 2022.")


def test_a_subject_keeps_its_names() -> None:
    quotes = ("The Bank of Japan ended its negative interest rate policy in March 2024.",
              "The Swiss National Bank cut its policy rate in March 2024, becoming the first major central bank "
              "to ease.")
    g = check_grounding("In March 2024, the Bank of Japan ended its negative interest rate policy, becoming the "
                        "first major central bank to ease.", list(quotes))
    assert not g.ok and g.category == "merge"


def test_a_predicate_the_quote_says_after_but_is_said_of_the_quotes_subject() -> None:
    quotes = ("Ryegrass cover crops reduced nitrate leaching by about 30% in the Iowa field trials.",
              "Cereal rye produced the largest biomass in the Minnesota trials, but reduced the following corn "
              "yield by 4%.")
    g = check_grounding("Ryegrass cover crops reduced nitrate leaching by about 30% in the Iowa field trials but "
                        "cut the following corn yield by 4%.", list(quotes))
    assert not g.ok and g.category == "merge"


def test_a_relative_clause_speaks_of_the_words_before_it() -> None:
    assert _ok("Indo-European, which includes most languages of Europe, is the largest language family by number "
               "of speakers.",
               "The Indo-European language family includes most languages of Europe.",
               "With about 3.3 billion native speakers, it is the largest language family by number of speakers.")


def test_the_same_and_an_opening_condition_point_to_the_subject() -> None:
    assert _ok("The sprinters reached peak velocity between 50 and 60 metres and then lost about 3% of it over the "
               "final 20 metres.",
               "Sprinters in the study reached peak velocity between 50 and 60 metres in the 100-metre race.",
               "Over the final 20 metres, the same athletes lost on average about 3% of their peak velocity.")
    assert _ok("A Go select statement waits until one of its cases can proceed and, when several are ready, runs one "
               "chosen at random.",
               "Go's select statement blocks until one of its cases can proceed, then executes that case.",
               "If multiple cases are ready, select chooses one at random.")


def test_or_more_after_a_figure_is_a_bound() -> None:
    assert _ok("Cohort members who walked 7,000 or more steps a day had a 50% to 70% lower risk of death than those "
               "who walked fewer steps.",
               "In the cohort, people who walked at least 7,000 steps a day had a 50% to 70% lower risk of death "
               "than those who walked fewer steps.")


def test_a_word_added_beside_the_anchor_quotes_may_come_from_another_but_not_stand_in_for_one() -> None:
    assert _ok("Mixture-of-experts models such as Mixtral 8x7B activate only a subset of their parameters for each "
               "token.",
               "Mixture-of-experts models activate only a subset of their parameters for each token.",
               "The mixture-of-experts model Mixtral 8x7B has about 47 billion total parameters but uses about 13 "
               "billion active parameters per token.")
    g = check_grounding("Kubernetes restarts a container whose readiness probe fails.",
                        ["Kubernetes restarts a container whose liveness probe fails, applying the restart policy.",
                         "A failed readiness probe removes the pod from the service's endpoints."])
    assert not g.ok and g.category == "merge"


def test_a_word_after_a_determiner_or_a_figure_is_a_noun_not_the_verb() -> None:
    assert _ok("Confirmed measles cases rose from 56 in 2022 to 1,840 in 2023, mostly among children under five.",
               "Confirmed measles cases rose from 56 in 2022 to 1,840 in 2023.",
               "Most cases occurred in children under five.")


def test_two_negations_dropped_are_no_double_negative() -> None:
    g = check_grounding("The trial met its primary endpoint, as the reduction in events reached statistical "
                        "significance.",
                        ["The trial failed to meet its primary endpoint, as the reduction in events did not reach "
                         "statistical significance."])
    assert not g.ok and g.category == "negation"
    assert _ok("It is not unusual for the cache to be empty.", "It is not unusual for the cache to be empty at start.")


def test_a_figure_of_the_same_thing_may_come_from_another_quote() -> None:
    quotes = ("Global rice prices reached a 15-year high in August 2023 after India banned exports of white rice.",
              "India accounts for about 40% of world rice exports, far ahead of Thailand and Vietnam.")
    assert _ok("World rice prices reached a 15-year high in August 2023 after India, which supplies about 40% of "
               "global rice exports, banned exports of white rice.", *quotes)
    g = check_grounding("Consumer prices rose 4.5% in the United States in 2023.",
                        ["Consumer prices rose 3.4% in the United States in 2023.",
                         "Wages in the euro area grew 4.5% over the same period."])
    assert not g.ok and g.category == "number"


def test_more_rewordings_a_careful_writer_makes() -> None:
    # a hyphenated compound for its words apart
    assert _ok("Farmers who received planting-date advice by text-message raised sorghum yields by 11%.",
               "Farmers who received text message advice on planting dates raised their sorghum yields by 11%.")
    # "must" for "requires … to"; not for "may require"
    quote = "The reform requires all newly qualified teachers to complete a two-year induction programme."
    assert _ok("Under the reform, every newly qualified teacher must complete a two-year induction programme.", quote)
    g = check_grounding("Under the regulation, platforms must remove flagged content within 24 hours.",
                        ["Under the regulation, member states may require platforms to remove flagged content "
                         "within 24 hours."])
    assert not g.ok and g.category == "modality"
    # "more likely" compares likelihoods; it hedges nothing
    assert _ok("Asthma diagnoses were more common among children living within 200 metres of a major road than "
               "among those living farther away.",
               "Children living within 200 metres of a major road were more likely to be diagnosed with asthma than "
               "those living further away.")
    # the same change said twice is one comparison
    assert _ok("Government debt had fallen to 82% of GDP by the end of 2023, its third straight annual decline.",
               "Government debt declined for the third consecutive year, reaching 82% of GDP at the end of 2023.")
    # an acronym for words in any case
    assert _ok("At week 16, 74% of patients on the antibody achieved a 90% reduction in PASI.",
               "At week 16, 74% of patients on the antibody achieved a 90% reduction in psoriasis area and severity "
               "index.")


def test_subjects_read_more_carefully() -> None:
    # what a reporting verb's "that" says is what the quote is about
    assert _ok("The return capsule that landed in the Utah desert held about 121.6 grams of material from Bennu.",
               "The return capsule landed in the Utah desert on 24 September 2023.",
               "Curators later confirmed that the capsule contained about 121.6 grams of material from Bennu.")
    # a subject's word swapped for another quote's is still a merge
    g = check_grounding("The reef's northern section escaped severe bleaching in 2022.",
                        ["Coral cover on the northern section of the reef fell to 14% after the 2022 bleaching.",
                         "The southern section, which escaped severe bleaching in 2022, recorded its highest cover."])
    assert not g.ok and g.category == "merge"
    # a qualifier that opens a clause is on neither side of its verb
    assert _ok("In a phase 3 trial, 74% of patients on the antibody achieved the primary outcome at week 16.",
               "At week 16, 74% of patients on the antibody achieved the primary outcome in the phase 3 trial.")


def test_few_only_and_nouns_joined_by_and() -> None:
    assert _ok("Efficacy in those 65 and over was 67%, an estimate with a wide confidence interval because of few "
               "cases.",
               "Efficacy in participants aged 65 and over was 67%, although the confidence interval was wide because "
               "of the small number of cases.")
    assert _ok("Median household income in the city grew by only 4% over the same period.",
               "Over the same period, median household income in the city grew by 4%.")
    assert not _ok("Only median household income in the city grew by 4% over the same period.",
                   "Over the same period, median household income in the city grew by 4%.")
    assert _ok("All 164 people on board evacuated safely.",
               "All 164 passengers and crew evacuated safely using the forward slides.")


def test_directions_read_more_carefully() -> None:
    # a fall said with another word of the same sign, "more slowly", "grown warmer", "fasting"
    assert _ok("Within seconds of the trip, frequency fell to 49.2 Hz.",
               "Frequency dropped to 49.2 Hz within seconds of the trip.")
    assert _ok("Participants responded more slowly on switch trials than on repeat trials.",
               "Reaction times slowed on switch trials compared with repeat trials.")
    assert _ok("Antarctic Bottom Water has grown warmer and fresher since the early 1990s.",
               "Antarctic Bottom Water has become warmer and less saline since the early 1990s.")
    assert _ok("The tablet should be taken fasting, at least one hour before breakfast.",
               "The tablet should be taken on an empty stomach, at least one hour before breakfast.")
    # "more than 30%" bounds a figure; it compares nothing
    assert _ok("Runners whose weekly mileage jumped by over 30% in a week faced a higher likelihood of injury.",
               "Runners who increased their weekly mileage by more than 30% in a week were more likely to be injured.")
    # still: the other direction on the same axis is refused
    g = check_grounding("Within seconds of the trip, frequency rose to 49.2 Hz.",
                        ["Frequency dropped to 49.2 Hz within seconds of the trip."])
    assert not g.ok


def test_rarely_holds_for_the_part_of_its_quote_it_is_in() -> None:
    assert _ok("Dives below 1,000 metres were routine for the tagged elephant seals.",
               "The tagged elephant seals routinely dived below 1,000 metres, collecting temperature profiles in "
               "regions rarely visited by research vessels.")
    g = check_grounding("The tagged elephant seals dived below 1,000 metres.",
                        ["The tagged elephant seals rarely dived below 1,000 metres."])
    assert not g.ok and g.category == "quantifier"


def test_a_quote_that_goes_on_with_also_points_back() -> None:
    assert _ok("Version 2.0 drops support for Python 3.7 and introduces an asynchronous client.",
               "Version 2.0 of the library drops support for Python 3.7.",
               "The release also introduces an asynchronous client.")


def test_one_quotes_subject_is_no_subject_for_another_quotes_predicate() -> None:
    g = check_grounding("Carl Hewitt and his colleagues can send a finite number of messages to other actors whose "
                        "addresses they know.",
                        ["Carl Hewitt and his colleagues described the model in 1973.",
                         "The actor can send a finite number of messages to other actors whose addresses it knows."])
    assert not g.ok and g.category == "merge"


def test_an_added_more_is_an_added_comparison() -> None:
    quote = "The biggest danger in asyncio code is a blocking call inside a coroutine."
    assert not _ok("The biggest danger in asyncio code is a blocking call inside a significantly more coroutine.",
                   quote)
    assert not _ok("There are three responses when a consumer cannot keep significantly more up.",
                   "There are three responses when a consumer cannot keep up.")


def test_last_readings_of_this_round() -> None:
    # a frequency read in the part of the quote the clause restates; a superlative is no frequency
    assert _ok("Speech production is typically impaired by damage to Broca's area, whereas comprehension stays "
               "relatively intact.",
               "Damage to Broca's area typically impairs speech production while leaving comprehension relatively "
               "intact.")
    assert _ok("TypeScript was the most common language for new front-end projects in the survey.",
               "In the survey, TypeScript was the most commonly used language for new front-end projects.")
    # a range's second end keeps its scale and currency
    assert _ok("Banks with $100 billion to $250 billion in assets must run annual stress tests.",
               "Banks with assets between $100 billion and $250 billion must run annual stress tests.")


def test_money_raised_is_no_rise_and_a_verb_may_bound_a_figure() -> None:
    quote = "Northgate Ventures led the startup's $45m Series B round."
    assert _ok("The startup raised $45 million in a Series B round led by Northgate Ventures.", quote)
    assert not _ok("The startup raised $45 billion in a Series B round led by Northgate Ventures.", quote)
    limit = "Clients that send more than 100 requests in a minute receive an HTTP 429 response from the API."
    assert _ok("The API returns a 429 status code when a client exceeds 100 requests per minute.", limit)
    assert not _ok("The API returns a 429 status code when a client sends fewer than 100 requests per minute.", limit)
    # a bound on a bare number holds of a figure that counts the same thing, not of "HTTP 429"
    assert not _ok("The API returns a 429 status code when a client exceeds 10 requests per minute.", limit)
    tags = "Geolocators weighing under 1 g were used to track the migrating terns."
    assert _ok("The migrating terns were tracked with geolocators weighing less than one gram.", tags)
    assert not _ok("The migrating terns were tracked with geolocators weighing more than one gram.", tags)
    # "one" alone stays no figure: "at any one time", "one at a time"
    assert _ok("Within a consumer group, every partition is read by a single consumer at any one time.",
               "A consumer group ensures that each partition is consumed by exactly one consumer at any given time.")


def test_not_until_is_only_when_and_rather_than_is_not() -> None:
    lock = ("The database acquires a row-level lock before updating a record and releases it only when the "
            "transaction commits.")
    assert _ok("Before a record is updated, the database takes a row-level lock, which is not released until the "
               "transaction commits.", lock)
    assert not _ok("Before a record is updated, the database takes a row-level lock, which is not released when the "
                   "transaction commits.", lock)
    warning = "Unused variables trigger a compiler warning, not an error."
    assert _ok("The compiler emits a warning, rather than an error, for unused variables.", warning)
    assert not _ok("The compiler emits an error, rather than a warning, for unused variables.", warning)
    # "may not / cannot … until" is "must … before": a rule, neither a hedge nor leave
    merge = "Pull requests must be approved by at least two maintainers before they can be merged."
    assert _ok("A pull request cannot be merged until a minimum of two maintainers have approved it.", merge)
    assert not _ok("A pull request cannot be merged after two maintainers have approved it.", merge)
    assert _ok("Formwork may not come off until the concrete has cured for a minimum of seven days.",
               "The concrete must cure for at least seven days before the formwork is removed.")
    g = check_grounding("Tenants may give two months' notice.", ["Tenants must give two months' notice."])
    assert not g.ok and g.category == "modality"


def test_limits_said_as_negated_excess_or_as_maximum_and_larger_than_are_bounds() -> None:
    fee = "The fee for a single-use plastic bag may not exceed 10 cents."
    assert _ok("The fee for a single-use plastic bag is capped at 10 cents.", fee)
    assert _ok("The fee for a single-use plastic bag is at most 10 cents.", fee)
    assert not _ok("The fee for a single-use plastic bag may exceed 10 cents.", fee)
    assert not _ok("The fee for a single-use plastic bag is at least 10 cents.", fee)
    shops = "Shops with a floor area above 200 square metres are covered by the law."
    assert _ok("The law applies to shops larger than 200 square metres.", shops)
    assert not _ok("The law applies to shops smaller than 200 square metres.", shops)
    notice = "The new rules require landlords to give tenants a minimum of 60 days' notice of any rent increase."
    assert _ok("Under the new rules, tenants must receive at least 60 days' notice before a rent increase.", notice)
    assert not _ok("Under the new rules, tenants must receive at most 60 days' notice before a rent increase.", notice)


def test_sides_of_a_shared_noun_are_no_role_swap() -> None:
    # "rate" is the word both turn on, a noun in each: what stands around it modifies it
    assert _ok("Ireland applies a standard VAT rate of 23%, with a reduced 13.5% rate for services such as "
               "building work and fuel.", "The standard VAT rate in Ireland is 23%.",
               "A reduced rate of 13.5% applies in Ireland to services such as building work and fuel.")
    assert not _ok("Ilse Marković beat Rosa Delgado in five sets to win the final.",
                   "Rosa Delgado beat Ilse Marković in five sets to win the final.")
    # "points" after "percentage" is a noun, not a verb with sides
    assert _ok("Attendance was 3 percentage points higher the next year.",
               "Attendance rose by 3 percentage points the following year.")


def test_a_condition_s_figure_may_be_restated_in_another_unit() -> None:
    quote = ("Tenants in the city are entitled to a rent reduction if the landlord fails to repair heating within "
             "72 hours of a written complaint.")
    assert _ok("If heating isn't repaired within three days of a written complaint, the city's tenants have a right "
               "to pay reduced rent.", quote)
    assert not _ok("If heating isn't repaired within three weeks of a written complaint, the city's tenants have a "
                   "right to pay reduced rent.", quote)


def test_dropped_to_a_figure_is_a_fall() -> None:
    quote = "Unemployment in the region fell to 4.1 percent in March, its lowest level since records began in 1992."
    assert _ok("The region's jobless rate dropped to 4.1 percent in March, the lowest since records began in 1992.",
               quote)
    assert not _ok("The region's jobless rate rose to 4.1 percent in March, the lowest since records began in 1992.",
                   quote)


def test_an_acronym_and_its_words_restate_each_other() -> None:
    assert _ok("The tunnel boring machine advanced an average of 15 metres per day through the granite section.",
               "Through the granite section, the TBM's average advance rate was 15 m/day.")
    assert _ok("MiCA entered into force in June 2023.",
               "The Markets in Crypto-Assets Regulation entered into force in June 2023.")
    assert not _ok("MiFID entered into force in June 2023.",
                   "The Markets in Crypto-Assets Regulation entered into force in June 2023.")


def test_a_part_is_not_widened_to_the_whole_country() -> None:
    quote = "House prices in the northern region rose 9 percent last year, the land registry reported."
    g = check_grounding("House prices across the country rose 9 percent last year.", [quote])
    assert not g.ok and g.category == "scope"
    assert not _ok("Nationwide, house prices rose 9 percent last year.", quote)
    assert _ok("House prices across the country rose 9 percent last year.",
               "The country's house prices rose 9 percent last year, the land registry reported.")


def test_a_verb_the_lexicon_does_not_know_is_read_by_its_ending() -> None:
    # "phosphorylates" is in no dictionary; its ending makes it a verb, so its roles are read
    quote = "The kinase ATM phosphorylates the tumour suppressor p53 in response to DNA damage."
    assert check_grounding("In response to DNA damage, the kinase ATM phosphorylates p53.", [quote]).ok
    g = check_grounding("In response to DNA damage, the tumour suppressor p53 phosphorylates the kinase ATM.", [quote])
    assert not g.ok and g.category == "role"
    g = check_grounding("The wasp larvae are parasitised by the caterpillars of the cabbage white butterfly.",
                        ["The wasp parasitises the caterpillars of the cabbage white butterfly, laying eggs inside "
                         "them."])
    assert not g.ok and g.category == "role"


def test_a_carried_subject_does_what_a_quote_says_is_done_by_no_one_named() -> None:
    quotes = ["The pipeline aligns reads to the GRCh38 reference with BWA-MEM2.",
              "Duplicate reads are marked with Picard before base quality scores are recalibrated using GATK's BQSR."]
    assert check_grounding("The pipeline aligns reads to GRCh38 with BWA-MEM2, marks duplicate reads with Picard, "
                           "and then recalibrates base quality scores using GATK's BQSR.", quotes).ok
    # both passive: "they" would be what is used, which the second quote says of semaphores
    assert not check_grounding(
        "Virtual threads remove the thread as the scarce resource, but they should be used to limit concurrent "
        "access to scarce resources.",
        ["Virtual threads remove the thread as the scarce resource, but they do not remove other limits.",
         "Semaphores should be used to limit concurrent access to scarce resources."]).ok


def test_not_until_a_time_is_at_that_time() -> None:
    quote = "Construction of the aqueduct began under the prefect and was completed twelve years after his death."
    assert check_grounding("Begun under the prefect, the aqueduct was not finished until twelve years after he died.",
                           [quote]).ok
    assert check_grounding("The drug was not approved until 2019.", ["The drug was approved in 2019."]).ok
    assert not check_grounding("The drug was not approved until 2019.", ["The drug was approved before 2019."]).ok
    assert not check_grounding("The drug was not approved until 2019.", ["The drug was approved in 2017."]).ok
    assert not check_grounding("The drug was not approved in 2019.", ["The drug was approved in 2019."]).ok


def test_keeping_a_thing_out_is_excluding_it() -> None:
    quote = "Seedling survival was highest on plots where grazing deer had been excluded by fencing."
    assert check_grounding("Plots fenced to keep out grazing deer showed the highest seedling survival.", [quote]).ok
    g = check_grounding("Plots fenced to keep in grazing deer showed the highest seedling survival.", [quote])
    assert not g.ok and g.category == "comparative"


def test_falling_under_a_rule_is_no_decrease() -> None:
    quote = "The regulation applies only to companies with more than 250 employees."
    assert check_grounding("Companies fall under the regulation only if they employ over 250 people.", [quote]).ok
    g = check_grounding("Unemployment fell under 6 percent in March.", ["Unemployment rose to 6 percent in March."])
    assert not g.ok and g.category == "comparative"


def test_from_a_date_is_a_time_not_a_party() -> None:
    quote = "The bridge will be closed to heavy goods vehicles from 3 March while engineers replace its bearings."
    assert check_grounding("Starting 3 March, heavy goods vehicles will be barred from the bridge as engineers "
                           "replace its bearings.", [quote]).ok
    g = check_grounding("The scheduler moves jobs from the queue to the workers.",
                        ["The scheduler moves jobs from the workers to the queue."])
    assert not g.ok and g.category == "role"


def test_a_change_the_quote_words_with_a_synonym_is_the_same_change() -> None:
    quote = "Running the compressor without oil for more than a minute can damage its bearings."
    assert check_grounding("Running the compressor without oil for over a minute can harm its bearings.", [quote]).ok
    g = check_grounding("Running the compressor without oil for over a minute can improve its bearings.", [quote])
    assert not g.ok and g.category == "comparative"
    # "more" is no word of a change: "as much as" does not say it
    g = check_grounding("Creating a virtual thread costs roughly as much as allocating a small significantly more "
                        "object.",
                        ["Creating a virtual thread costs roughly as much as allocating a small object."])
    assert not g.ok


def test_must_restates_a_rule_the_quote_states_plainly_but_not_a_hedge() -> None:
    quote = "The deadline for filing an appeal under the Act is 28 days from the date of the decision."
    assert check_grounding("An appeal under the Act must be filed within 28 days of the decision.", [quote]).ok
    hedged = "An appeal under the Act may be filed within 28 days of the decision."
    g = check_grounding("An appeal under the Act must be filed within 28 days of the decision.", [hedged])
    assert not g.ok and g.category == "modality"
    g = check_grounding("An appeal under the Act must definitely be filed within 28 days of the decision.", [quote])
    assert not g.ok and g.category == "modality"


def test_in_every_x_restates_a_quote_that_holds_across_all_x() -> None:
    quote = "The speed-up was seen across all tested workloads, including the write-heavy ones."
    assert check_grounding("The speed-up held in every tested workload, including the write-heavy ones.", [quote]).ok
    g = check_grounding("The speed-up held in every configuration, including the write-heavy workloads.", [quote])
    assert not g.ok and g.category == "scope"


def test_an_acronym_is_no_hedge() -> None:
    # "CAN" (the CAN bus) is no "can": the quote is not hedged, so a plain clause restates it
    assert check_grounding("The sensor takes 200 samples a second and sends a one-second average of its readings over "
                           "the CAN bus.",
                           ["The sensor samples at 200 Hz and transmits averaged readings once per second over the "
                            "CAN bus."]).ok
    g = check_grounding("The sensor transmits averaged readings over the CAN bus.",
                        ["The sensor can transmit averaged readings over the CAN bus."])
    assert not g.ok and g.category == "modality"


def test_a_change_the_quote_says_with_a_word_of_two_readings_is_the_same_change() -> None:
    # "slow" may be an adjective or a verb: read weakly, it still says the same change as "slower"
    quote = "Mutations at residue 112 slow folding by a factor of ten, according to stopped-flow measurements."
    assert check_grounding("Mutations at residue 112 make folding ten times slower.", [quote]).ok
    g = check_grounding("Mutations at residue 112 make folding ten times faster.", [quote])
    assert not g.ok and g.category == "comparative"


def test_nautical_miles_are_a_unit_of_their_own() -> None:
    quote = "The vessel was still 9 nautical miles from the harbour entrance when its engine failed."
    assert check_grounding("The vessel's engine failed 9 nautical miles from the harbour entrance.", [quote]).ok
    g = check_grounding("The vessel's engine failed 9 kilometres from the harbour entrance.", [quote])
    assert not g.ok and g.category == "number"


def test_before_and_after_may_order_the_same_two_things() -> None:
    quote = "The jury deliberated for nine hours before returning a unanimous verdict."
    assert _ok("After nine hours of deliberation, the jury reached a unanimous verdict.", quote)
    assert _ok("The client raises an error after waiting 30 seconds for a response.",
               "The client waits 30 seconds for a response before raising an error.")
    assert not _ok("The jury returned a unanimous verdict before deliberating for nine hours.", quote)
    g = check_grounding("A value can be moved to a new owner, before which the old owner can no longer use it.",
                        ["A value can be moved to a new owner, after which the old owner can no longer use it."])
    assert not g.ok and g.category == "comparative"


def test_a_thing_omitted_or_withheld_is_one_not_given() -> None:
    assert _ok("In the trial plots, winter wheat yielded 12% less where nitrogen fertiliser was withheld.",
               "Yields of winter wheat in the trial plots were 12% lower where no nitrogen fertiliser was applied.")
    assert _ok("If no timeout parameter is supplied, the client uses its default.",
               "If the timeout parameter is omitted, the client uses its default.")
    g = check_grounding("Yields were 12% lower where nitrogen fertiliser was withheld.",
                        ["Yields were 12% lower where nitrogen fertiliser was not withheld."])
    assert not g.ok and g.category == "negation"


def test_quantifiers_said_with_phrases() -> None:
    assert _refused_as("quantifier", "Every glacier in the Alps has lost mass since 2000.",
                                     "Nearly all glaciers in the Alps have lost mass since 2000.")
    assert _refused_as("quantifier", "The bug affects most users running the beta build.",
                                     "The bug affects a small number of users running the beta build.")
    assert _refused_as("quantifier", "None of the branches will reopen after the refurbishment.",
                                     "Not all branches will reopen after the refurbishment.")
    assert _refused_as("quantifier", "Flooding is the main cause of crop loss in the delta.",
                                     "Flooding is one of the main causes of crop loss in the delta.")
    assert _ok("Sue ranks among the most complete Tyrannosaurus specimens ever found.",
               "Sue is one of the most complete Tyrannosaurus specimens ever found.")
    assert _ok("Most glaciers in the Alps have lost mass since 2000.",
               "Nearly all glaciers in the Alps have lost mass since 2000.")

    assert _ok("While 12% of participants reported nausea, the drug was, in general, well tolerated.",
               "The drug was generally well tolerated, although nausea was reported in 12% of participants.")
    g = check_grounding("In general, the drug was always well tolerated.", ["The drug was, in general, well tolerated."])
    assert not g.ok and g.category == "quantifier"


def test_a_quantifier_after_a_preposition_limits_what_it_is_said_of() -> None:
    assert _refused_as("quantifier", "The tariff applies to steel imports from the region.",
                                     "The tariff applies to certain steel imports from the region.")
    assert _refused_as("quantifier", "In mice, the knockout led to early-onset obesity.",
                                     "In a subset of mice, the knockout led to early-onset obesity.")
    assert _refused_as("quantifier", "Hypertension is a side effect in patients taking the medication.",
                       "Hypertension has been reported as a side effect in some patients taking the medication.")
    assert _refused_as("quantifier", "The moon's surface shows evidence of recent geological activity.",
                                     "The moon's surface shows little evidence of recent geological activity.")
    # a quantifier in a part the sentence does not restate limits nothing it says
    assert _ok("Battery storage capacity on the grid grew from 1.1 GW in 2020 to 6.4 GW in 2024.",
               "Battery storage capacity on the grid grew from 1.1 GW in 2020 to 6.4 GW in 2024, with most new "
               "projects located in the south-west.")
    assert _ok("A little rain fell overnight.", "A little rain fell overnight in the valley.")


def test_a_change_is_bound_to_the_verb_before_it_past_a_place() -> None:
    g = check_grounding("Ticket prices on the northern line rose more than inflation over the decade.",
                        ["Ticket prices on the northern line rose less than inflation over the decade."])
    assert not g.ok and g.category == "comparative"
    assert _ok("Ticket prices on the northern line rose less than inflation over the decade.",
               "Over the decade, ticket prices on the northern line rose less than inflation.")


def test_a_directional_word_in_the_quotes_own_phrase_names_a_thing() -> None:
    quote = "In patients over 75, the drug increased the risk of falls."
    assert _ok("Among patients over 75, the drug raised the risk of falls.", quote)
    g = check_grounding("Among patients over 75, the drug lowered the risk of falls.", [quote])
    assert not g.ok and g.category == "comparative"


def test_a_condition_stated_as_a_fact_is_refused() -> None:
    quote = "If the cache is cold, reads are slow."
    g = check_grounding("The cache is cold and reads are slow.", [quote])
    assert not g.ok and g.category == "scope"
    assert _ok("Reads are slow when the cache is cold.", quote)
    assert _ok("Switching off the retrieval component dropped accuracy from 71% to 48%.",
               "When the retrieval component was disabled, accuracy fell from 71% to 48%.")


@pytest.mark.parametrize(("sentence", "quote"), [
    ("The new alloy is denser than titanium.", "The new alloy is less dense than titanium."),
    ("The frame was less stiff in lateral tests.", "The frame was stiffer in lateral tests."),
    ("Unemployment edged down slightly in the second quarter.", "Unemployment rose slightly in the second quarter."),
    ("The smaller model trailed the larger one on the benchmark.",
     "The smaller model outperformed the larger one on the benchmark."),
    ("Since its launch, the index fund has consistently underperformed its benchmark.",
     "The index fund has consistently outperformed its benchmark since launch."),
    ("Analysts say the stock is undervalued.", "Analysts say the stock is overvalued."),
])
def test_comparisons_said_with_other_words_turned(sentence: str, quote: str) -> None:
    g = check_grounding(sentence, [quote])
    assert not g.ok and g.category == "comparative"


def test_comparisons_said_with_other_words_kept() -> None:
    assert _ok("Operating system threads use more memory per task than Go's goroutines.",
               "Go's goroutines use less memory per task than operating system threads.")
    assert _ok("The frame was more stiff in lateral tests than its predecessor.",
               "The frame was stiffer in lateral tests than its predecessor.")
    assert _ok("Unemployment ticked up slightly in the second quarter.", "Unemployment rose slightly in the second quarter.")
    g = check_grounding("Frequent showers are expected in the north.", ["Occasional showers are expected in the north."])
    assert not g.ok and g.category == "quantifier"


def test_without_manual_intervention_is_automatically() -> None:
    quote = "The index is rebuilt automatically whenever more than 20% of rows change."
    assert _ok("Once over a fifth of the rows have been modified, the index gets rebuilt without manual intervention.",
               quote)
    g = check_grounding("The index is not rebuilt automatically when rows change.",
                        ["The index is rebuilt without manual intervention when rows change."])
    assert not g.ok and g.category == "negation"


def test_cannot_without_is_a_thing_needed() -> None:
    quote = "Once two-factor authentication is enabled, a code from the user's registered device is required to log in."
    assert _ok("Users who enable two-factor authentication cannot log in without a code from their registered device.",
               quote)
    g = check_grounding("Users who enable two-factor authentication can log in without a code from their registered "
                        "device.", [quote])
    assert not g.ok and g.category == "negation"


def test_minimum_and_maximum_name_things_and_a_compound_ending_in_a_change_names_one() -> None:
    assert _ok("The minimum wage increased to €12.41 an hour in January.",
               "The statutory minimum wage rose to €12.41 per hour in January, up from €12.00.")
    g = check_grounding("The maximum dose is 40 mg.", ["The minimum dose is 40 mg."])
    assert not g.ok and g.category == "comparative"
    g = check_grounding("Garbage collection removes use-before-free errors.",
                        ["Garbage collection removes use-after-free errors."])
    assert not g.ok


def test_a_figure_above_or_below_a_thing_compares_with_it() -> None:
    quote = "March sea-ice extent in the Barents Sea was 40% below the 1981-2010 average."
    assert _ok("Sea ice in the Barents Sea covered 40 percent less area in March than the 1981-2010 average.", quote)
    g = check_grounding("Sea ice in the Barents Sea covered 40 percent more area in March than the 1981-2010 average.",
                        [quote])
    assert not g.ok and g.category == "comparative"


def test_down_from_a_figure_is_read_against_the_part_not_its_whole() -> None:
    quote = "The survey recorded breeding pairs at only four of the 23 sites, compared with eleven sites in 1998."
    assert _ok("Breeding pairs were found at just four of 23 sites, down from eleven sites in 1998.", quote)
    assert not _ok("Breeding pairs were found at four of 23 sites, up from eleven sites in 1998.", quote)


def test_only_restates_a_restriction_or_not_until() -> None:
    assert _ok("Only adults aged 18 to 65 could join the study.", "Enrolment was restricted to adults aged 18 to 65.")
    assert _ok("The west towers were only finished in 1345.", "The west towers were not completed until 1345.")
    g = check_grounding("Only adults aged 18 to 65 could join the study.", ["Adults aged 18 to 65 joined the study."])
    assert not g.ok and g.category == "quantifier"


def test_expected_to_hedges_and_consistent_with_is_no_cause() -> None:
    assert _refused_as("modality", "The goalkeeper will return from injury before the cup final.",
                                   "The goalkeeper is expected to return from injury before the cup final.")
    assert _refused_as("modality", "Loss of sea ice is the cause of the bears' declining body condition.",
                                   "Loss of sea ice is thought to be a factor in the bears' declining body condition.")
    assert _refused_as("modality", "Elevated nitrate levels in the streams are caused by runoff from cornfields.",
                                   "Elevated nitrate levels in the streams are consistent with runoff from cornfields.")
    # ("the projected cost" keeps the quote's hedge; "has climbed to" would add a rise)
    assert _ok("The projected cost of the mission now stands at as much as $11 billion.",
               "The mission is now projected to cost up to $11 billion.")
    assert _ok("Sales were lower than expected in March.", "Sales were lower than expected in March.")


def test_may_is_leave_where_its_quote_says_must() -> None:
    g = check_grounding("Tenants may give two months' notice before terminating the lease.",
                        ["Tenants must give two months' notice before terminating the lease."])
    assert not g.ok and g.category == "modality"
    assert _ok("Tenants are required to give two months' notice before terminating the lease.",
               "Tenants must give two months' notice before terminating the lease.")


def test_anticipated_and_believe_hedge_and_a_hedged_quote_is_no_plain_fact() -> None:
    assert _ok("The comet's perihelion is anticipated toward the end of November.",
               "The comet is expected to make its closest approach to the Sun in late November.")
    assert _ok("Scientists believe an ocean of liquid water lies under the icy crust of Europa.",
               "Europa is thought to harbour a liquid water ocean beneath its icy crust.")
    assert _refused_as("modality", "An ocean of liquid water lies under the icy crust of Europa.",
                       "Scientists believe an ocean of liquid water lies under the icy crust of Europa.")


def test_reacting_with_holds_both_ways() -> None:
    assert _ok("Sodium and water react vigorously, forming sodium hydroxide.",
               "Sodium reacts vigorously with water, producing sodium hydroxide.")


def test_a_linking_opening_is_no_condition() -> None:
    assert _ok("The library reads CSV files larger than memory.",
               "In addition, the library reads CSV files larger than memory.")
    assert _refused_as("scope", "The library reads CSV files larger than memory.",
                       "In streaming mode, the library reads CSV files larger than memory.")


def test_quarters_halves_and_two_letter_acronyms_are_spelled_out_in_the_quote() -> None:
    assert _ok("In Q2, exports to Asia were roughly unchanged, whereas those to the EU dropped 12 percent.",
               "Exports to the EU fell by 12% in the second quarter, while exports to Asia were broadly flat.")
    assert not _ok("In Q3, exports to the EU dropped 12 percent.", "Exports to the EU fell by 12% in the second quarter.")
    assert _ok("Few of the teachers surveyed had been trained in AI tools.",
               "Few of the surveyed teachers had received training in artificial intelligence tools.")


def test_a_part_after_a_comma_of_words_no_quote_has_is_added_matter() -> None:
    g = check_grounding("The city installed 300 new EV charging points last year, most of them on residential streets.",
                        ["The city installed 300 new electric vehicle charging points last year."])
    assert not g.ok and g.category == "terms" and "residential streets" in (g.reason or "")
    # an attribution, or a part whose figure is checked as a figure, is no added matter
    assert _ok("Soil organic carbon increased in plots managed with cover crops, the researchers found.",
               "Soil organic carbon increased in plots managed with cover crops.")


def test_those_infected_participants_and_the_root_cause_point_back() -> None:
    from shared.verification.anaphora import anaphoric

    assert anaphoric("Most of those infected had not been vaccinated.")
    assert anaphoric("Participants on the new drug lowered their HbA1c by 1.1 percentage points.")
    assert anaphoric("The root cause was an expired TLS certificate.")
    assert not anaphoric("Each of these mechanisms requires a system call.")
    assert not anaphoric("The kernel was rebuilt.")
    # "it" after a time that opens the quote is its subject, named before; not a dummy "it is"
    assert anaphoric("Last year it sold 2.1 million tickets.")
    assert anaphoric("In 2019 it merged with its largest rival.")
    assert not anaphoric("In 2019 it was still unclear whether the merger would close.")
    assert _ok("The fair, held in Leeds each May, sold 40,000 tickets last year.",
               "The fair takes place every May in Leeds.", "Last year it sold 40,000 tickets.")
    assert _ok("Last year the region recorded 842 measles cases, most of them in people who had not been vaccinated.",
               "Measles cases in the region rose to 842 last year.", "Most of those infected had not been vaccinated.")


def test_advised_against_is_not_recommended() -> None:
    quote = "The drug may cause drowsiness in some patients, so driving is not recommended during the first week."
    assert _ok("Because some patients might become drowsy, they are advised against driving in the first week.", quote)
    assert _refused_as("negation", "Because some patients might become drowsy, they are advised to drive in the "
                       "first week.", quote)


def test_above_after_a_figure_and_its_unit_compares_by_that_figure() -> None:
    quote = "Global average surface temperature in 2023 was about 1.45°C above the pre-industrial baseline."
    assert _ok("In 2023 the mean surface temperature sat roughly 1.45 degrees Celsius higher than pre-industrial "
               "levels.", quote)
    assert _refused_as("comparative", "In 2023 the mean surface temperature sat roughly 1.45 degrees Celsius lower "
                       "than pre-industrial levels.", quote)
    # a place below a surface is no comparison
    assert _ok("The quake occurred 10 km below the surface about 40 km south of the city.",
               "The earthquake struck at a depth of 10 kilometres, about 40 kilometres south of the city.")


def test_each_restates_a_bare_plural_stated_as_a_rule_in_the_present() -> None:
    assert _ok("Each read is handled by the replica nearest the client.",
               "Reads are served from whichever replica is closest to the client.")
    # a past finding of a bare plural is no rule of every one
    assert _refused_as("quantifier", "Each patient improved within a week.", "Patients improved within a week.")
    assert _refused_as("quantifier", "Each read is handled by the replica nearest the client.",
                       "Some reads are served from whichever replica is closest to the client.")


def test_whichever_before_a_superlative_names_one_and_a_report_is_a_setting() -> None:
    assert _ok("When the cache reaches 10,000 items, it discards whichever entry was used least recently.",
               "The cache evicts the least recently used entry once it holds 10,000 items.")
    assert _refused_as("scope", "The cache evicts whichever entry it likes.",
                       "The cache evicts an entry when it is full.")
    assert _ok("Water leakage from the municipal network amounted to 23 percent of supplied volume.",
               "In its annual report, the authority stated that water leakage from the municipal network amounted "
               "to 23 percent of supplied volume.")


def test_advice_is_no_duty() -> None:
    quote = "Drivers are advised to carry snow chains on the pass between November and April."
    assert _refused_as("modality", "Drivers must carry snow chains on the pass between November and April.", quote)
    assert _ok("Drivers are advised to carry snow chains on the pass between November and April.", quote)


def test_an_approximate_figure_is_no_more_precise_than_it_is_near() -> None:
    quote = "The outbreak infected 1,340 people across three provinces."
    assert _ok("The outbreak infected about 1,300 people across three provinces.", quote)
    assert _refused_as("number", "The outbreak infected some 1,430 people across three provinces.", quote)


def test_a_percentage_is_no_bare_count() -> None:
    assert _refused_as("number", "Some 30% of the students tested failed.", "Of the 200 students tested, 30 failed.")
    assert _ok("About 15% of the 200 students tested failed.", "Of the 200 students tested, 30 failed.")


def test_a_compound_that_narrows_a_condition_is_not_dropped() -> None:
    quote = "Among first-year students at the university, 62 percent reported feeling lonely at least once a week."
    assert _refused_as("scope", "Sixty-two percent of students at the university reported feeling lonely at least "
                       "once a week.", quote)
    assert _ok("Among first-year students at the university, 62% said they felt lonely at least once a week.", quote)


def test_a_strong_word_the_quote_says_in_another_of_its_clauses_is_no_certainty_added() -> None:
    quote = ("Secondary indexes are updated synchronously with each write, which increases write latency "
             "but guarantees that reads through the index are consistent.")
    assert _ok("Because secondary indexes are updated synchronously on every write, index reads are "
               "guaranteed to be consistent, at the price of higher write latency.", quote)
    # The quote's guarantee is of something else, or the quote hedges: certainty added.
    assert _refused_as("modality", "Because the index is updated on every write, reads are guaranteed to be consistent.",
                       "The index is updated on every write, so reads are consistent; the vendor guarantees uptime.")
    assert _refused_as("modality", "Because the index is updated on every write, reads are guaranteed to be consistent.",
                       "The index is updated on every write, which may guarantee that reads are consistent.")


def test_a_negated_predicate_after_and_belongs_to_that_predicate_only() -> None:
    quote = "Construction of the cathedral began in 1248 and was not completed until 1880."
    assert _ok("Work on the cathedral started in 1248, and it was only finished in 1880.", quote)
    # A sentence that restates the negated predicate still answers for its negation.
    assert _refused_as("negation", "The drug was approved in 2019, and it was marketed in 2020.",
                       "The drug was approved in 2019 and was not marketed in 2020.")


def test_a_doing_the_quote_says_stops_is_not_said_to_go_on() -> None:
    quote = ("If the health check fails three consecutive times, the load balancer marks the instance as "
             "unhealthy and stops routing traffic to it.")
    condition = "If the health check fails three consecutive times, the load balancer marks the instance as unhealthy"
    assert _ok(f"{condition} and no longer sends it traffic.", quote)
    assert _ok(f"{condition} and stops sending it traffic.", quote)
    assert _refused_as("negation", f"{condition} and still sends it traffic.", quote)
    assert _refused_as("negation", "The company produced cars.", "The company stopped producing cars in 2010.")


def test_an_expectation_hedges_what_is_expected_and_certain_to_is_strong() -> None:
    quote = "Analysts expect the merger to be completed by the end of the year."
    assert _ok("Analysts expect the merger to close by the end of the year.", quote)
    assert _refused_as("modality", "The merger will be completed by the end of the year.", quote)
    assert _refused_as("modality", "The merger is certain to be completed by the end of the year.",
                       "The merger will be completed by the end of the year.")
    # "up to" is a bound, not an infinitive: the expectation hedges nothing by it.
    assert _refused_as("modality", "The ministry expects that hydrogen will supply up to 10 percent of heat demand.",
                       "The ministry expects that hydrogen could supply up to 10 percent of heat demand.")


def test_a_trailing_with_phrase_or_an_opening_purpose_of_new_words_is_added_matter() -> None:
    assert _refused_as("terms", "The database supports point-in-time recovery with one-second granularity.",
                       "The database supports point-in-time recovery.")
    assert _refused_as("terms", "To conserve water, farmers in the valley switched from cotton to sorghum.",
                       "Farmers in the valley switched from cotton to sorghum.")
    # A verb's complement is no added detail, nor a purpose reworded from the quote's own.
    assert _ok("About 25 percent of the country's adults have been diagnosed with high blood pressure.",
               "Roughly one in four adults in the country has received a diagnosis of hypertension, "
               "according to the national health survey.")
    assert _ok("To celebrate its centenary, the orchestra commissioned the piece.",
               "The orchestra commissioned the piece to mark its 100th anniversary.")
