"""Set phrases read as the quote's plain wording, only where a quote uses it."""

from __future__ import annotations

import pytest

from shared.verification.grounding import check_grounding
from shared.verification.idioms import plain_wording


@pytest.mark.parametrize(("sentence", "quote"), [
    ("Unless configured otherwise, the agent sends logs every 10 seconds.",
     "By default, the agent sends logs every 10 seconds."),
    ("Out of the box, the editor saves files as UTF-8.", "By default, the editor saves files as UTF-8."),
    ("The jobless rate in the region held steady at 4.1% in June.",
     "Unemployment in the region remained unchanged at 4.1% in June."),
    ("The planet may be seen without optical aid in early May.", "The planet may be seen with the naked eye in early May."),
    ("Observers can spot the nebula without any optical aid.", "The nebula is visible to the naked eye."),
    ("Preliminary figures indicate that, adjusted for inflation, wages grew 1.2% in the third quarter.",
     "Wages rose by 1.2% in real terms in the third quarter, according to preliminary estimates."),
    ("The tablets are best taken without food.", "The tablets are best taken on an empty stomach."),
])
def test_a_set_phrase_restates_the_quotes_wording(sentence: str, quote: str) -> None:
    g = check_grounding(sentence, [quote])
    assert g.ok and g.level == "supported", g


def test_a_phrase_is_left_as_written_when_no_quote_uses_the_plain_wording() -> None:
    sentence = "Unless configured otherwise, the agent sends logs every 10 seconds."
    assert plain_wording(sentence, ["The agent sends logs every 10 seconds."]) == sentence
    assert plain_wording("Out of the box it works.", ["By default it works."]) == "By default it works."


def test_the_default_kept_through_the_phrase_is_still_checked() -> None:
    # the phrase reads as "by default": a sentence that turns what the default is still fails
    g = check_grounding("Unless configured otherwise, the agent never sends logs.",
                        ["By default, the agent sends logs every 10 seconds."])
    assert not g.ok, g


def test_a_set_phrase_of_frequency_restates_the_quotes_adverb() -> None:
    quote = "Stir the sauce occasionally for about 20 minutes."
    assert check_grounding("Stir the sauce every now and then for about 20 minutes.", [quote]).ok
    assert check_grounding("Stir the sauce from time to time for about 20 minutes.", [quote]).ok
    g = check_grounding("Stir the sauce every now and then for about 20 minutes.",
                        ["Stir the sauce constantly for about 20 minutes."])
    assert not g.ok, g


def test_did_not_change_restates_the_quotes_unchanged() -> None:
    quote = "Across the 300 households surveyed, water use stayed flat over the two-year period."
    assert check_grounding("Water use did not change over the two years for the 300 households surveyed.", [quote]).ok
    g = check_grounding("Water use did not change over the two years for the 300 households surveyed.",
                        ["Across the 300 households surveyed, water use rose over the two-year period."])
    assert not g.ok, g
