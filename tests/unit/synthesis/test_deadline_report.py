"""The report of a job the deadline cut: its methodology names what the deadline cut,
and the synthesis stage's partial reason says why the report is partial."""

from __future__ import annotations

from datetime import timedelta

from services.synthesis.report import build_report
from shared.research.envelope import DEADLINE_NOTE, JobEnvelope, ResearchRequest, utcnow
from shared.subjects import Stage

CUTS = ["deadline: retrieve: 2 of 4 searches cut (web: 2)", "deadline: digest: 3 of 5 sources passed on undigested"]


def _envelope(notes: list[str]) -> JobEnvelope:
    return JobEnvelope(job_id="j", user_id="u", stage=Stage.SYNTHESIZE, request=ResearchRequest(question="Why is the sky blue?"),
                       deadline_at=utcnow() - timedelta(seconds=1), notes=notes)


def test_the_methodology_names_what_the_deadline_cut() -> None:
    res = build_report(_envelope([DEADLINE_NOTE, *CUTS]), partial_reason="the job's time budget ran out")
    methodology = res.report.split("## Methodology", 1)[1]
    assert ("- The job's deadline was reached; it cut: retrieve: 2 of 4 searches cut (web: 2); "
            "digest: 3 of 5 sources passed on undigested.") in methodology


def test_no_deadline_line_when_nothing_was_cut() -> None:
    res = build_report(_envelope(["claims: offline (token budget spent)"]), partial_reason=None)
    assert "deadline was reached" not in res.report and not res.partial
