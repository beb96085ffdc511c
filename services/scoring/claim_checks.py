"""Checking the claims proposed for a job against the archived source texts.

A claim is kept only when every quote it cites verifies against the archived canonical
text of its source (at its locator, relocated, or near-verbatim) and its sentence is
grounded in those quotes (:func:`shared.verification.grounding.check_grounding`). The
model's drafts cite snippet ids (:func:`check_model_claims`); the offline engine's
claims, and claims carried from an earlier pass or job, come with their quotes
(:func:`verify_offline_claims`). A refused claim keeps its reason and the one-word
category of the check that refused it.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

from services.scoring.schemas import ClaimDraft
from shared.research.claims import copied
from shared.research.envelope import Citation, Claim, Level, RejectedClaim, ScoredSource
from shared.verification.grounding import Grounding, QuoteCheck, check_grounding, verify_quote
from shared.verification.meaning import contradicts

log = logging.getLogger(__name__)

# Bounds on what a kept claim carries, so that the envelope (at most 30 claims, next to
# 40 sources at their own bounds) stays under NATS's 1 MiB message limit.
MAX_CLAIM_CHARS = 400  # a longer "claim" is not one sentence; it is rejected
MAX_CITATIONS_PER_CLAIM = 4  # supporting snippets read from one claim; the rest are ignored (and logged)
MODEL = "model"
OFFLINE = "offline"


def source_label(index: int) -> str:
    """The id of ``scored_sources[index]`` in prompts: s1, s2... (1-based)."""
    return f"s{index + 1}"


@dataclass(frozen=True)
class Snippet:
    """A quotable passage offered to the model: the quote and where it is claimed to be."""

    id: str
    source_index: int
    text: str
    locator: str  # "" when the source does not know where its excerpt starts


@dataclass
class Verifier:
    """Checks quotes and claims against the archived texts, caching each quote's check."""

    scored: Sequence[ScoredSource]
    texts: Mapping[str, str | None]
    min_jaccard: float
    min_support: float
    _checks: dict[tuple[int, str, str], QuoteCheck] = field(default_factory=dict)

    def quote(self, index: int, quote: str, locator: str) -> QuoteCheck:
        key = (index, quote, locator)
        if key not in self._checks:
            source = self.scored[index]
            canonical = self.texts.get(source.text_hash)
            if canonical is None:
                check = QuoteCheck(ok=False, reason=f"the archived text of {source_label(index)} is unavailable")
            else:
                check = verify_quote(canonical, quote, locator or None, source.page_starts, min_jaccard=self.min_jaccard)
            self._checks[key] = check
        return self._checks[key]


# -- checking proposed claims ----------------------------------------------------------


class Refused(NamedTuple):
    """Why a claim is not kept, and which check refused it in one word."""

    category: str | None
    reason: str


def _grounded(text: str, quotes: Sequence[str], verifier: Verifier) -> Grounding | Refused:
    grounding = check_grounding(text, quotes, min_support=verifier.min_support)
    if not grounding.ok:
        return Refused(grounding.category, f"not grounded in its quotes: {grounding.reason}")
    return grounding


def _level(grounding: Grounding) -> Level:
    # Never more than the check showed: "quoted" only when it found the sentence is its quote.
    return "quoted" if grounding.level == "quoted" else "supported"


def _ids(values: Sequence[str]) -> list[str]:
    return list(dict.fromkeys(v.strip() for v in values if isinstance(v, str) and v.strip()))


def check_model_claims(
    drafts: Sequence[ClaimDraft],
    snippets: Mapping[str, Snippet],
    verifier: Verifier,
    checklist_ids: Sequence[str],
    *,
    iteration: int,
    allowed: set[str] | None = None,
) -> tuple[list[Claim], list[RejectedClaim]]:
    """The drafts that pass the check, as unscored claims (ids ``m1``, ``m2``... in
    draft order; the caller numbers the kept ones), and the rejected ones with reasons.
    ``allowed``: the snippet ids the model was shown (default: all)."""
    shown = set(snippets) if allowed is None else allowed
    known_items = set(checklist_ids)
    kept: list[Claim] = []
    rejected: list[RejectedClaim] = []
    for n, draft in enumerate(drafts, start=1):
        outcome = _check_draft(n, draft, snippets, verifier, shown, known_items)
        if isinstance(outcome, Claim):
            kept.append(outcome)
            continue
        text = " ".join(draft.text.split())
        cited = _ids(draft.supporting) + _ids(draft.contradicting)
        rejected.append(RejectedClaim.of(text or "(empty)", outcome.reason, iteration=iteration, engine=MODEL,
                                         cited=cited, category=outcome.category))
    return kept, rejected


def _check_draft(n: int, draft: ClaimDraft, snippets: Mapping[str, Snippet], verifier: Verifier,
                 shown: set[str], known_items: set[str]) -> Claim | Refused:
    """The draft as a claim (id ``m<n>``), or why it is rejected."""
    text = " ".join(draft.text.split())
    supporting, contradicting = _ids(draft.supporting), _ids(draft.contradicting)
    if not text:
        return Refused("form", "empty claim")
    if len(text) > MAX_CLAIM_CHARS:
        return Refused("form", f"longer than {MAX_CLAIM_CHARS} characters: not one claim")
    if not supporting:
        return Refused("citation", "cites no snippet")
    unknown = [i for i in supporting + contradicting if i not in shown]
    if unknown:
        return Refused("citation", f"cites unknown snippet {', '.join(unknown[:5])}")
    if len(supporting) > MAX_CITATIONS_PER_CLAIM:
        log.info("claim %r cites %d snippets; the first %d are its citations",
                 text[:60], len(supporting), MAX_CITATIONS_PER_CLAIM)
        supporting = supporting[:MAX_CITATIONS_PER_CLAIM]
    checks = [(snippets[i], verifier.quote(snippets[i].source_index, snippets[i].text, snippets[i].locator))
              for i in supporting]
    failed = [(s, c) for s, c in checks if not c.ok]
    if failed:
        s, c = failed[0]
        return Refused("quote", f"quote of {s.id} does not verify: {c.reason}")
    grounding = _grounded(text, [c.text or "" for _, c in checks], verifier)
    if isinstance(grounding, Refused):
        return grounding
    checks = _without_copies(text, checks)
    support_idx = sorted({s.source_index for s, _ in checks})
    against = {i: c for i, c in _verified_against(contradicting, snippets, verifier, text).items()
               if i not in support_idx}
    return Claim(
        id=f"m{n}",
        text=text,
        supporting_indices=support_idx,
        contradicting_indices=sorted(against),
        counter_citations=[against[i] for i in sorted(against)],
        checklist_item_ids=[i for i in _ids(draft.checklist_item_ids) if i in known_items],
        citations=[Citation(source_id=verifier.scored[s.source_index].id, locator=c.locator or "",
                            quote=c.text or "") for s, c in checks],
        level=_level(grounding),
    )


def _without_copies(text: str, checks: list[tuple[Snippet, QuoteCheck]]) -> list[tuple[Snippet, QuoteCheck]]:
    """The cited snippets less those whose quote another source already gave word for
    word (shared.research.claims.copied): a copy is one statement, not more support."""
    kept: list[tuple[Snippet, QuoteCheck]] = []
    given: dict[str, int] = {}
    for snippet, check in checks:
        if copied(check.text or "", snippet.source_index, given):
            log.info("claim %r: snippet %s copies another source's quote word for word: not counted as support",
                     text[:60], snippet.id)
            continue
        kept.append((snippet, check))
    return kept


def _verified_against(contradicting: Sequence[str], snippets: Mapping[str, Snippet], verifier: Verifier,
                      text: str) -> dict[int, Citation]:
    """The sources of the cited contradicting snippets whose quote verifies and states
    the opposite of the claim (shared.verification.meaning.contradicts), each with that passage as
    verified; any other is logged and not counted."""
    against: dict[int, Citation] = {}
    for i in contradicting:
        s = snippets[i]
        check = verifier.quote(s.source_index, s.text, s.locator)
        if not check.ok:
            log.warning("contradicting snippet %s of claim %r does not verify: not counted", i, text[:80])
        elif (kind := contradicts(text, check.text or s.text)) is None:
            log.warning("contradicting snippet %s does not contradict claim %r: not counted", i, text[:80])
        else:
            log.info("snippet %s contradicts claim %r (%s)", i, text[:80], kind)
            against.setdefault(s.source_index, Citation(source_id=verifier.scored[s.source_index].id,
                                                         locator=check.locator or "", quote=check.text or s.text))
    return against


def verify_offline_claims(claims: Sequence[Claim], verifier: Verifier, *, iteration: int,
                          engine: str = OFFLINE) -> tuple[list[Claim], list[RejectedClaim]]:
    """Claims that come with their quotes (the offline engine's, and claims carried
    from an earlier pass or job) through the same check: each citation's quote must
    verify (its locator is replaced by the verified one) and the claim be grounded in
    them. ``engine`` says, in the rejections and the log, what proposed them."""
    index_of = {s.id: i for i, s in enumerate(verifier.scored)}
    kept: list[Claim] = []
    rejected: list[RejectedClaim] = []
    for claim in claims:
        outcome = _check_quoted(claim, verifier, index_of)
        if isinstance(outcome, Claim):
            kept.append(outcome)
            continue
        log.warning("%s claim %s rejected: %s", engine, claim.id, outcome.reason)
        rejected.append(RejectedClaim.of(claim.text, outcome.reason, iteration=iteration, engine=engine,
                                         category=outcome.category))
    return kept, rejected


def _check_quoted(claim: Claim, verifier: Verifier, index_of: Mapping[str, int]) -> Claim | Refused:
    """The claim with verified citations and its level, or why it is refused."""
    citations: list[Citation] = []
    for cit in claim.citations:
        index = index_of.get(cit.source_id)
        if index is None:
            return Refused("citation", f"cites source {cit.source_id}, which is not among the scored sources")
        check = verifier.quote(index, cit.quote, cit.locator)
        if not check.ok:
            return Refused("quote", f"quote from {source_label(index)} does not verify: {check.reason}")
        citations.append(cit.model_copy(update={"locator": check.locator, "quote": check.text}))
    if not citations:
        return Refused("citation", "cites no quote")
    grounding = _grounded(claim.text, [c.quote for c in citations], verifier)
    if isinstance(grounding, Refused):
        return grounding
    level = _level(grounding)
    if level == "supported" and claim.level == "entailed" and [c.quote for c in citations] == [c.quote for c in claim.citations]:
        level = "entailed"  # judged entailed by these very quotes when it was made (reused, or an earlier pass's)
    return claim.model_copy(update={"citations": citations, "level": level})
