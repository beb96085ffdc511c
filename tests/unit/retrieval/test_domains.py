from __future__ import annotations

from pathlib import Path

import pytest

from services.retrieval.domains import (
    DEFAULT_TABLE_PATH,
    classify,
    configured_table,
    load_table,
)
from shared.research.envelope import CredibilityTier as T
from shared.platform.errors import ConfigurationError


@pytest.fixture
def table():
    return load_table(DEFAULT_TABLE_PATH)


@pytest.mark.parametrize(
    ("url", "tier"),
    [
        ("https://www.cdc.gov/flu/index.html", T.PRIMARY_SOURCE),
        ("https://example.gov/", T.PRIMARY_SOURCE),
        ("https://cs.stanford.edu/people", T.PRIMARY_SOURCE),
        ("https://www.army.mil/", T.PRIMARY_SOURCE),
        ("https://www.gov.uk/guidance", T.PRIMARY_SOURCE),
        ("https://www.ox.ac.uk/", T.PRIMARY_SOURCE),
        ("https://www.nature.com/articles/s41586-020-2649-2", T.PRIMARY_SOURCE),
        ("https://www.science.org/doi/10.1126/science.abc", T.PRIMARY_SOURCE),
        ("https://www.thelancet.com/journals/lancet/article/x", T.PRIMARY_SOURCE),
        ("https://www.nejm.org/doi/full/10.1056/x", T.PRIMARY_SOURCE),
        ("https://www.bmj.com/content/1/1", T.PRIMARY_SOURCE),
        ("https://www.cell.com/cell/fulltext/x", T.PRIMARY_SOURCE),
        ("https://journals.plos.org/plosone/article?id=1", T.PRIMARY_SOURCE),
        ("https://pubmed.ncbi.nlm.nih.gov/31978945/", T.PRIMARY_SOURCE),
        ("https://www.ncbi.nlm.nih.gov/pmc/articles/PMC1/", T.PRIMARY_SOURCE),
        ("https://www.reuters.com/world/", T.AUTHORITATIVE),
        ("https://apnews.com/article/x", T.AUTHORITATIVE),
        ("https://www.bbc.co.uk/news/x", T.AUTHORITATIVE),
        ("https://www.nytimes.com/2024/01/01/x.html", T.AUTHORITATIVE),
        ("https://www.economist.com/x", T.AUTHORITATIVE),
        ("https://en.wikipedia.org/wiki/Tide", T.SECONDARY),
        ("https://www.britannica.com/science/tide", T.SECONDARY),
        ("https://someone.substack.com/p/x", T.UNVERIFIED),
        ("https://totally-unknown-site.example/", T.UNVERIFIED),
        ("https://www.infowars.com/posts/x", T.FLAGGED),
        ("https://www.naturalnews.com/x", T.FLAGGED),
    ],
)
def test_shipped_table_rules(table, url: str, tier: T) -> None:
    assert classify(url, table=table).tier is tier


def test_subdomains_match_on_whole_labels(table) -> None:
    assert classify("https://a.b.nature.com/x", table=table).matched == "nature.com"
    # "evilnature.com" is not a subdomain of nature.com.
    assert classify("https://evilnature.com/", table=table).tier is T.UNVERIFIED
    # The longest suffix wins: plato.stanford.edu is listed apart from "edu".
    plato = classify("https://plato.stanford.edu/entries/x/", table=table)
    assert (plato.tier, plato.matched) == (T.SECONDARY, "plato.stanford.edu")
    # Host case and a trailing dot do not matter.
    assert classify("https://WWW.Nature.COM./x", table=table).matched == "nature.com"


def test_authority_scores_and_defaults(table) -> None:
    assert classify("https://www.nature.com/", table=table).authority == 95
    assert classify("https://unlisted.gov/", table=table).authority == table.defaults[T.PRIMARY_SOURCE]
    unknown = classify("https://unknown.example/", table=table)
    assert unknown.authority == table.defaults[T.UNVERIFIED] and unknown.matched is None
    assert classify("https://www.infowars.com/", table=table).authority == 0
    for info in table.entries.values():
        assert 0 <= info.authority <= 100


@pytest.mark.parametrize("url", ["http://10.1.2.3/", "http://[2001:db8::1]/", "file:///etc/passwd", "not a url", ""])
def test_hosts_without_a_domain_are_unverified(table, url: str) -> None:
    assert classify(url, table=table).tier is T.UNVERIFIED


def test_replacement_table_via_setting(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    custom = tmp_path / "mine.toml"
    custom.write_text(
        '[PRIMARY_SOURCE]\nauthority = 90\ndomains = ["intranet.corp"]\n\n'
        '[FLAGGED]\nauthority = 1\ndomains = ["nature.com"]\n\n'
        "[UNVERIFIED]\nauthority = 12\n",
        encoding="utf-8",
    )
    monkeypatch.setenv("RESEARCH_DOMAIN_TABLE", str(custom))
    assert configured_table().source == str(custom)
    assert classify("https://wiki.intranet.corp/page").tier is T.PRIMARY_SOURCE
    assert classify("https://wiki.intranet.corp/page").authority == 90
    # The replacement is wholesale: nothing from the shipped table survives.
    assert classify("https://www.nature.com/").tier is T.FLAGGED
    assert classify("https://www.cdc.gov/") == classify("https://unknown.example/")
    assert classify("https://www.cdc.gov/").authority == 12

    # Editing the file takes effect without a restart.
    custom.write_text('[SECONDARY]\nauthority = 55\ndomains = ["intranet.corp"]\n', encoding="utf-8")
    assert classify("https://wiki.intranet.corp/").tier is T.SECONDARY

    monkeypatch.delenv("RESEARCH_DOMAIN_TABLE")
    assert classify("https://www.nature.com/").tier is T.PRIMARY_SOURCE


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("[PRIMARY_SOURCE\n", "domain table"),
        ("[TRUSTED]\ndomains = ['a.com']\n", "unknown tier"),
        ("[SECONDARY]\nauthority = 101\n", "0..100"),
        ("[SECONDARY.scores]\n'a.com' = -1\n", "0..100"),
        ("[SECONDARY]\ndomains = ['a.com']\n[FLAGGED]\ndomains = ['A.com']\n", "both SECONDARY and FLAGGED"),
        ("[SECONDARY]\ndomains = ['a..com']\n", "invalid domain"),
        ("[SECONDARY]\ndomain = ['a.com']\n", "unknown keys"),
    ],
)
def test_malformed_tables_are_configuration_errors(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(ConfigurationError, match=message):
        load_table(path)


def test_missing_table_is_a_configuration_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError, match="cannot read"):
        load_table(tmp_path / "absent.toml")
