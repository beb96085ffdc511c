"""Synonyms from WordNet: a faithful paraphrase that uses them is kept; without the
WordNet files, no word has synonyms and the checks still run."""

from __future__ import annotations

import pytest

from shared.verification import synonyms
from shared.verification.grounding import check_grounding

needs_wordnet = pytest.mark.skipif(not synonyms.available(),
                                   reason="WordNet's files are not installed (Debian's wordnet-base)")


@needs_wordnet
def test_a_words_common_senses_give_its_synonyms() -> None:
    assert {"climb"} <= synonyms.synonyms("rise")
    assert {"approximately", "about"} <= synonyms.synonyms("roughly")
    assert "rebel" not in synonyms.synonyms("rise")  # a rare sense gives none
    assert synonyms.synonyms("no-such-word") == frozenset()


@needs_wordnet
def test_a_paraphrase_in_synonyms_is_kept_and_a_turned_one_is_not() -> None:
    quote = "Global mean sea level rose by about 20 cm between 1901 and 2018."
    assert check_grounding("Worldwide average sea level climbed roughly 20 cm between 1901 and 2018.", [quote]).ok
    g = check_grounding("Worldwide average sea level fell roughly 20 cm between 1901 and 2018.", [quote])
    assert not g.ok and g.category == "comparative"


def test_without_wordnet_no_word_has_synonyms(tmp_path, monkeypatch, caplog) -> None:
    monkeypatch.setenv("WNSEARCHDIR", str(tmp_path))
    synonyms._index.cache_clear()
    synonyms.synonyms.cache_clear()
    try:
        assert not synonyms.available()
        assert synonyms.synonyms("rise") == frozenset()
        assert "WordNet not readable" in caplog.text
    finally:
        monkeypatch.delenv("WNSEARCHDIR")
        synonyms._index.cache_clear()
        synonyms.synonyms.cache_clear()


@needs_wordnet
def test_a_thing_may_be_called_by_a_broader_name() -> None:
    assert "bird" in synonyms.broader("eagle")
    assert check_grounding("By 2023 a total of 25 birds had been released on the island.",
                           ["By 2023, a total of 25 eagles had been released on the island."]).ok
    # a broader name is no licence for a new phrase
    assert not check_grounding("By 2023 a total of 25 birds of prey from Norway had been released on the island.",
                               ["By 2023, a total of 25 eagles had been released on the island."]).ok
