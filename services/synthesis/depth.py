"""How much the report says: the request's ``report_depth``.

* ``brief``: a one-screen answer. The executive summary with its key findings, at most
  :data:`BRIEF_SECTION_FINDINGS` findings (or stating sentences) per section, at most
  :data:`BRIEF_FINDINGS_MAX` Verified Findings.
* ``standard``: the full report (RESEARCH_VERIFIED_FINDINGS_MAX Verified Findings,
  each claim listed once, under the item it answers best).
* ``detailed``: every claim listed under every checklist item it answers (offline),
  up to :data:`DETAILED_FINDINGS_MAX` Verified Findings (or the setting, when higher),
  and with a model each section written in its own model call from that section's
  claims (writer.py), so a long report never meets a call's output limit. The scoring
  stage allows one more research iteration than ``max_iterations`` while the plan's
  checklist has open items (services/scoring/service.py).

Whatever the depth, the same checks apply to every sentence shown; a shorter report
leaves claims out of the prose, never out of the result's claims, and its methodology
says so.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from shared.research.envelope import JobEnvelope

__all__ = [
    "BRIEF_FINDINGS_MAX",
    "BRIEF_SECTION_FINDINGS",
    "DETAILED_FINDINGS_MAX",
    "DepthRules",
    "capped",
    "methodology_line",
    "rules_of",
]

BRIEF_SECTION_FINDINGS = 2
BRIEF_FINDINGS_MAX = 3
BRIEF_SUMMARY_SENTENCES = 3
DETAILED_FINDINGS_MAX = 10


@dataclass(frozen=True)
class DepthRules:
    depth: str
    section_findings: int | None = None  # at most this many findings (stating sentences) per section; None: all
    summary_sentences: int | None = None  # at most this many stating sentences in a model's summary; None: all
    every_item: bool = False  # offline: a claim listed under every item it answers, not only its best
    section_calls: bool = False  # with a model: the summary, then each section, in its own call

    def findings_max(self, configured: int) -> int:
        """The number of Verified Findings at this depth (``configured``: the setting's)."""
        if self.depth == "brief":
            return min(configured, BRIEF_FINDINGS_MAX)
        if self.depth == "detailed":
            return max(configured, DETAILED_FINDINGS_MAX)
        return configured

    def prompt_note(self) -> str:
        """A line appended to the report prompt (empty at the standard depth)."""
        if self.depth == "brief":
            return (f"\nDepth: brief. A one-screen answer: the executive summary one paragraph of at most "
                    f"{BRIEF_SUMMARY_SENTENCES} sentences; each section at most {BRIEF_SECTION_FINDINGS} sentences.")
        return ""


STANDARD = DepthRules("standard")
RULES = {
    "brief": DepthRules("brief", section_findings=BRIEF_SECTION_FINDINGS, summary_sentences=BRIEF_SUMMARY_SENTENCES),
    "standard": STANDARD,
    "detailed": DepthRules("detailed", every_item=True, section_calls=True),
}


def rules_of(envelope: JobEnvelope) -> DepthRules:
    return RULES.get(getattr(envelope.request, "report_depth", "standard"), STANDARD)


def capped(paragraphs: Sequence[list], limit: int | None) -> list[list]:
    """The paragraphs up to their ``limit``-th stating sentence (one citing a claim);
    the connectives before it kept, any after it dropped. ``limit`` None: all."""
    if limit is None:
        return [list(p) for p in paragraphs]
    out: list[list] = []
    stated = 0
    for paragraph in paragraphs:
        if stated >= limit:
            break
        kept: list = []
        for sentence in paragraph:
            if stated >= limit:
                break
            kept.append(sentence)
            if sentence.claim_ids:
                stated += 1
        while kept and not kept[-1].claim_ids:  # a connective leads nowhere at the end
            kept.pop()
        if kept:
            out.append(kept)
    return out


def methodology_line(rules: DepthRules, findings: int) -> str | None:
    """The methodology's account of the depth (None at the standard depth)."""
    if rules.depth == "brief":
        return (f"Report depth: brief (a one-screen answer): at most {BRIEF_SECTION_FINDINGS} findings per section and "
                f"{findings} Verified Findings are shown; every claim kept is still in the result's claims.")
    if rules.depth == "detailed":
        return ("Report depth: detailed: every claim is listed under each checklist item it answers, up to "
                f"{findings} Verified Findings are shown, and with a model each section is written in its own call "
                "from that section's claims.")
    return None
