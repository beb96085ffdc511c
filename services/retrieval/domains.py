"""Credibility tier and domain authority of a web source, from a replaceable data table.

The source scorer weighs a source's ``credibilityTier`` and ``domainAuthority``; both come
from ``services/retrieval/data/domains.toml`` (shipped as package data), or from the
file named by ``RESEARCH_DOMAIN_TABLE``, which replaces it wholesale (a deployment's own
judgement of which sites it trusts is policy, not code).

Matching is by domain suffix on whole labels: an entry ``nih.gov`` matches
``nih.gov`` and ``pubmed.ncbi.nlm.nih.gov`` but not ``evilnih.gov``; the longest
matching entry wins, so ``gov`` can make every government site PRIMARY_SOURCE while a
listed ``cdc.gov`` gets its own score. This needs no public-suffix list: the table's
entries *are* the suffixes we care about, and a registrable-domain library
(``tldextract``) would add a second data file to keep fresh (it fetches the suffix
list over the network unless told to use its bundled snapshot) without changing any
answer, because an entry never needs to be "the registrable domain", only a suffix.

Guarantees:

* Every URL gets an answer: a host that matches nothing (or an IP address, or a URL
  without a host) is UNVERIFIED with that tier's default authority.
* A malformed table (bad TOML, an unknown tier, an authority outside 0..100, one
  suffix in two tiers) raises :class:`~shared.platform.errors.ConfigurationError` naming the
  file and the problem, at first use, instead of classifying wrongly.
* The table is read once per (path, mtime, size): replacing the file takes effect
  without a restart.
"""

from __future__ import annotations

import ipaddress
import threading
import tomllib
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from shared.research.envelope import CredibilityTier
from shared.platform.errors import ConfigurationError

__all__ = ["DEFAULT_TABLE_PATH", "DomainInfo", "DomainTable", "classify", "configured_table", "load_table"]

DEFAULT_TABLE_PATH = Path(__file__).with_name("data") / "domains.toml"


@dataclass(frozen=True)
class DomainInfo:
    tier: CredibilityTier
    authority: int  # 0..100
    matched: str | None = None  # the table entry that decided, None for the default


@dataclass(frozen=True)
class DomainTable:
    entries: dict[str, DomainInfo]  # suffix -> info
    defaults: dict[CredibilityTier, int]  # tier -> default authority
    source: str  # where the table came from, for messages

    def classify_host(self, host: str) -> DomainInfo:
        host = host.strip().rstrip(".").lower()
        if host and not _is_ip(host):
            labels = host.split(".")
            for i in range(len(labels)):  # longest suffix first
                info = self.entries.get(".".join(labels[i:]))
                if info is not None:
                    return info
        tier = CredibilityTier.UNVERIFIED
        return DomainInfo(tier=tier, authority=self.defaults.get(tier, 30))


def _is_ip(host: str) -> bool:
    try:
        ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return False
    return True


def parse_table(data: dict[str, object], *, source: str) -> DomainTable:
    """A :class:`DomainTable` from the parsed TOML of a table file."""
    entries: dict[str, DomainInfo] = {}
    defaults: dict[CredibilityTier, int] = {}
    for tier_name, section in data.items():
        try:
            tier = CredibilityTier(tier_name)
        except ValueError:
            raise ConfigurationError(
                f"domain table {source}: unknown tier [{tier_name}]; "
                f"use {', '.join(t.value for t in CredibilityTier)}"
            ) from None
        if not isinstance(section, dict):
            raise ConfigurationError(f"domain table {source}: [{tier_name}] must be a table")
        unknown = set(section) - {"authority", "domains", "scores"}
        if unknown:
            raise ConfigurationError(f"domain table {source}: [{tier_name}] has unknown keys {sorted(unknown)}")
        default = _authority(section.get("authority", 50), source, f"[{tier_name}].authority")
        defaults[tier] = default
        domains = section.get("domains", [])
        scores = section.get("scores", {})
        if not isinstance(domains, list) or not isinstance(scores, dict):
            raise ConfigurationError(
                f"domain table {source}: [{tier_name}] domains must be a list and scores a table"
            )
        tier_entries: dict[str, int] = {}
        for domain in domains:
            tier_entries[_suffix(domain, source, tier_name)] = default
        for domain, score in scores.items():
            tier_entries[_suffix(domain, source, tier_name)] = _authority(
                score, source, f"[{tier_name}.scores].{domain}"
            )
        for suffix, authority in tier_entries.items():
            other = entries.get(suffix)
            if other is not None:
                raise ConfigurationError(
                    f"domain table {source}: {suffix!r} is in both {other.tier.value} and {tier.value}"
                )
            entries[suffix] = DomainInfo(tier=tier, authority=authority, matched=suffix)
    return DomainTable(entries=entries, defaults=defaults, source=source)


def _suffix(value: object, source: str, tier_name: str) -> str:
    if not isinstance(value, str):
        raise ConfigurationError(f"domain table {source}: [{tier_name}] has a non-string domain {value!r}")
    suffix = value.strip().strip(".").lower()
    if not suffix or any(not label for label in suffix.split(".")) or "/" in suffix or " " in suffix:
        raise ConfigurationError(f"domain table {source}: [{tier_name}] has an invalid domain {value!r}")
    return suffix


def _authority(value: object, source: str, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 100:
        raise ConfigurationError(f"domain table {source}: {where} must be an integer 0..100, not {value!r}")
    return value


_cache: dict[Path, tuple[tuple[int, int], DomainTable]] = {}
_cache_lock = threading.Lock()


def load_table(path: Path | None = None) -> DomainTable:
    """The table in ``path`` (default: the shipped one), re-read when the file changes."""
    path = Path(path or DEFAULT_TABLE_PATH).expanduser()
    try:
        st = path.stat()
    except OSError as exc:
        raise ConfigurationError(f"domain table {path}: cannot read it ({exc.strerror or exc})") from exc
    stamp = (st.st_mtime_ns, st.st_size)
    with _cache_lock:
        cached = _cache.get(path)
        if cached is not None and cached[0] == stamp:
            return cached[1]
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ConfigurationError(f"domain table {path}: {exc}") from exc
    table = parse_table(data, source=str(path))
    with _cache_lock:
        _cache[path] = (stamp, table)
    return table


def configured_table() -> DomainTable:
    """The table named by ``RESEARCH_DOMAIN_TABLE``, else the shipped one."""
    from shared.settings import (
        StageSettings,  # settings import envelope; keep this module light
    )

    return load_table(StageSettings().research_domain_table)


def classify(url: str, *, table: DomainTable | None = None) -> DomainInfo:
    """Tier and authority of the site ``url`` is on (``table`` default: :func:`configured_table`)."""
    table = table or configured_table()
    try:
        host = urlsplit(url.strip()).hostname or ""
    except ValueError:
        host = ""
    return table.classify_host(host)
