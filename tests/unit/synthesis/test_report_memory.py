"""The report reads the research memory: the Confidence section names the distinct
insights it rests on, "What remains unknown" lists the searches the memory says were
tried for each open item, and the result keeps the memory it was written from."""

from __future__ import annotations

from services.scoring.memory import updated_memory
from services.synthesis.report import build_report
from shared.research.envelope import ChecklistItem, CoverageStatus
from shared.research.memory import ResearchMemory
from tests.unit.synthesis.test_report import make_envelope


def test_the_report_uses_the_research_memory() -> None:
    checklist = [
        ChecklistItem(id="c1", description="Memory sharing between threads", status=CoverageStatus.SATISFIED),
        ChecklistItem(id="c2", description="Scheduling fairness of green threads", status=CoverageStatus.UNSATISFIED),
    ]
    envelope = make_envelope(checklist=checklist)
    searched = ResearchMemory().with_searches(
        [("web", "green threads scheduling fairness"), ("rag", "bananas potassium")],
        iteration=0)
    memory = updated_memory(searched, envelope.claims, checklist, iteration=1)
    assert memory.insights and memory.gaps[0].tried
    result = build_report(envelope.model_copy(update={"memory": memory}), partial_reason=None)

    confidence = result.report.split("## Confidence", 1)[1].split("\n## ", 1)[0]
    best = memory.insights[0]
    assert f"It rests on {len(memory.insights)} distinct insight" in confidence
    assert f'the strongest: "{best.text}"' in confidence
    unknown = result.report.split("## What remains unknown", 1)[1].split("\n## ", 1)[0]
    line = next(ln for ln in unknown.splitlines() if "Scheduling fairness of green threads" in ln)
    assert "`green threads scheduling fairness`" in line and "bananas" not in line
    assert result.memory == memory


def test_a_report_without_insights_says_nothing_of_them() -> None:
    result = build_report(make_envelope(), partial_reason=None)
    assert "distinct insight" not in result.report
    assert result.memory == ResearchMemory()
