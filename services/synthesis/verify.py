"""The verification pass over model-written sentences.

A sentence survives only if the checks below accept it, at first or after one
re-ask, and the entailment judge (when one runs) does not veto it:

* Its text is plain prose: markdown, links and HTML are stripped before anything
  else, so nothing a model writes renders as a live link or markup.
* A sentence that cites claim ids must cite claims that exist, at most
  ``MAX_CLAIMS_PER_SENTENCE`` of them, and rest on those claims' quotes alone
  (``shared.verification.grounding.check_grounding``: anchored to the quote it restates, and the
  same polarity, quantifiers, certainty, direction, roles, figures, names and
  conditions as that quote). Its level is ``quoted`` when it is one of those quotes,
  else ``supported``, and ``entailed`` once the judge agrees.
* A sentence that cites nothing must state nothing: no content word but the few
  that link sentences ("However, ..." on its own is allowed; "All sources support
  this conclusion" is a claim about the sources, and is removed).
* A sentence that repeats one already kept (the same words, up to case, spacing and
  citation) is removed.

The failing sentences go back to the model in one batched call, each with the reason
it failed; a rewrite is checked again, and whatever still fails is removed and
counted by reason. A model answer to the re-ask that is unusable removes them all: a
model that invents loses sentences, never the job. The judge can only veto: a
sentence the checks refused is never rescued by it.
"""

from __future__ import annotations

import asyncio
import logging
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from shared.research.envelope import Claim
from shared.verification.grounding import check_grounding
from shared.verification.judge import Judge, JudgeItem, JudgeOutcome
from shared.llm.engine import JobLLM
from shared.llm.context import fixed_texts
from shared.llm.providers import LLMInvalidOutput
from shared.llm.prompting import block
from shared.research.text import terms, words

from services.synthesis import prompts
from services.synthesis.render import Sentence
from services.synthesis.wording import plain, strip_markers
from services.synthesis.schemas import SentenceFixes

__all__ = ["MAX_CLAIMS_PER_SENTENCE", "Problem", "Verdict", "check_sentence", "claims_block", "is_connective",
           "verify_sentences"]

log = logging.getLogger(__name__)

MAX_CLAIMS_PER_SENTENCE = 3
REVISE_TOOL = "revise_sentences"
# The only content words an uncited sentence may have: words that link sentences and
# say nothing about the subject or about the sources ("However, ...", "In addition,").
_LINKING = frozenset(terms("however moreover furthermore therefore thus addition contrast overall together "
                           "similarly consequently turn finally first second next short sum brief briefly"))


@dataclass(frozen=True)
class Problem:
    """Why a sentence cannot stay: ``category`` is one word (``negation``, ``number``,
    ``uncited``, ``citations``, ``repeated``, ...), ``reason`` says it in full."""

    category: str
    reason: str


def is_connective(text: str) -> bool:
    """A sentence that links others and states nothing: no content word but
    linking words ("However, ..."), no digit, no name."""
    return set(terms(text)) <= _LINKING and not any(c.isdigit() for c in text)


def _quotes(claim: Claim) -> list[str]:
    """A claim's quotes: the sentence rests on these alone, never on the claim's wording."""
    return [c.quote for c in claim.citations if c.quote.strip()]


def clean(text: str) -> str:
    """A model sentence as plain prose: markup, links and citation markers removed."""
    return strip_markers(plain(text))


def _normal(text: str) -> str:
    return " ".join(words(text))


def check_sentence(sentence: Sentence, claims: Mapping[str, Claim], *, min_support: float) -> Problem | str:
    """Why ``sentence`` cannot stay as it is, or its level ("quoted", "supported";
    "connective" for an uncited linking sentence)."""
    text = clean(sentence.text)
    if not words(text):
        return Problem("empty", "says nothing")
    ids = list(dict.fromkeys(sentence.claim_ids))
    if not ids:
        if is_connective(text):
            return "connective"
        return Problem("uncited", "states something but cites no claim")
    unknown = [i for i in ids if i not in claims]
    if unknown:
        return Problem("citations", f"cites claim ids that do not exist: {', '.join(unknown)}")
    if len(ids) > MAX_CLAIMS_PER_SENTENCE:
        return Problem("citations", f"rests on {len(ids)} claims; a sentence may rest on at most "
                                    f"{MAX_CLAIMS_PER_SENTENCE}")
    quotes = [q for i in ids for q in _quotes(claims[i])]
    if not quotes:
        return Problem("citations", f"the claims it cites ({', '.join(ids)}) carry no quotes")
    grounding = check_grounding(text, quotes, min_support=min_support)
    if not grounding.ok:
        return Problem(grounding.category or "terms",
                       f"not supported by the quotes of {', '.join(ids)}: {grounding.reason}")
    return grounding.level or "supported"


def claims_block(claims: Sequence[Claim]) -> str:
    """The claims as data blocks, each with its id, confidence, contradiction flag and
    the quotes it rests on (a sentence citing it must say what those quotes say)."""
    return "\n".join(
        block("claim", "\n".join([c.text, *(f"Quote: {q}" for q in _quotes(c))]), id=c.id,
              confidence=f"{c.confidence_score:.2f}", contradicted="yes" if c.contradiction_flag else "no")
        for c in claims
    ) or "(no verified claims)"


@dataclass
class Verdict:
    kept: dict[int, Sentence]  # position -> the sentence to render (cleaned, rewritten or not, with its level)
    removed: list[tuple[Sentence, Problem]]  # what was removed, and the last reason
    reasked: int  # sentences sent back to the model
    judge: JudgeOutcome | None = None  # the entailment judge's run (None: there was nothing to judge)

    def removed_by(self) -> dict[str, int]:
        """Removed sentences by reason category."""
        return dict(Counter(p.category for _, p in self.removed))


class _Checker:
    """Checks sentences in order, remembering what each part of the report (the
    summary, a section) kept so that a repeat within it is refused."""

    def __init__(self, claims: Mapping[str, Claim], min_support: float) -> None:
        self.claims, self.min_support = claims, min_support
        self.seen: set[tuple[str, str]] = set()

    def __call__(self, sentence: Sentence, part: str = "") -> Sentence | Problem:
        text = clean(sentence.text)
        outcome = check_sentence(Sentence(text, list(sentence.claim_ids)), self.claims, min_support=self.min_support)
        if isinstance(outcome, Problem):
            return outcome
        key = (part, _normal(text))
        if key in self.seen:
            return Problem("repeated", "repeats a sentence already in the report")
        self.seen.add(key)
        level = None if outcome == "connective" else outcome
        return Sentence(text, list(dict.fromkeys(sentence.claim_ids)), level=level)


_NOT_REASKED = frozenset({"repeated", "empty"})


async def verify_sentences(
    sentences: Sequence[Sentence], claims: Sequence[Claim], llm: JobLLM, *, min_support: float,
    judge: Judge | None = None, parts: Sequence[str] | None = None,
) -> Verdict:
    """Check every sentence; re-ask the failing ones once in one call; drop what still
    fails; then let the judge (if any) veto what is not quoted. ``parts[i]`` names the
    part of the report sentence ``i`` is in (a repeat is refused within a part)."""
    by_id = {c.id: c for c in claims}
    check = _Checker(by_id, min_support)
    kept: dict[int, Sentence] = {}
    failing: dict[int, Problem] = {}
    removed: list[tuple[Sentence, Problem]] = []
    part = (lambda pos: parts[pos]) if parts is not None else (lambda pos: "")
    # The checks are CPU work (milliseconds a sentence): off the event loop, so the
    # stage's heartbeats keep going while a long report is checked.
    first = await asyncio.to_thread(lambda: [check(s, part(pos)) for pos, s in enumerate(sentences)])
    for pos, (s, outcome) in enumerate(zip(sentences, first, strict=True)):
        if isinstance(outcome, Sentence):
            kept[pos] = outcome
        elif outcome.category in _NOT_REASKED:
            removed.append((s, outcome))
        else:
            failing[pos] = outcome
    fixes = await _reask(sentences, failing, claims, llm) if failing else {}
    for pos, problem in failing.items():
        fix = fixes.get(pos)
        if fix is not None and fix.text.strip():
            again = check(fix, part(pos))
            if isinstance(again, Sentence):
                kept[pos] = again
                continue
            problem = Problem(again.category, f"{problem.reason}; rewrite: {again.reason}")
        elif fix is not None:
            problem = Problem(problem.category, f"{problem.reason}; dropped by the model")
        removed.append((sentences[pos], problem))
    outcome = await _judge(kept, by_id, judge, removed)
    for s, problem in removed:
        log.info("report sentence removed (%s: %s): %.200s", problem.category, problem.reason, s.text)
    return Verdict(dict(sorted(kept.items())), removed, len(failing), outcome)


async def _judge(kept: dict[int, Sentence], claims: Mapping[str, Claim], judge: Judge | None,
                 removed: list[tuple[Sentence, Problem]]) -> JudgeOutcome | None:
    """The judge's verdicts on the kept sentences that are not quotes: entailed ones
    become ``entailed``, vetoed ones move to ``removed``; unjudged ones stay ``supported``."""
    asked = [pos for pos, s in kept.items() if s.level == "supported"]
    if judge is None or not asked:
        return None
    items = [JudgeItem(kept[pos].text, [q for i in kept[pos].claim_ids for q in _quotes(claims[i])]) for pos in asked]
    outcome = await judge.judge(items)
    for pos, judgement in zip(asked, outcome.judgements, strict=True):
        if judgement is None:
            continue
        if judgement.verdict == "entailed":
            kept[pos].level = "entailed"
        else:
            why = f"the verifier model judged it {judgement.verdict.replace('_', ' ')}"
            removed.append((kept.pop(pos), Problem("judge", f"{why}: {judgement.reason}" if judgement.reason else why)))
    return outcome


async def _reask(sentences: Sequence[Sentence], failing: Mapping[int, Problem], claims: Sequence[Claim],
                 llm: JobLLM) -> dict[int, Sentence]:
    """The model's rewrites by position; {} when it gave none usable (every failing
    sentence is then removed)."""
    numbered = "\n".join(
        block("sentence", sentences[pos].text, number=str(pos + 1), cites=", ".join(sentences[pos].claim_ids) or "nothing",
              problem=problem.reason)
        for pos, problem in failing.items()
    )
    prompt = prompts.REVISE_PROMPT.format(sentences=numbered, claims=claims_block(claims))
    fixed = fixed_texts(SentenceFixes, system=prompts.REVISE_SYSTEM, tool_name=REVISE_TOOL)
    if not await llm.engine.window.fits(*fixed, prompt, max_tokens=4096):
        # Too long for the context window with every claim: only the claims the sentences cite.
        cited = {i for pos in failing for i in sentences[pos].claim_ids}
        prompt = prompts.REVISE_PROMPT.format(sentences=numbered, claims=claims_block([c for c in claims if c.id in cited]))
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
