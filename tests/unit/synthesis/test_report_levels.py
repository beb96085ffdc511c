"""How far each report sentence was checked, as the report shows it: a source's words in
quotation marks, an entailed sentence as plain prose, one checked by code only with a
dagger (and the legend, only then); the plan shown as the planner's wording, never as a
finding; the methodology's account of the checks and the judge."""

from __future__ import annotations

import re

from services.synthesis.render import (
    LEVEL_LEGEND,
    PLAN_NOTE,
    Body,
    ReportFacts,
    Section,
    Sentence,
    level_of,
    render,
    sentence_levels,
)
from services.synthesis.wording import LEVEL_MARK, plain
from services.synthesis.report import Draft, assemble, build_report, methodology, prepare
from shared.research.envelope import Citation, Claim, JobConfidence
from shared.research.events import CouncilReview, VerificationSummary
from tests.unit.synthesis.test_report import SOURCES, make_envelope

OPEN, CLOSE = "\u201c", "\u201d"
MODEL = "anthropic:claude-sonnet-5-5"
JUDGE = "anthropic:claude-haiku-5"


def _prepared():  # noqa: ANN202
    return prepare(make_envelope(), findings_max=3)


def _facts(prepared, **changes: object) -> ReportFacts:  # noqa: ANN001
    facts = ReportFacts(
        question="Q?", refined_question=None, sources=prepared.envelope.scored_sources, claims=prepared.claims,
        all_claims=prepared.claims, checklist=prepared.checklist,
        confidence=JobConfidence(confidence=0.5, claim_count=len(prepared.claims), source_count=len(SOURCES),
                                 has_contradictions=True),
        findings=[], unknowns=[], methodology=["m"], writer_note="> note",
    )
    for k, v in changes.items():
        setattr(facts, k, v)
    return facts


def _summary(report: str) -> str:
    return report.split("\n## Executive summary\n", 1)[1].split("\n## ", 1)[0]


def _three(prepared) -> tuple[Claim, Claim, Claim]:  # noqa: ANN001
    a, b, c = prepared.claims[:3]
    return a, b, c


def _body(prepared, *, supported: bool = True) -> Body:  # noqa: ANN001
    a, b, c = _three(prepared)
    sentences = [
        Sentence(a.text, [a.id], level="quoted"),
        Sentence("In short, creating threads costs less than creating processes.", [b.id], level="entailed"),
        Sentence("However,", []),
    ]
    if supported:
        sentences.append(Sentence("A thread shares its process's memory.", [c.id], level="supported"))
    return Body(summary=[sentences], sections=[Section(item=prepared.checklist[0])])


# -- sentences by level ----------------------------------------------------------------------


def test_quoted_sentences_in_quotation_marks_entailed_plain_supported_with_a_dagger() -> None:
    prepared = _prepared()
    a, _, _ = _three(prepared)
    report, _ = render(_facts(prepared), _body(prepared))
    summary = _summary(report)
    assert re.search(rf"{OPEN}{re.escape(a.text)}{CLOSE} (\[\d+\])+ ", summary)  # quote, then its citation
    assert re.search(r" In short, creating threads costs less than creating processes\. (\[\d+\])+ However,", summary)
    assert re.search(rf"A thread shares its process's memory\. (\[\d+\])+{LEVEL_MARK}", summary)
    # The dagger follows only the supported sentence's citation; the connective has none.
    assert summary.replace(LEVEL_LEGEND, "").count(LEVEL_MARK) == 1
    assert "However, A thread" in summary
    # The legend is said once, under the executive summary, before the checklist sections.
    assert report.count(LEVEL_LEGEND) == 1
    assert report.index(LEVEL_LEGEND) > report.index("## Executive summary")
    assert report.index(LEVEL_LEGEND) < report.index(PLAN_NOTE) < report.index("\n## Definition of threads")


def test_no_legend_without_a_dagger() -> None:
    prepared = _prepared()
    report, _ = render(_facts(prepared), _body(prepared, supported=False))
    assert LEVEL_MARK not in report and LEVEL_LEGEND not in report


def test_a_sentence_citing_claims_without_a_level_shows_as_checked_by_code_only() -> None:
    prepared = _prepared()
    a = prepared.claims[0]
    body = Body(summary=[[Sentence("Threads are cheaper to create.", [a.id])]], sections=[])
    report, _ = render(_facts(prepared), body)
    assert re.search(rf"Threads are cheaper to create\. (\[\d+\])+{LEVEL_MARK}", report)
    assert LEVEL_LEGEND in report


def test_the_writer_cannot_forge_a_level() -> None:
    prepared = _prepared()
    a, b, _ = _three(prepared)
    body = Body(summary=[[Sentence(f'"Threads are cheap to create." {LEVEL_MARK}', [b.id], level="entailed"),
                          Sentence(f"{OPEN}Creating threads is cheap.{CLOSE}", [a.id], level="supported")]],
                sections=[])
    report, _ = render(_facts(prepared), body)
    summary = _summary(report)
    # Quotation marks around a whole sentence that is not a quote are dropped, and so is
    # any dagger the writer put in: only the renderer marks a level.
    assert '"Threads' not in summary and f"{OPEN}Creating" not in summary
    assert re.search(r"Threads are cheap to create\. (\[\d+\])+ Creating", summary)
    assert re.search(rf"Creating threads is cheap\. (\[\d+\])+{LEVEL_MARK}", summary)
    assert summary.replace(LEVEL_LEGEND, "").count(LEVEL_MARK) == 1


def test_offline_bullets_show_their_claims_levels() -> None:
    prepared = _prepared()
    quoted, paraphrase = prepared.claims[0], prepared.claims[1].model_copy(update={"level": "supported"})
    facts = _facts(prepared, claims=[quoted, paraphrase, *prepared.claims[2:]])
    body = Body(summary=[], sections=[Section(item=None, findings=[quoted, paraphrase], offline=True)])
    report, _ = render(facts, body)
    assert f"- {OPEN}{quoted.text}{CLOSE} (confidence" in report
    line = next(x for x in report.splitlines() if x.startswith(f"- {paraphrase.text} (confidence"))
    assert line.endswith(LEVEL_MARK)
    assert LEVEL_LEGEND in report
    assert sentence_levels(body, facts.claims) == {"quoted": 1, "supported": 1}


def test_a_claim_without_a_level_is_quoted_only_when_it_is_its_quote() -> None:
    quote = Citation(source_id="s", locator="char:0-20", quote="Lights  flash at night.")

    def claim(text: str, **kw: object) -> Claim:
        return Claim(id="c1", text=text, supporting_indices=[0], citations=[quote], **kw)

    assert level_of(claim("Lights flash at night.")) == "quoted"
    assert level_of(claim("Lights flash after dark.")) == "supported"
    assert level_of(claim("Anything.", level="entailed")) == "entailed"


def test_verified_findings_show_their_level() -> None:
    prepared = _prepared()
    assert prepared.findings
    report, _ = render(_facts(prepared, findings=prepared.findings), Body(summary=[], sections=[]))
    section = report.split("\n## Verified Findings\n", 1)[1].split("\n## ", 1)[0]
    assert "each with its check level (quoted: the claim is a source's own words)" in section
    for n, f in enumerate(prepared.findings, start=1):
        assert f"{n}. {OPEN}{f.text}{CLOSE} (quoted, confidence" in section
        assert f"   > {OPEN}{f.citations[0].quote}{CLOSE} [" in section


def test_an_entailed_finding_is_plain_and_says_so() -> None:
    prepared = _prepared()
    first = prepared.findings[0]
    claims = [c.model_copy(update={"level": "entailed"}) if c.id == first.claim_id else c for c in prepared.claims]
    report, _ = render(_facts(prepared, claims=claims, findings=[first]), Body(summary=[], sections=[]))
    section = report.split("\n## Verified Findings\n", 1)[1].split("\n## ", 1)[0]
    assert "entailed: a verifier model judged its quotes to entail it" in section
    assert f"1. {first.text} (entailed, confidence" in section


# -- the plan is the planner's wording --------------------------------------------------------


def test_plain_strips_links_html_and_markdown() -> None:
    assert plain("See [the **docs**](https://x.org/a_(b)) now") == "See the docs now"
    assert plain("<b>Bold</b> and <a href='https://evil.example'>a link</a> <!-- hidden -->") == "Bold and a link"
    assert plain("<https://a.example/b> ![chart](https://x/y.png)") == "https://a.example/b chart"
    assert plain("## **Heading** with `code` and __under__") == "Heading with code and under"
    assert plain("> > quoted\n  twice") == "quoted twice"
    assert plain("#1 priority, a < b > c, 3 * 4") == "#1 priority, a < b > c, 3 * 4"
    assert plain("Cited [3] here") == "Cited [3] here"  # [n] is escape()'s


def test_the_plan_is_shown_as_the_planners_wording() -> None:
    prepared = _prepared()
    item = prepared.checklist[0].model_copy(update={"description": "## How **threads** share [memory](https://evil.example)"})
    reviews = [CouncilReview(subject="brief", model="openai:b", agree=False,
                             reasons=["Misses <b>cost</b>; see [this](https://evil.example) [2]"])]
    facts = _facts(prepared, refined_question="What do <i>threads</i> and **processes** trade off?",
                   checklist=[item], unknowns=[("Energy use of **GPUs**", ["gpu [energy](https://x.example) `use`"])],
                   council=reviews)
    report, _ = render(facts, Body(summary=[], sections=[Section(item=item)]))
    assert "Refined question: What do threads and processes trade off? *(the planner's wording, not a finding)*" in report
    assert PLAN_NOTE in report
    assert "\n## How threads share memory\n" in report
    unknown = report.split("\n## What remains unknown\n", 1)[1].split("\n## ", 1)[0]
    assert "in the planner's wording" in unknown
    assert "- Energy use of GPUs (searched: `gpu energy use`)" in unknown
    council = report.split("\n## Council review\n", 1)[1].split("\n## ", 1)[0]
    assert "*The reviewing models' own words, not checked against the sources.*" in council
    assert "openai:b **disagrees** with the research plan: Misses cost; see this \\[2\\]" in council
    assert "evil.example" not in report and "<b>" not in report and "<i>" not in report


def test_no_plan_note_without_checklist_sections() -> None:
    prepared = _prepared()
    report, _ = render(_facts(prepared), Body(summary=[], sections=[Section(item=None)]))
    assert PLAN_NOTE not in report


# -- the methodology and the top line ------------------------------------------------------------


def _model_draft(prepared, verification: VerificationSummary | None) -> Draft:  # noqa: ANN001
    return Draft(body=_body(prepared), writer=MODEL, sentences_removed=3, sentences_reasked=1,
                 verification=verification)


def test_methodology_with_the_judge() -> None:
    prepared = _prepared()
    summary = VerificationSummary(sentences={"quoted": 1, "entailed": 1, "supported": 1},
                                  sentences_removed={"negation": 1, "judge": 2}, judge="ran", judge_model=JUDGE,
                                  judge_tokens=1234)
    result = assemble(prepared, _model_draft(prepared, summary), partial_reason=None)
    assert result.verification == summary
    lines = methodology(prepared, _model_draft(prepared, summary), 3, summary)
    assert ("Sentences: 3 stating sentences shown: 1 quoted (a source's own words), 1 entailed (a verifier model "
            f"judged their quotes to entail them), 1 supported (checked by code only, marked {LEVEL_MARK}); "
            "3 sentences removed (judge 2, negation 1).") in lines
    assert (f"Entailment judge: {JUDGE} judged 3 sentences: 1 entailed, 2 removed as not following from their "
            "quotes, 1,234 tokens.") in lines
    assert "verified" not in " ".join(lines).replace("Verified Findings", "")
    top = result.report.split("\n", 3)[2]
    assert top.startswith(f"> Written by {MODEL} from the job's checked claims")
    assert f"(3 sentences removed): 1 quoted, 1 entailed, 1 checked by code only ({LEVEL_MARK})." in top


def test_methodology_without_the_judge() -> None:
    prepared = _prepared()
    summary = VerificationSummary(sentences_removed={"number": 3}, judge="not run: no model configured")
    lines = methodology(prepared, _model_draft(prepared, summary), 3, summary)
    assert "Entailment judge: not run: no model configured: sentences are checked by code only." in lines
    assert any(x.startswith("Sentences: 3 stating sentences shown") and x.endswith("3 sentences removed (number 3).")
               for x in lines)
    assert any(x.startswith(f"Written by {MODEL} from the checked claims only") and "1 sentence re-asked" in x
               for x in lines)


def test_the_offline_report_carries_its_summary_and_says_its_sentences_are_quotes() -> None:
    result = build_report(make_envelope(), partial_reason=None)
    v = result.verification
    assert v.sentences and set(v.sentences) == {"quoted"}
    assert v.claims == {"quoted": len(result.claims)}
    assert v.judge.startswith("not run")
    methodology_text = result.report.split("\n## Methodology\n", 1)[1].split("\n## ", 1)[0]
    assert f"- Sentences: {sum(v.sentences.values())} stating sentences shown: {v.sentences['quoted']} quoted" in methodology_text
    assert "- Entailment judge: not run" in methodology_text
    assert f"Claims: {len(result.claims)} claims kept ({len(result.claims)} quoted)" in methodology_text
    assert LEVEL_MARK not in result.report
    assert result.report.count(OPEN) == result.report.count(CLOSE) > 0
