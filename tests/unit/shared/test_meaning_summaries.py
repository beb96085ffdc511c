"""Summaries of several quotes, kept; merges that look like them, refused."""

from __future__ import annotations

from shared.verification.grounding import check_grounding


def _ok(sentence: str, *quotes: str) -> bool:
    return check_grounding(sentence, list(quotes)).ok


def test_an_opening_clause_may_rest_on_a_quote_of_its_own() -> None:
    landfall = "The storm made landfall near the port city on 14 October with sustained winds of 185 km/h."
    outage = "More than 90,000 households lost power in the following 24 hours, the grid operator said."
    assert _ok("After the storm came ashore near the port city on 14 October with sustained winds of 185 km/h, "
               "over 90,000 households lost power within 24 hours.", landfall, outage)
    # the clause it opens is still read whole: its subject is its quote's
    g = check_grounding("After the storm came ashore near the port city on 14 October, the grid operator lost power "
                        "within 24 hours.", [landfall, outage])
    assert not g.ok


def test_an_opening_participle_is_said_of_the_clauses_subject() -> None:
    kepler = "The Kepler mission discovered more than 2,600 confirmed exoplanets."
    g = check_grounding("Launched in 2018, the Kepler mission discovered more than 2,600 confirmed exoplanets.",
                        [kepler, "TESS, launched in 2018, surveys nearly the entire sky."])
    assert not g.ok and g.category == "merge"
    assert _ok("Launched in 2009, the Kepler mission discovered more than 2,600 confirmed exoplanets.",
               kepler, "The Kepler mission was launched in 2009.")

    # a time alone may open the clause from a quote that points back to its subject
    reform = "The reform raised the minimum school-leaving age to 16."
    assert _ok("From September 1972, the reform set 16 as the minimum age at which pupils could leave school.",
               reform, "It took effect in September 1972.")
    g = check_grounding("From September 1972, the reform raised the minimum school-leaving age to 16.",
                        [reform, "The curriculum change took effect in September 1972."])
    assert not g.ok


def test_an_opening_setting_is_not_a_clause_of_its_own() -> None:
    # "In Parkinson's disease" scopes the clause: it may not come from another quote
    g = check_grounding(
        "In Parkinson's disease, medium spiny neurons of the striatum are lost first, producing the involuntary "
        "jerking movements known as chorea.",
        ["The dopamine-producing neurons of the substantia nigra degenerate progressively in Parkinson's disease, "
         "leading to tremor and slowed movement.",
         "In Huntington's disease, medium spiny neurons of the striatum are lost first, producing involuntary jerking "
         "movements known as chorea."])
    assert not g.ok


def test_an_opening_clause_needs_a_clause_with_a_subject_after_it() -> None:
    g = check_grounding("When a request establishes a TCP connection, often negotiates TLS, authenticates, and sets "
                        "session parameters.",
                        ["When a request needs the database, it borrows a connection from the pool, runs its queries "
                         "and returns the connection.",
                         "The client establishes a TCP connection, often negotiates TLS, authenticates, and sets "
                         "session parameters."])
    assert not g.ok


def test_an_apposition_may_add_what_another_quote_says_of_what_the_clause_names() -> None:
    cases = "Measles cases in the region rose to 1,240 in 2023, the highest annual count in a decade."
    cause = "Health officials attributed the rise to lower vaccination coverage during the pandemic."
    assert _ok("Measles cases in the region climbed to 1,240 in 2023, a rise that health officials attributed to "
               "lower vaccination coverage during the pandemic.", cases, cause)
    # what it adds is said of the clause's subject, and the other quote says it of another setting
    g = check_grounding("The northern region reached 87 percent 5G population coverage by June, with median download "
                        "speeds of 310 Mbit/s.",
                        ["The northern region achieved 5G population coverage of 87 percent by June, driven largely "
                         "by low-band spectrum.",
                         "In the southern region, coverage reached 64 percent, but median download speeds were higher "
                         "at 310 Mbit/s thanks to mid-band deployments."])
    assert not g.ok


def test_a_clause_after_a_comma_is_no_apposition() -> None:
    # ", a thread acquires a mutex …" has its own verb: the head "Modern mutexes case" is no clause
    g = check_grounding("Modern mutexes case, a thread acquires a mutex with a single atomic instruction and never "
                        "enters the kernel.",
                        ["Modern mutexes are built on atomic instructions such as compare-and-swap.",
                         "In the uncontended case, a thread acquires a mutex with a single atomic instruction and "
                         "never enters the kernel."])
    assert not g.ok


def test_a_relative_clause_may_add_what_another_quote_says_of_its_noun() -> None:
    assert _ok("On 5 December 2022, the laser delivered 2.05 megajoules of energy to a fuel target that released 3.15 "
               "megajoules of fusion energy.",
               "On 5 December 2022, the laser delivered 2.05 megajoules of energy to a fuel target.",
               "The target released 3.15 megajoules of fusion energy.")
    # not when the other quote says it of something else
    g = check_grounding("On 5 December 2022, the laser delivered 2.05 megajoules of energy to a fuel target that "
                        "released 3.15 megajoules of fusion energy.",
                        ["On 5 December 2022, the laser delivered 2.05 megajoules of energy to a fuel target.",
                         "The reactor released 3.15 megajoules of fusion energy."])
    assert not g.ok


def test_a_quote_that_points_back_inside_speaks_of_what_another_quote_named() -> None:
    assert _ok("The training cluster suffered 419 unexpected interruptions over the 54-day run, about 78% of them "
               "attributed to confirmed or suspected hardware issues, with faulty GPUs the largest single category.",
               "Over the 54-day run, the training cluster experienced 419 unexpected interruptions.",
               "About 78% of these interruptions were attributed to confirmed or suspected hardware issues, with "
               "faulty GPUs the single largest category.")
    assert _ok("The drought began in spring 2021, a year in which maize yields fell 30 percent and the government "
               "declared a state of emergency in August.",
               "The drought in the eastern provinces began in the spring of 2021.",
               "Maize yields fell 30 percent that year, according to the agriculture ministry.",
               "The government declared a state of emergency in the affected provinces in August 2021.")
    # "it" inside a quote is as often the quote's own subject: no pointing back
    g = check_grounding("Carl Hewitt and his colleagues can send a finite number of messages to other actors whose "
                        "addresses it knows.",
                        ["Carl Hewitt and his colleagues described the model in 1973.",
                         "The actor can send a finite number of messages to other actors whose addresses it knows."])
    assert not g.ok and g.category == "merge"


def test_he_or_she_a_little_way_into_a_quote_points_back_to_a_person_named_before() -> None:
    assert _ok("Born in Cluj in 1874 and trained in medicine in Vienna, Mirela Dobos became, in 1903, the first woman "
               "in the kingdom licensed to practise surgery.",
               "Mirela Dobos was born in Cluj in 1874.", "She studied medicine in Vienna.",
               "In 1903 she became the first woman licensed to practise surgery in the kingdom.")
    assert _ok("Marguerite Duval, appointed the observatory's director in 1921, oversaw the cataloguing of more than "
               "9,000 variable stars before retiring in 1946, when her former student Henri Lacaze succeeded her.",
               "Marguerite Duval was appointed director of the observatory in 1921, the first woman to hold the post.",
               "Under Duval, the observatory catalogued more than 9,000 variable stars using its new photographic "
               "plates.",
               "She retired in 1946 and was succeeded by her former student Henri Lacaze.")
    # "Her label-mate's album" is the label-mate's, not hers: no pointing back to the singer
    g = check_grounding("The label-mate's second album sold 1.3 million copies in its first US week and topped the "
                        "charts in 14 countries.",
                        ["The singer's debut album sold 1.3 million copies in the US in its first week, the biggest "
                         "opening for a debut since 2015.",
                         "Her label-mate's second album topped the charts in 14 countries but sold 310,000 copies in "
                         "its first week in the US."])
    assert not g.ok


def test_two_facts_joined_by_while_or_even_as_each_rest_on_their_quote() -> None:
    quotes = ["The national unemployment rate fell to 5.1%.", "Youth unemployment was unchanged at 14%."]
    assert check_grounding("The unemployment rate dropped to 5.1 percent while youth unemployment stayed at 14 percent.",
                           quotes).ok
    assert check_grounding("The unemployment rate dropped to 5.1 percent even as youth unemployment stayed at 14 percent.",
                           quotes).ok
    g = check_grounding("The unemployment rate dropped to 14 percent while youth unemployment stayed at 5.1 percent.",
                        quotes)
    assert not g.ok


def test_a_later_quote_about_a_part_of_the_story_lends_its_words() -> None:
    quotes = ["The county council bought the old mill from a private trust in May.",
              "The price was reported to be £1.4 million."]
    assert _ok("The county council bought the old mill from a private trust in May for a reported £1.4 million.",
               *quotes)
    # a doer of its own is no part of the first quote's story
    doers = ["The county council bought the old mill in May.", "The trust reported a deficit of £1.4 million."]
    g = check_grounding("The county council bought the old mill in May and reported a deficit of £1.4 million.", doers)
    assert not g.ok, g
