"""The verification pass over model-written sentences.

A sentence survives only if the check below accepts it, at first or after one
re-ask:

* A sentence that cites claim ids must cite claims that exist and be grounded in
  those claims' quotes (``shared.grounding.check_grounding``: enough of its terms,
  and every number, year and name, occur in the quotes).
* A sentence that cites nothing must be a connective: short, no number, no name, and
  every content word one of the vocabulary of talking about evidence ("the sources
  disagree on this point"). Anything else states a fact without support.

The failing sentences go back to the model in one batched call, each with the reason
it failed; a rewrite is checked again, and whatever still fails is removed and
counted. A model answer to the re-ask that is unusable removes them all: a model
that invents loses sentences, never the job.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from shared.envelope import Claim
from shared.grounding import check_grounding, salient_tokens
from shared.llm import JobLLM, LLMInvalidOutput
from shared.prompting import block
from shared.text import terms, words

from services.synthesis import prompts
from services.synthesis.render import Sentence, strip_markers
from services.synthesis.schemas import SentenceFixes

__all__ = ["Verdict", "check_sentence", "claims_block", "is_connective", "verify_sentences"]

log = logging.getLogger(__name__)

CONNECTIVE_MAX_WORDS = 15
REVISE_TOOL = "revise_sentences"
_DIGIT = re.compile(r"\d")
# The words a sentence may use without citing anything: talk about the evidence and
# how parts relate, never about the subject. A sentence with any other content word
# says something about the world, and must cite the claim that says it.
_DISCOURSE = frozenset(terms(
    "source sources evidence claim claims finding findings study studies report research question answer "
    "item checklist section summary point points aspect aspects topic detail details following below above "
    "next addition contrast however overall together similarly moreover furthermore therefore thus turn "
    "consequently agree agrees disagree disagrees differ differs conflict conflicting mixed support supports "
    "suggest suggests indicate indicates show shows note notes remain remains unclear unknown open limited "
    "available clear picture several many some few both other others different various view views first "
    "second finally conclusion short sum brief briefly less more most little much whether available "
    "consistent inconsistent agreement disagreement say says"
))


def is_connective(text: str) -> bool:
    """A sentence that links others and states no fact of its own ("The sources
    disagree on this point."): at most 15 words, no digit, no name, and no content word
    outside the vocabulary of talking about the evidence."""
    return (
        len(words(text)) <= CONNECTIVE_MAX_WORDS
        and set(terms(text)) <= _DISCOURSE
        and not _DIGIT.search(text)
        and not salient_tokens(text)
    )


def _quotes(claim: Claim) -> list[str]:
    # A claim without citations has only its own (already grounded) text to offer.
    return [c.quote for c in claim.citations if c.quote.strip()] or [claim.text]


def check_sentence(sentence: Sentence, claims: Mapping[str, Claim], *, min_support: float) -> str | None:
    """Why ``sentence`` cannot stay as it is, or None when it can."""
    text = strip_markers(sentence.text)
    if not terms(text):
        return "says nothing"
    ids = list(dict.fromkeys(sentence.claim_ids))
    if ids:
        unknown = [i for i in ids if i not in claims]
        if unknown:
            return f"cites claim ids that do not exist: {', '.join(unknown)}"
        grounding = check_grounding(text, [q for i in ids for q in _quotes(claims[i])], min_support=min_support)
        if not grounding.ok:
            return f"not supported by the quotes of {', '.join(ids)}: {grounding.reason}"
        return None
    if is_connective(text):
        return None
    return "states a fact but cites no claim"


def claims_block(claims: Sequence[Claim]) -> str:
    """The claims as data blocks, each with its id, confidence and contradiction flag."""
    return "\n".join(
        block("claim", c.text, id=c.id, confidence=f"{c.confidence_score:.2f}",
              contradicted="yes" if c.contradiction_flag else "no")
        for c in claims
    ) or "(no verified claims)"


@dataclass
class Verdict:
    kept: dict[int, Sentence]  # position -> the sentence to render (rewritten or not)
    removed: list[tuple[Sentence, str]]  # what was removed, and the last reason
    reasked: int  # sentences sent back to the model


async def verify_sentences(
    sentences: Sequence[Sentence], claims: Sequence[Claim], llm: JobLLM, *, min_support: float,
) -> Verdict:
    """Check every sentence; re-ask the failing ones once in one call; drop what still fails."""
    by_id = {c.id: c for c in claims}
    kept: dict[int, Sentence] = {}
    failing: dict[int, str] = {}
    for pos, s in enumerate(sentences):
        reason = check_sentence(s, by_id, min_support=min_support)
        if reason is None:
            kept[pos] = s
        else:
            failing[pos] = reason
    if not failing:
        return Verdict(kept, [], 0)

    fixes = await _reask(sentences, failing, claims, llm)
    removed: list[tuple[Sentence, str]] = []
    for pos, reason in failing.items():
        fix = fixes.get(pos)
        if fix is not None and fix.text.strip():
            again = check_sentence(fix, by_id, min_support=min_support)
            if again is None:
                kept[pos] = fix
                continue
            reason = f"{reason}; rewrite: {again}"
        elif fix is not None:
            reason = f"{reason}; dropped by the model"
        removed.append((sentences[pos], reason))
    for s, reason in removed:
        log.info("report sentence removed (%s): %.200s", reason, s.text)
    return Verdict(kept, removed, len(failing))


async def _reask(sentences: Sequence[Sentence], failing: Mapping[int, str], claims: Sequence[Claim],
                 llm: JobLLM) -> dict[int, Sentence]:
    """The model's rewrites by position; {} when it gave none usable (every failing
    sentence is then removed)."""
    numbered = "\n".join(
        block("sentence", sentences[pos].text, number=str(pos + 1), cites=", ".join(sentences[pos].claim_ids) or "nothing",
              problem=reason)
        for pos, reason in failing.items()
    )
    prompt = prompts.REVISE_PROMPT.format(sentences=numbered, claims=claims_block(claims))
    try:
        answer = await llm.structured(
            SentenceFixes, system=prompts.REVISE_SYSTEM, prompt=prompt, tool_name=REVISE_TOOL,
            offline=lambda: SentenceFixes(fixes=[]), max_tokens=4096,
        )
    except LLMInvalidOutput as exc:
        log.warning("rewrites of %d rejected sentences unusable (%s): removing them", len(failing), exc)
        return {}
    out: dict[int, Sentence] = {}
    for fix in answer.fixes:
        pos = fix.number - 1
        if pos in failing and pos not in out:
            out[pos] = Sentence(text=fix.text, claim_ids=list(fix.claim_ids))
    return out
