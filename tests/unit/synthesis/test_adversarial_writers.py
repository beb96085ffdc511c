"""Adversarial writers against the report's verification pass: a model that cites real
claims but turns what they say (a "not" added or dropped, "all" for "some", a
direction reversed, a figure changed), merges two claims into one, writes uncited
claims about the sources, wraps sentences in links and HTML, repeats itself, and a
judge that approves or vetoes everything. The model is the loopback Anthropic fake
driven through the real SDK; its answers come from tests.fakes.turning_writer.

Each run prints its removals by reason (``pytest -s`` shows them)."""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence

import pytest

from services.decomposition.plan import first_plan
from services.scoring.claims import extract_claims
from services.scoring.coverage import assess_coverage
from services.scoring.engine import ClaimScorer, SourceScorer
from services.synthesis.wording import plain
from services.synthesis.report import build_report, prepare
from services.synthesis.writer import write_report
from shared.research.claims import JobConfidenceCalculator, knowledge_gaps
from shared.research.envelope import JobEnvelope, ResearchRequest, StageUsage, Usage
from shared.research.events import ResearchResult
from shared.verification.grounding import MIN_SUPPORT, check_grounding
from shared.verification.judge import JUDGE_TOOL, Judge
from shared.llm.engine import JobLLM, make_engine
from shared.settings import StageSettings
from shared.subjects import Stage
from tests.fakes.anthropic import AnthropicFake
from tests.fakes.llm import RecordedRequest
from tests.fakes.turning_writer import (
    EVIL_URL,
    Connector,
    MeaningTurner,
    Merger,
    approve_all_judge,
    routed,
    turn,
    veto_all_judge,
)
from tests.unit.synthesis.test_report import CHECKLIST, NOW, QUESTION, SOURCES, make_envelope, make_source


@pytest.fixture
def claude() -> Iterator[AnthropicFake]:
    with AnthropicFake() as fake:
        yield fake


def _llm(fake: AnthropicFake) -> JobLLM:
    env = {**fake.env(), "LLM_TIMEOUT_S": "30", "LLM_MAX_RETRIES": "0"}
    return make_engine(StageSettings(**{k.lower(): v for k, v in env.items()})).bind("synthesize", Usage())


async def _write(fake: AnthropicFake, responder: object, envelope: JobEnvelope | None = None, *,
                 judge: object = None, label: str = "") -> ResearchResult:
    fake.responder = responder if judge is None else routed(responder, judge)  # type: ignore[arg-type]
    llm = _llm(fake)
    result = await write_report(envelope or make_envelope(), llm, partial_reason=None, findings_max=3,
                                min_support=MIN_SUPPORT, judge=Judge(llm) if judge is not None else None)
    v = result.verification
    assert v is not None
    print(f"\n[{label}] sentences_removed={v.sentences_removed} sentences={v.sentences} "
          f"judge={v.judge!r} judge_tokens={v.judge_tokens}")
    return result


# Sources with figures: none of make_envelope()'s claims has one, so the number turner
# writes from these too.
FIGURE_SOURCES = [
    make_source("e", "Creating a thread takes about 10 microseconds on Linux. "
                     "A process switch costs 3 times more than a thread switch."),
    make_source("f", "Each thread has a default stack of 8 MB on Linux."),
]


def claim_texts(envelope: JobEnvelope) -> list[str]:
    """The claims' texts in the order the prompt lists them."""
    return [c.text for c in prepare(envelope).claims]


def figures_envelope() -> JobEnvelope:
    """make_envelope() with FIGURE_SOURCES among its sources, built the same way."""
    request = ResearchRequest(question=QUESTION, max_iterations=2)
    plan = first_plan(request)
    sources = [*SOURCES, *FIGURE_SOURCES]
    scored = SourceScorer().score_all(sources, now=NOW)
    claims = ClaimScorer().score_all(extract_claims(QUESTION, [s.text for s in plan.sub_questions], CHECKLIST, scored),
                                     scored)
    assessed = assess_coverage(CHECKLIST, claims)
    return JobEnvelope(
        job_id="job-456", user_id="u1", stage=Stage.SYNTHESIZE, iteration=1, request=request,
        deadline_at=make_envelope().deadline_at, plan=plan.model_copy(update={"checklist": assessed}),
        sources=sources, scored_sources=scored, claims=claims,
        confidence=JobConfidenceCalculator().calculate(claims, scored), knowledge_gaps=knowledge_gaps(assessed),
        usage=Usage(by_stage={"plan": StageUsage(calls=1)}),
    )


def _section(report: str, heading: str) -> str:
    return report.split(f"\n## {heading}\n", 1)[1].split("\n## ", 1)[0]


def _prose(report: str) -> str:
    """The parts the model writes: the executive summary and the sections."""
    return report.split("\n## Verified Findings\n", 1)[0]


def _in_report(sentence: str, report: str) -> bool:
    """Whether ``sentence`` (markup stripped, final stop and case aside) is in ``report``."""
    needle = " ".join(plain(sentence).rstrip(".").split()).casefold()
    return needle in " ".join(report.replace("\\", "").split()).casefold()


def _assert_kept_out(result: ResearchResult, wrong: Sequence[str]) -> None:
    assert wrong, "the writer wrote nothing wrong: the test would prove nothing"
    for sentence in wrong:
        assert not _in_report(sentence, result.report), sentence
    findings = {f.text for f in result.verified_findings}
    assert not findings & set(wrong)
    claims = {c.id: c.text for c in result.claims}
    assert all(claims[f.claim_id] == f.text for f in result.verified_findings)
    assert all(not _in_report(s, _section(result.report, "Verified Findings")) for s in wrong)


def _reasked(fake: AnthropicFake) -> list[RecordedRequest]:
    return [r for r in fake.delivered if r.forced_tool == "revise_sentences"]


# -- turned meaning -----------------------------------------------------------------------------


# Turned sentences written for make_envelope(): the summary turns its 5 claims, the two
# sections on threads their 4 each, the section on isolation its 1 (the quantifier
# leaves the hedged claim, "can bring down", alone: 4 + 3 + 3 + 1).
TURNED = {"negation": 14, "quantifier": 11, "comparative": 14}


@pytest.mark.parametrize("kind", sorted(TURNED))
async def test_turned_sentences_never_reach_the_report(claude: AnthropicFake, kind: str) -> None:
    writer = MeaningTurner(kind)  # type: ignore[arg-type]
    result = await _write(claude, writer, label=kind)
    assert len(writer.turned) == TURNED[kind]
    _assert_kept_out(result, writer.turned)
    # Each turned sentence removed once, under its own category; nothing else removed.
    assert result.verification is not None
    assert result.verification.sentences_removed == {kind: len(writer.turned)}
    assert result.sentences_removed == len(writer.turned)
    # The faithful sentences stay, each a quote.
    for sentence in writer.faithful:
        assert _in_report(sentence, _prose(result.report)), sentence
    assert set(result.verification.sentences) == {"quoted"}
    # One batched re-ask; the model insisted, so every turned sentence went.
    assert len(_reasked(claude)) == 1
    assert result.offline_parts == []


async def test_every_claim_is_turned_where_the_turn_applies() -> None:
    """The turnings apply to make_envelope()'s claims (the quantifier leaves the one
    hedged claim alone; none of them has a figure)."""
    claims = prepare(make_envelope()).claims
    for kind in ("negation", "comparative"):
        assert all(turn(kind, c.text) not in (None, c.text) for c in claims), kind
    hedged = [c.text for c in claims if turn("quantifier", c.text) is None]
    assert hedged == ["A crash in one thread can bring down the whole process."]
    assert all(turn("number", c.text) is None for c in claims)
    assert turn("negation", "Threads do not share memory.") == "Threads do share memory."
    assert turn("quantifier", "Some threads share memory.") == "All threads share memory."
    assert turn("comparative", "Threads start faster.") == "Threads start slower."
    assert turn("number", "It takes 8 MB.", 0) == "It takes 80 MB." and turn("number", "It takes 8 MB.", 1) == "It takes 8 GB."


async def test_changed_figures_never_reach_the_report(claude: AnthropicFake) -> None:
    writer = MeaningTurner("number")
    envelope = figures_envelope()
    result = await _write(claude, writer, envelope, label="number")
    figures = [c.text for c in prepare(envelope).claims if re.search(r"\d", c.text)]
    assert len(figures) == 3 and len(writer.turned) == 7  # summary 3, the sections on threads 3 and 1
    assert any("30 times" in t for t in writer.turned) and any("milliseconds" in t for t in writer.turned)
    _assert_kept_out(result, writer.turned)
    assert result.verification is not None
    assert result.verification.sentences_removed == {"number": len(writer.turned)}
    assert writer.faithful and all(_in_report(s, _prose(result.report)) for s in writer.faithful)
    assert set(writer.turned) == {turn("number", c, k) for k, c in enumerate(claim_texts(envelope))
                                   if turn("number", c, k) is not None}


# -- merged claims ------------------------------------------------------------------------------


async def test_merged_claims_are_removed(claude: AnthropicFake) -> None:
    writer = Merger()
    result = await _write(claude, writer, label="merge")
    assert len(writer.merged) == 7  # summary 3, each section on threads 2
    _assert_kept_out(result, writer.merged)
    assert result.verification is not None
    removed = result.verification.sentences_removed
    assert sum(removed.values()) == result.sentences_removed == len(writer.merged)
    assert set(removed) <= {"merge", "terms", "role", "name", "number", "negation", "comparative", "quantifier",
                            "modality", "scope"}
    assert removed.get("merge", 0) >= 1


# -- uncited claims, markup, repeats ------------------------------------------------------------


async def test_uncited_claims_markup_and_repeats(claude: AnthropicFake) -> None:
    writer = Connector()
    result = await _write(claude, writer, label="connector")
    report = result.report
    assert "All sources support" not in report and "consistent across studies" not in report
    assert "](http" not in report and "<b>" not in report and EVIL_URL not in report
    assert "**" not in _prose(report)  # (the contradictions section has bold labels of its own)
    # The wrapped sentences are kept as plain prose, each a quote of its claim.
    for sentence in writer.wrapped:
        assert _in_report(sentence, report), sentence
    summary = _section(report, "Executive summary")
    assert summary.count(writer.repeated.rstrip(".")) == 1
    assert "However," in summary  # a linking word states nothing: it stays
    v = result.verification
    assert v is not None
    assert v.sentences_removed == {"uncited": len(writer.turned), "repeated": writer.repeats - 1}
    assert set(v.sentences) == {"quoted"}


# -- the judge ----------------------------------------------------------------------------------


async def test_an_approving_judge_rescues_nothing(claude: AnthropicFake) -> None:
    writer, judge = MeaningTurner("negation", paraphrase=True), approve_all_judge()
    result = await _write(claude, writer, judge=judge, label="negation + approve_all judge")
    _assert_kept_out(result, writer.turned)
    v = result.verification
    assert v is not None
    assert v.sentences_removed == {"negation": len(writer.turned)}
    # The judge is asked only about what the checks kept and is not a quote: the
    # paraphrases, each then "entailed"; never about a rejected sentence.
    assert judge.asked and all(s.startswith("In addition, ") for s in judge.asked)
    assert not set(judge.asked) & set(writer.turned)
    assert set(v.sentences) == {"quoted", "entailed"} and v.sentences["entailed"] == len(judge.asked)
    assert v.judge == "ran" and v.judge_tokens > 0
    assert v.judge_tokens == sum(r.input_tokens + r.output_tokens for r in claude.delivered
                                 if r.forced_tool == JUDGE_TOOL)


async def test_a_vetoing_judge_leaves_only_quotes(claude: AnthropicFake) -> None:
    writer, judge = MeaningTurner("negation", paraphrase=True), veto_all_judge()
    result = await _write(claude, writer, judge=judge, label="negation + veto_all judge")
    _assert_kept_out(result, writer.turned)
    v = result.verification
    assert v is not None
    assert v.sentences_removed == {"negation": len(writer.turned), "judge": len(judge.asked)}
    assert judge.asked
    for sentence in judge.asked:
        assert not _in_report(sentence, result.report), sentence
    assert set(v.sentences) == {"quoted"}
    assert v.judge == "ran" and v.judge_tokens > 0
    assert v.judge_tokens == sum(r.input_tokens + r.output_tokens for r in claude.delivered
                                 if r.forced_tool == JUDGE_TOOL)


def test_the_offline_report_is_all_quotes_and_says_no_judge_ran() -> None:
    result = build_report(make_envelope(), partial_reason=None)
    v = result.verification
    assert v is not None
    print(f"\n[offline] sentences={v.sentences} sentences_removed={v.sentences_removed} judge={v.judge!r}")
    assert set(v.sentences) == {"quoted"}
    assert v.judge.startswith("not run")
    assert v.judge_tokens == 0


# -- known gaps ---------------------------------------------------------------------------------

# Turnings of make_envelope()'s claims that an earlier version of the checks accepted
# as "supported" (found by these writers); each is refused now.
_ONCE_MISSED = [
    ("cl1", "Creating a thread is costlier than creating a process."),  # antonym of "cheaper"
    ("cl1", "Creating a thread is pricier than creating a process."),
    ("cl1", "Creating a thread is cheaper after creating a process."),  # "than" became "after"
    ("cl4", "A crash in one thread can bring up the whole process."),  # particle flipped
    ("cl4", "A crash in one thread can always bring down the whole process."),  # "always" after a hedge
    ("cl4", "Every crash in one thread can bring down the whole process."),
    ("cl1", "Processes is cheaper than creating a process."),  # subject replaced by a word of the object
]


@pytest.mark.parametrize(("cid", "sentence"), _ONCE_MISSED)
def test_turnings_the_checks_once_missed_are_refused(cid: str, sentence: str) -> None:
    claims = {c.id: c for c in prepare(make_envelope()).claims}
    quotes = [c.quote for c in claims[cid].citations]
    assert not check_grounding(sentence, quotes, min_support=MIN_SUPPORT).ok
