"""Quotes verify against the canonical text (at their locator, relocated, or
near-verbatim), and a sentence is grounded only in what its quotes say."""

from __future__ import annotations

import pytest

from shared.verification.clauses import salient_tokens
from shared.verification.grounding import check_grounding, verify_quote
from shared.research.locators import format_locator, parse_locator
from shared.settings import StageSettings
from shared.research.text import canonicalize

CANON = canonicalize(
    "Lighthouses were automated during the twentieth century. "
    "The last keeper left Fair Isle South in 1998, after 106 years of service. "
    "Fresnel lenses concentrate the light of a small lamp into a beam visible 20 nautical miles away. "
    "Fog signals used compressed air to sound horns."
)
SENTENCE = "The last keeper left Fair Isle South in 1998, after 106 years of service."


def _at(text: str) -> str:
    start = CANON.index(text)
    return format_locator(start, start + len(text))


# -- verify_quote ----------------------------------------------------------------------


def test_exact_quote_at_its_locator_verifies() -> None:
    check = verify_quote(CANON, SENTENCE, _at(SENTENCE))
    assert check.ok and check.how == "locator"
    assert check.locator == _at(SENTENCE) and check.text == SENTENCE


def test_exact_quote_with_a_wrong_locator_is_relocated() -> None:
    check = verify_quote(CANON, SENTENCE, "char:0-10")
    assert check.ok and check.how == "exact"
    _, start, end = parse_locator(check.locator or "")
    assert CANON[start:end] == SENTENCE == check.text


def test_respaced_quote_with_typographic_marks_is_relocated_to_the_canonical_text() -> None:
    text = canonicalize("He said “the lamp — once lit — burned all night”, and left.")
    check = verify_quote(text, 'the lamp  -  once lit - burned\nall night', None)
    assert check.ok and check.how == "normalized"
    _, start, end = parse_locator(check.locator or "")
    assert text[start:end] == check.text == "the lamp — once lit — burned all night"


def test_near_verbatim_quote_is_accepted_with_the_canonical_passage() -> None:
    # One word dropped from a 14-token sentence: Jaccard 13/14.
    quote = "The last keeper left Fair Isle South in 1998, after 106 years service."
    check = verify_quote(CANON, quote, None)
    assert check.ok and check.how == "near_verbatim"
    assert check.jaccard is not None and check.jaccard >= 0.8
    _, start, end = parse_locator(check.locator or "")
    assert CANON[start:end] == check.text
    assert "106 years of service" in check.text  # the source's words, not the quote's


def test_paraphrase_beyond_the_jaccard_threshold_is_rejected() -> None:
    quote = "The final lighthouse keeper departed from Fair Isle in 1998 after more than a century."
    check = verify_quote(CANON, quote, None)
    assert not check.ok and check.locator is None
    assert check.reason == "quote not found in the source (only 60% of its words occur in it)"
    # Every word is in the source, but no passage holds them together.
    check = verify_quote(CANON, "The last keeper used compressed air to sound horns.", None)
    assert not check.ok and check.jaccard is not None and check.jaccard < 0.8
    assert "closest passage has token Jaccard" in (check.reason or "")


def test_threshold_is_a_parameter() -> None:
    quote = "The last keeper left Fair Isle in 1998, after 106 years of duty."
    assert not verify_quote(CANON, quote, None, min_jaccard=0.95).ok
    assert verify_quote(CANON, quote, None, min_jaccard=0.6).ok


def test_invented_quote_and_empty_quote_fail() -> None:
    assert not verify_quote(CANON, "Keepers were paid in gold coins by the king.", None).ok
    assert verify_quote(CANON, "   ", "char:0-3").reason == "empty quote"


def test_page_locator_must_name_the_right_page() -> None:
    pages = [0, CANON.index("Fresnel")]  # page 2 starts at "Fresnel"
    start = CANON.index(SENTENCE)
    right = f"page:1:char:{start}-{start + len(SENTENCE)}"
    wrong = f"page:2:char:{start}-{start + len(SENTENCE)}"
    assert verify_quote(CANON, SENTENCE, right, pages).how == "locator"
    relocated = verify_quote(CANON, SENTENCE, wrong, pages)
    assert relocated.ok and relocated.how == "exact" and relocated.locator == right


# -- check_grounding -------------------------------------------------------------------


def test_a_restatement_of_its_quote_is_grounded() -> None:
    g = check_grounding("The last keeper left Fair Isle South in 1998.", [SENTENCE])
    assert g.ok and g.support == 1.0 and g.reason is None


def test_a_number_absent_from_the_quotes_is_caught() -> None:
    g = check_grounding("The last keeper left Fair Isle South after 42 years of service.", [SENTENCE])
    assert not g.ok and g.category == "number" and g.reason == "the figure 42 years is not in its quotes"
    assert g.support >= 0.6  # every word is there: only the number gives it away


def test_numbers_compare_by_value() -> None:
    quote = "The tower cost 1,200 pounds and stood three miles offshore, 3.50 metres wide."
    assert check_grounding("The tower cost 1200 pounds and stood 3 miles offshore.", [quote]).ok
    assert check_grounding("The tower was 3.5 metres wide.", [quote]).ok
    assert check_grounding("The tower stood four miles offshore.", [quote]).reason == "the figure four miles is not in its quotes"


def test_dates_and_years_must_appear_in_the_quotes() -> None:
    g = check_grounding("The last keeper left Fair Isle South in 1989.", [SENTENCE])
    assert not g.ok and "1989" in (g.reason or "")
    quote = "The station was automated on 31 March 1998."
    assert check_grounding("The station was automated on 31 March 1998.", [quote]).ok
    g = check_grounding("The station was automated on 31 May 1998.", [quote])
    assert not g.ok and g.category == "name" and g.reason == "the name May is not in its quotes"


def test_a_proper_name_absent_from_the_quotes_is_caught() -> None:
    g = check_grounding("The last keeper left Fair Isle North in 1998.", [SENTENCE])
    assert not g.ok and g.category == "name" and g.reason == "the name North is not in its quotes"
    g = check_grounding("The last keeper, trained by NASA, left Fair Isle South in 1998.", [SENTENCE])
    assert not g.ok and "NASA" in (g.reason or "")


def test_capitalized_sentence_start_is_not_a_name() -> None:
    assert salient_tokens("Automated lights replaced the keepers of Fair Isle. Keepers left.") == ["Fair", "Isle"]
    assert salient_tokens("the mRNA and the UK") == ["mRNA", "UK"]
    # unless it is no word of the language: then it is a name wherever it stands
    assert salient_tokens("Orun has the denser atmosphere. Because it is small, Tessaly cools fast.") == \
        ["Orun", "Tessaly"]
    g = check_grounding("Orun has the denser atmosphere.", ["Tessaly has the denser atmosphere."])
    assert not g.ok and g.reason == "the name Orun is not in its quotes"


def test_low_lexical_support_is_rejected_with_the_missing_terms() -> None:
    g = check_grounding("Automation cut maintenance budgets and improved sailor safety statistics.", [SENTENCE], min_support=0.6)
    assert not g.ok and g.support < 0.6
    assert "needs 60%" in (g.reason or "") and "budget" in (g.reason or "")


def test_support_threshold_is_a_parameter() -> None:
    sentence = "The last keeper left Fair Isle South in 1998 for retirement."
    loose = check_grounding(sentence, [SENTENCE], min_support=0.5)
    strict = check_grounding(sentence, [SENTENCE], min_support=0.95)
    assert loose.ok and not strict.ok and loose.support == strict.support


def test_no_quotes_no_grounding() -> None:
    assert check_grounding("Lighthouses were automated.", []).reason == "no quotes to ground it in"


@pytest.mark.parametrize(("var", "field", "value"), [
    ("GROUNDING_QUOTE_MIN_JACCARD", "grounding_quote_min_jaccard", 0.9),
    ("GROUNDING_MIN_SUPPORT", "grounding_min_support", 0.7),
])
def test_thresholds_are_settings(monkeypatch: pytest.MonkeyPatch, var: str, field: str, value: float) -> None:
    assert getattr(StageSettings(), field) in (0.8, 0.5)
    monkeypatch.setenv(var, str(value))
    assert getattr(StageSettings(), field) == value
