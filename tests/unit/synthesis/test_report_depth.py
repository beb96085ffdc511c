"""The request's ``report_depth``: brief is a one-screen answer, standard today's
report, detailed every finding, more Verified Findings and (with a model) a model call
per section; detailed also allows one more iteration while the checklist has open items.
The model is the loopback Anthropic fake driven through the real SDK (tests.fakes.report_writer)."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest

from services.decomposition.plan import first_plan
from services.scoring.claims import extract_claims
from services.scoring.coverage import assess_coverage
from services.scoring.engine import ClaimScorer, SourceScorer
from services.scoring.service import iteration_limit
from services.synthesis.depth import BRIEF_FINDINGS_MAX, BRIEF_SECTION_FINDINGS, DETAILED_FINDINGS_MAX, capped
from services.synthesis.relevance import addresses
from services.synthesis.render import Sentence
from services.synthesis.report import build_report, prepare
from services.synthesis.writer import write_report
from shared.research.claims import JobConfidenceCalculator, knowledge_gaps
from shared.research.envelope import JobEnvelope, ResearchRequest, StageUsage, Usage
from shared.research.events import ResearchResult
from shared.subjects import Stage
from shared.verification.grounding import MIN_SUPPORT
from tests.fakes.anthropic import AnthropicFake
from tests.fakes.report_writer import ReportWriter
from tests.unit.synthesis.test_model_written_report import _llm, assert_citations_resolve, claude  # noqa: F401
from tests.unit.synthesis.test_report import CHECKLIST, NOW, QUESTION, SOURCES, make_source

FINDINGS_MAX = 5  # RESEARCH_VERIFIED_FINDINGS_MAX's default

# Enough claims on threads and processes that a section has more than a brief one shows.
MORE_SOURCES = [
    make_source("e", "Threads of one process share the same address space. "
                     "Switching between threads is faster than switching between processes."),
    make_source("f", "Each process has its own address space and its own resources. "
                     "Processes communicate through pipes or sockets."),
    make_source("g", "Threads are lighter than processes and start faster. "
                     "Thread synchronisation needs locks to avoid race conditions."),
    make_source("h", "Creating a process costs more memory than creating a thread. "
                     "A process crash does not affect other processes."),
    make_source("i", "Threads within a process can read each other's variables. "
                     "Context switches between processes flush more caches than thread switches."),
]


def envelope(depth: str = "standard", *, max_iterations: int = 2) -> JobEnvelope:
    sources = [*SOURCES, *MORE_SOURCES]
    request = ResearchRequest(question=QUESTION, max_iterations=max_iterations, report_depth=depth)
    plan = first_plan(request)
    scored = SourceScorer().score_all(sources, now=NOW)
    claims = ClaimScorer().score_all(
        extract_claims(QUESTION, [s.text for s in plan.sub_questions], CHECKLIST, scored), scored)
    assessed = assess_coverage(CHECKLIST, claims)
    return JobEnvelope(
        job_id="job-depth", user_id="u1", stage=Stage.SYNTHESIZE, iteration=1, request=request,
        deadline_at=NOW + timedelta(minutes=10), plan=plan.model_copy(update={"checklist": assessed}),
        sources=sources, scored_sources=scored, claims=claims,
        confidence=JobConfidenceCalculator().calculate(claims, scored), knowledge_gaps=knowledge_gaps(assessed),
        usage=Usage(by_stage={"plan": StageUsage(calls=1)}),
    )


def section(report: str, heading: str) -> str:
    return report.split(f"\n## {heading}\n", 1)[1].split("\n## ", 1)[0]


def item_sections(report: str) -> dict[str, str]:
    return {item.description: section(report, item.description) for item in CHECKLIST}


def bullets(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith("- ")]


def cited_sentences(text: str) -> int:
    """Cited sentences of prose: each ends with one run of citation marks."""
    prose = [line for line in text.splitlines() if not line.startswith(("- ", "*", "Coverage:"))]
    return sum(len(re.findall(r"(?<!\\)(?:\[\d+\])+", line)) for line in prose)


def offline(depth: str) -> ResearchResult:
    return build_report(envelope(depth), partial_reason=None, findings_max=FINDINGS_MAX)


@pytest.fixture(scope="module")
def reports() -> dict[str, ResearchResult]:
    return {depth: offline(depth) for depth in ("brief", "standard", "detailed")}


# -- the offline report -------------------------------------------------------------------


def test_the_default_depth_is_standard_and_unknown_depths_are_refused() -> None:
    assert ResearchRequest(question="q").report_depth == "standard"
    with pytest.raises(ValueError, match="report_depth"):
        ResearchRequest(question="q", report_depth="exhaustive")  # type: ignore[arg-type]


def test_brief_is_shorter_than_standard_and_detailed_longer(reports: dict[str, ResearchResult]) -> None:
    assert len(reports["brief"].report) < len(reports["standard"].report) < len(reports["detailed"].report)
    for result in reports.values():
        assert_citations_resolve(result)
        assert result.claims == reports["standard"].claims  # a shorter report leaves claims out of the prose only


def test_brief_shows_at_most_two_findings_per_section_and_three_verified_findings(
        reports: dict[str, ResearchResult]) -> None:
    brief, standard = reports["brief"], reports["standard"]
    assert len(brief.verified_findings) == BRIEF_FINDINGS_MAX < len(standard.verified_findings) == FINDINGS_MAX
    for heading, text in item_sections(brief.report).items():
        assert len(bullets(text)) <= BRIEF_SECTION_FINDINGS, (heading, text)
    # A standard section shows more than a brief one may: the cap did something.
    assert max(len(bullets(t)) for t in item_sections(standard.report).values()) > BRIEF_SECTION_FINDINGS
    # The executive summary with its key findings is still there, and the methodology says what was left out.
    assert cited_sentences(section(brief.report, "Executive summary")) >= 1
    assert "Report depth: brief" in brief.report and "Report depth" not in standard.report


def test_detailed_lists_every_claim_under_every_item_it_answers(reports: dict[str, ResearchResult]) -> None:
    detailed, standard = reports["detailed"], reports["standard"]
    assert FINDINGS_MAX < len(detailed.verified_findings) <= DETAILED_FINDINGS_MAX
    prepared = prepare(envelope("detailed"))
    sections = item_sections(detailed.report)
    for item in prepared.checklist:
        answering = [c for c in prepared.claims if addresses(item, c)]
        assert len(bullets(sections[item.description])) == len(answering), item.description
        assert "Also answered by" not in sections[item.description]
    # Standard lists each claim once: fewer bullets in all, the rest referred to.
    count = lambda r: sum(len(bullets(t)) for t in item_sections(r.report).values())  # noqa: E731
    assert count(detailed) > count(standard)
    assert "Report depth: detailed" in detailed.report


def test_capped_keeps_the_first_stating_sentences_and_no_dangling_connective() -> None:
    paragraphs = [[Sentence("A.", ["cl1"]), Sentence("However,"), Sentence("B.", ["cl2"])],
                  [Sentence("C.", ["cl3"]), Sentence("Also,")]]
    assert [[s.text for s in p] for p in capped(paragraphs, 2)] == [["A.", "However,", "B."]]
    assert [[s.text for s in p] for p in capped(paragraphs, 3)] == [["A.", "However,", "B."], ["C."]]
    assert capped(paragraphs, None) == paragraphs


# -- with a model ----------------------------------------------------------------------------


async def _write(fake: AnthropicFake, depth: str) -> ResearchResult:
    fake.responder = ReportWriter()
    return await write_report(envelope(depth), _llm(fake), partial_reason=None, findings_max=FINDINGS_MAX,
                              min_support=MIN_SUPPORT)


def _report_calls(fake: AnthropicFake) -> list[str]:
    return [r.prompt for r in fake.requests if r.forced_tool == "write_report"]


async def test_detailed_with_a_model_writes_each_section_in_its_own_call(claude: AnthropicFake) -> None:  # noqa: F811
    result = await _write(claude, "detailed")
    prepared = prepare(envelope("detailed"))
    answered = [item for item in prepared.checklist if any(addresses(item, c) for c in prepared.claims)]
    prompts = _report_calls(claude)
    # The executive summary's call, then one per section that some claim answers.
    assert len(prompts) == 1 + len(answered) >= 3
    for item, prompt in zip(answered, prompts[1:], strict=True):
        assert prompt.count("<checklist_item ") == 1 and f'id="{item.id}"' in prompt
        own = {c.id for c in prepared.claims if addresses(item, c)}
        assert set(re.findall(r'<claim id="([^"]+)"', prompt)) == own  # only that section's claims
    assert "offline" not in result.engine, result.engine
    assert not result.offline_parts, result.offline_parts  # every section survived as the model wrote it
    assert_citations_resolve(result)
    # Every claim answering an item is written in its section (the fake writes one sentence per claim).
    sections = item_sections(result.report)
    for item in answered:
        own = [c for c in prepared.claims if addresses(item, c)]
        assert cited_sentences(sections[item.description]) == len(own), item.description


async def test_standard_and_brief_with_a_model_make_one_call_and_brief_is_shorter(claude: AnthropicFake) -> None:  # noqa: F811
    standard = await _write(claude, "standard")
    assert len(_report_calls(claude)) == 1
    claude.reset()
    brief = await _write(claude, "brief")
    prompts = _report_calls(claude)
    assert len(prompts) == 1 and "Depth: brief" in prompts[0]
    assert len(brief.report) < len(standard.report)
    assert len(brief.verified_findings) == BRIEF_FINDINGS_MAX
    for heading, text in item_sections(brief.report).items():
        assert cited_sentences(text) + len(bullets(text)) <= BRIEF_SECTION_FINDINGS, (heading, text)
    assert_citations_resolve(brief)


# -- one more iteration for a detailed report ---------------------------------------------------------


def test_detailed_allows_one_more_iteration_while_items_are_open() -> None:
    open_items = envelope("detailed", max_iterations=3)
    assert open_items.knowledge_gaps  # the GPU item is open
    assert iteration_limit(open_items) == 4
    assert iteration_limit(envelope("standard", max_iterations=3)) == 3
    assert iteration_limit(envelope("brief", max_iterations=3)) == 3
    assert iteration_limit(open_items.model_copy(update={"knowledge_gaps": []})) == 3


class _FailingSection(ReportWriter):
    """Answers every call well but one section's, whose answer never validates."""

    def report(self, prompt: str) -> dict:
        if 'This call writes one section' in prompt and 'id="c3"' in prompt:
            return {"executive_summary": []}  # min_length=1: invalid, also when re-asked
        return super().report(prompt)


async def test_a_detailed_section_whose_call_fails_is_written_offline_and_named(claude: AnthropicFake) -> None:  # noqa: F811
    claude.responder = _FailingSection()
    result = await write_report(envelope("detailed"), _llm(claude), partial_reason=None, findings_max=FINDINGS_MAX,
                                min_support=MIN_SUPPORT)
    heading = next(i.description for i in CHECKLIST if i.id == "c3")
    assert result.offline_parts == [f'the section "{heading}"'], result.offline_parts
    assert "offline" in result.engine
    assert bullets(item_sections(result.report)[heading])  # the offline engine's findings stand in
    assert_citations_resolve(result)
