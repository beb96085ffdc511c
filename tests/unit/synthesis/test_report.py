"""The offline report: citations resolve, sections present, the tool's output object."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

import pytest

from services.decomposition.plan import first_plan
from services.scoring.claims import extract_claims
from services.scoring.coverage import assess_coverage
from services.scoring.engine import ClaimScorer, SourceScorer
from services.synthesis.report import build_report
from services.synthesis.wording import citation_numbers
from shared.research.claims import JobConfidenceCalculator, knowledge_gaps
from shared.research.envelope import (
    ChecklistItem,
    CoverageStatus,
    CredibilityTier,
    DigestPayload,
    EvidenceSnippet,
    JobEnvelope,
    ResearchRequest,
    RetrievalMethod,
    Source,
    StageUsage,
    Usage,
)
from shared.research.events import ResearchResult
from shared.subjects import Stage
from shared.research.text import canonicalize, sentence_spans, text_hash

NOW = datetime(2025, 6, 1, tzinfo=UTC)
QUESTION = "What are the trade-offs between threads and processes?"


def make_source(sid: str, text: str, *, title: str | None = None, da: int = 60,
                tier: CredibilityTier = CredibilityTier.SECONDARY,
                method: RetrievalMethod = RetrievalMethod.RAG) -> Source:
    text = canonicalize(text)
    snippets = [EvidenceSnippet(text=text[s:e], locator=f"char:{s}-{e}", relevance_score=0.7)
                for s, e in sentence_spans(text)]
    digest = DigestPayload(
        query_hash="0123abcd", summary=text[:60], key_points=[], evidence_snippets=snippets,
        original_chars=len(text), digest_chars=len(text), compression_ratio=1.0,
        source_text_hash=text_hash(text).replace("sha256-", "sha256:"),
    )
    return Source(id=sid, text=text, url=f"https://example.org/{sid}", title=title or f"Title {sid}",
                  published_at=NOW - timedelta(days=60), relevance_score=0.8, credibility_tier=tier,
                  domain_authority=da, retrieval_method=method, text_hash=text_hash(text),
                  text_chars=len(text), digest=digest)


SOURCES = [
    make_source("bananas", "Bananas are a yellow fruit rich in potassium."),
    make_source("a", "Threads share memory with other threads of the process. "
                     "Creating a thread is cheaper than creating a process."),
    make_source("b", "Threads share memory with the other threads of their process. "
                     "A crash in one thread can bring down the whole process.",
                da=95, tier=CredibilityTier.PRIMARY_SOURCE, method=RetrievalMethod.WEB),
    make_source("c", "Threads do not share memory with other threads of the process."),
    make_source("d", "Processes are isolated from each other by the operating system.",
                title="OS notes [7]"),
]
CHECKLIST = [
    ChecklistItem(id="c1", description="Definition of threads"),
    ChecklistItem(id="c2", description="Threads versus processes: cost and performance"),
    ChecklistItem(id="c3", description="Isolation of processes by the operating system"),
    ChecklistItem(id="c4", description="Energy use of GPUs"),
]


def make_envelope(*, iteration: int = 1, max_iterations: int = 2,
                  checklist: list[ChecklistItem] | None = None) -> JobEnvelope:
    request = ResearchRequest(question=QUESTION, max_iterations=max_iterations)
    plan = first_plan(request)
    checklist = CHECKLIST if checklist is None else checklist
    scored = SourceScorer().score_all(SOURCES, now=NOW)
    claims = extract_claims(QUESTION, [s.text for s in plan.sub_questions], checklist, scored)
    claims = ClaimScorer().score_all(claims, scored)
    assessed = assess_coverage(checklist, claims)
    return JobEnvelope(
        job_id="job-123", user_id="u1", stage=Stage.SYNTHESIZE, iteration=iteration,
        request=request, deadline_at=NOW + timedelta(minutes=10),
        plan=plan.model_copy(update={"checklist": assessed}),
        sources=SOURCES, scored_sources=scored, claims=claims,
        confidence=JobConfidenceCalculator().calculate(claims, scored),
        knowledge_gaps=knowledge_gaps(assessed),
        usage=Usage(by_stage={"plan": StageUsage(calls=1)}),
    )


@pytest.fixture(scope="module")
def result() -> ResearchResult:
    return build_report(make_envelope(), partial_reason=None)


def body_and_sources(report: str) -> tuple[str, dict[int, str]]:
    body, _, tail = report.partition("\n## Sources\n")
    entries = {int(m.group(1)): m.group(0) for m in re.finditer(r"^\[(\d+)\] .*$", tail, re.M)}
    return body, entries


def test_citation_numbers_helper() -> None:
    assert citation_numbers("a [1] b [23][4] c \\[5\\] d [x] [ 6]") == {1, 23, 4}
    assert citation_numbers("no citations") == set()


def test_every_citation_resolves(result: ResearchResult) -> None:
    body, entries = body_and_sources(result.report)
    numbers = citation_numbers(result.report)
    assert numbers, "the report cites nothing"
    assert numbers == set(entries) == set(range(1, len(result.output.sources) + 1))
    for n, line in entries.items():
        out = result.output.sources[n - 1]
        assert out.id == f"src_{n}"
        assert line.startswith(f"[{n}] ")
        assert out.url in line
    assert citation_numbers(body) == numbers  # every listed source is cited in the body


def test_sources_numbered_in_order_of_first_citation(result: ResearchResult) -> None:
    body, _ = body_and_sources(result.report)
    first_seen = list(dict.fromkeys(int(n) for n in re.findall(r"(?<!\\)\[(\d+)\]", body)))
    assert first_seen == sorted(first_seen) == list(range(1, len(first_seen) + 1))


def test_uncited_sources_are_not_listed(result: ResearchResult) -> None:
    assert "bananas" not in result.report.lower()
    assert [s.url for s in result.output.sources if "bananas" in s.url] == []
    assert {s.url for s in result.output.sources} == {
        "https://example.org/a", "https://example.org/b", "https://example.org/c",
        "https://example.org/d",
    }


def test_offline_label_and_heading(result: ResearchResult) -> None:
    assert result.report.startswith(f"# {QUESTION}\n")
    assert "offline engine without an LLM" in result.report
    assert result.engine == "offline"


def test_bullets_quote_claim_text_exactly_and_end_with_citations(result: ResearchResult) -> None:
    # The offline engine's claims are its sources' sentences (level "quoted"): shown in quotation marks.
    assert all(c.level == "quoted" for c in result.claims)
    bullets = [line for line in result.report.splitlines() if line.startswith("- \u201c")]
    for claim in result.claims:
        assert any(line.startswith(f"- \u201c{claim.text}\u201d") for line in bullets), claim.text
    findings = [line for line in bullets if "(confidence" in line]
    assert len(findings) == len(result.claims)  # each claim listed once
    assert all(re.search(r"(\[\d+\])+$", line) for line in findings)


def test_sections_per_checklist_item(result: ResearchResult) -> None:
    for item in CHECKLIST:
        assert f"\n## {item.description}\n" in result.report
    gpu_section = result.report.split("## Energy use of GPUs", 1)[1].split("\n## ", 1)[0]
    assert "Coverage: not covered." in gpu_section
    assert "No claim that passed the claim check answers this item." in gpu_section


def test_contradictions_section_pairs_both_sides_with_citations(result: ResearchResult) -> None:
    section = result.report.split("\n## Contradictions\n", 1)[1].split("\n## ", 1)[0]
    disputed = [c for c in result.claims if c.contradiction_flag]
    assert disputed
    _, entries = body_and_sources(result.report)
    for claim in disputed:
        block = section.split(f"- **Claim:** \u201c{claim.text}\u201d", 1)[1].split("- **Claim:**", 1)[0]
        against = re.findall(r"\*Disputed by\* \[(\d+)\]: \u201c([^\u201d]+)\u201d", block)
        assert against
        urls = {result.scored_sources[i].url for i in claim.contradicting_indices}
        assert {result.output.sources[int(n) - 1].url for n, _ in against} == urls
        for n, quote in against:  # the disputing side quotes its own source
            assert entries[int(n)]
            source = next(s for s in SOURCES if s.url == result.output.sources[int(n) - 1].url)
            assert quote in source.text
        assert re.search(r"\*Supported by\* (\[\d+\])+: ", block)


def test_unknowns_section_lists_open_items_and_what_was_searched(result: ResearchResult) -> None:
    section = result.report.split("\n## What remains unknown\n", 1)[1].split("\n## ", 1)[0]
    assert "- Energy use of GPUs (no search targeted it directly)" in section
    assert re.search(r"- Isolation of processes by the operating system \(partly covered\) \(searched: `", section)
    assert result.output.checklist_coverage.gaps == knowledge_gaps(
        make_envelope().plan.checklist)  # type: ignore[union-attr]
    assert "Energy use of GPUs" in result.output.checklist_coverage.gaps


def test_confidence_line(result: ResearchResult) -> None:
    m = re.search(r"^Confidence: (\d+)% \((\d+) claims from (\d+) sources\)$", result.report, re.M)
    assert m is not None
    assert int(m.group(1)) == round(result.confidence.confidence * 100)
    assert int(m.group(2)) == result.confidence.claim_count == len(result.claims)
    assert int(m.group(3)) == result.confidence.source_count == len(SOURCES)


def test_source_titles_that_look_like_citations_are_escaped(result: ResearchResult) -> None:
    assert "OS notes \\[7\\]" in result.report
    assert 7 not in citation_numbers(result.report)
    assert any(s.title == "OS notes [7]" for s in result.output.sources)


def test_sources_section_shows_locators_and_quotes(result: ResearchResult) -> None:
    _, entries = body_and_sources(result.report)
    tail = result.report.split("\n## Sources\n", 1)[1]
    for n, line in entries.items():
        out = result.output.sources[n - 1]
        source = next(s for s in SOURCES if s.url == out.url)
        assert out.snippet in source.text  # an exact quote
        assert re.search(r"\(char:\d+-\d+(; char:\d+-\d+)*\)$", line)
        assert f"> \u201c{out.snippet}\u201d" in tail


def test_output_object(result: ResearchResult) -> None:
    out = result.output
    assert out.trace_id == "job-123"
    assert out.answer == result.report
    assert out.iterations_used == 2
    assert out.status == "max_iterations_reached"  # gaps remain and both iterations ran
    assert {s.type for s in out.sources} == {"rag", "web"}
    assert out.checklist_coverage.satisfied == [
        i.description for i in make_envelope().plan.checklist  # type: ignore[union-attr]
        if i.status is CoverageStatus.SATISFIED
    ]
    assert out.checklist_coverage.satisfied
    assert result.usage == Usage(by_stage={"plan": StageUsage(calls=1)})
    assert result.partial is False and result.partial_reason is None
    assert "Partial report" not in result.report
    assert [c.id for c in result.claims] == [c.id for c in make_envelope().claims]
    assert ResearchResult.model_validate_json(result.model_dump_json()) == result


def test_status_completed_when_iterations_remain_or_no_gaps() -> None:
    assert build_report(make_envelope(iteration=0, max_iterations=10), partial_reason=None).output.status \
        == "completed"
    covered = [ChecklistItem(id="c1", description="Definition of threads")]
    res = build_report(make_envelope(checklist=covered), partial_reason=None)
    assert res.output.checklist_coverage.gaps == []
    assert res.output.status == "completed"
    assert "Nothing on the checklist is left open" in res.report


def test_partial_report() -> None:
    res = build_report(make_envelope(), partial_reason="deadline reached after 600 s")
    assert res.partial is True
    assert res.partial_reason == "deadline reached after 600 s"
    assert "**Partial report:** deadline reached after 600 s" in res.report


def test_empty_envelope() -> None:
    env = JobEnvelope(job_id="j", user_id="u", stage=Stage.SYNTHESIZE,
                      request=ResearchRequest(question="Why is the sky blue?"),
                      deadline_at=NOW)
    res = build_report(env, partial_reason=None)
    assert res.output.sources == []
    assert citation_numbers(res.report) == set()
    assert res.confidence.confidence == 0.0
    assert res.output.status == "completed"
    assert res.output.iterations_used == 1
    for heading in ("## Executive summary", "## Verified Findings", "## Contradictions", "## What remains unknown",
                    "## Confidence", "## Methodology", "## Sources"):
        assert heading in res.report
    assert "No source was cited." in res.report
    assert res.verified_findings == [] and res.sentences_removed == 0
