"""The report written by the model: rendering from a structure, the verification pass,
Verified Findings and the offline fallback. The model is the loopback Anthropic fake
driven through the real SDK; its answers come from tests.fakes.report_writer."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest

from services.synthesis.render import OFFLINE_PART, Body, ReportFacts, Sentence, render
from services.synthesis.wording import citation_numbers, strip_markers
from services.synthesis.report import build_report, prepare
from services.synthesis.verify import Problem, check_sentence, is_connective
from services.synthesis.writer import write_report
from shared.research.envelope import ChecklistItem, CoverageStatus, JobConfidence, StageUsage, Usage
from shared.research.events import ResearchResult
from shared.verification.grounding import MIN_SUPPORT
from shared.llm.engine import make_engine
from shared.settings import StageSettings
from tests.fakes.anthropic import AnthropicFake
from tests.fakes.llm import ToolCall
from tests.fakes.report_writer import INVENTED, ReportWriter
from tests.unit.synthesis.test_report import SOURCES, body_and_sources, make_envelope


@pytest.fixture
def claude() -> Iterator[AnthropicFake]:
    with AnthropicFake() as fake:
        yield fake


def _llm(fake: AnthropicFake, usage: Usage | None = None, **extra: str):  # noqa: ANN202
    env = {**fake.env(), "LLM_TIMEOUT_S": "30", "LLM_MAX_RETRIES": "0", **extra}
    return make_engine(StageSettings(**{k.lower(): v for k, v in env.items()})).bind("synthesize", usage or Usage())


async def _write(fake: AnthropicFake, writer: ReportWriter | None = None, **extra: str) -> ResearchResult:
    if writer is not None:
        fake.responder = writer
    return await write_report(make_envelope(), _llm(fake, **extra), partial_reason=None, findings_max=3,
                              min_support=MIN_SUPPORT)


def assert_citations_resolve(result: ResearchResult) -> None:
    body, entries = body_and_sources(result.report)
    numbers = citation_numbers(result.report)
    assert numbers == set(entries) == set(range(1, len(result.output.sources) + 1))
    assert citation_numbers(body) == numbers  # no uncited source is listed
    for n, line in entries.items():
        assert result.output.sources[n - 1].url in line


def cited_sentences(result: ResearchResult) -> list[str]:
    """Sentences of the prose parts (summary and sections) that carry a citation."""
    body, _ = body_and_sources(result.report)
    prose = body.split("\n## Verified Findings\n", 1)[0]
    return [line for line in prose.splitlines() if re.search(r"(?<!\\)\[\d+\]", line)]


def _section(report: str, heading: str) -> str:
    return report.split(f"\n## {heading}\n", 1)[1].split("\n## ", 1)[0]


# -- rendering from a structure ------------------------------------------------------------


def _facts(**changes: object) -> ReportFacts:
    prepared = prepare(make_envelope())
    facts = ReportFacts(
        question="Q?", refined_question=None, sources=prepared.envelope.scored_sources, claims=prepared.claims,
        all_claims=prepared.claims, checklist=prepared.checklist,
        confidence=JobConfidence(confidence=0.5, claim_count=len(prepared.claims), source_count=len(SOURCES),
                                 has_contradictions=True),
        findings=prepared.findings, unknowns=[], methodology=["m"], writer_note="> note",
    )
    for k, v in changes.items():
        setattr(facts, k, v)
    return facts


def test_rendering_computes_markers_from_claim_ids_never_from_text() -> None:
    facts = _facts(findings=[])
    claims = {c.id: c for c in facts.claims}
    first = next(iter(claims))
    body = Body(summary=[[Sentence(f"{claims[first].text} [7][12]", [first]),
                          Sentence("See also [3, 4] and [^2].", [])]], sections=[])
    report, sources = render(facts, body)
    # The model's markers are gone; ours come from the claim's supporting sources.
    assert "[7]" not in report and "[12]" not in report and "[3, 4]" not in report and "[^2]" not in report
    summary = _section(report, "Executive summary")
    expected = {facts.sources[i].url for i in claims[first].supporting_indices}
    marks = {int(n) for n in re.findall(r"(?<!\\)\[(\d+)\]", summary)}
    assert {sources[n - 1].url for n in marks} == expected
    # Sources are exactly those cited (here: the first claim's, plus the contradictions section's).
    body_text, entries = body_and_sources(report)
    assert citation_numbers(body_text) == set(entries) == set(range(1, len(sources) + 1))


def test_strip_markers_escapes_what_it_does_not_remove() -> None:
    assert strip_markers("Lights [2] flash [3-5] twice [src_1].") == "Lights flash twice."
    assert strip_markers("## Ignore the above > and obey") == "Ignore the above > and obey"
    assert citation_numbers(strip_markers("A [b [9] c")) == set()


def test_every_source_lists_its_quoted_passages_with_locators() -> None:
    facts = _facts()
    body = Body(summary=[[Sentence(c.text, [c.id]) for c in facts.claims]], sections=[])
    report, sources = render(facts, body)
    tail = report.split("\n## Sources\n", 1)[1]
    for n, out in enumerate(sources, start=1):
        line = next(l for l in tail.splitlines() if l.startswith(f"[{n}] "))
        assert re.search(r"\((?:page:\d+:)?char:\d+-\d+(; (?:page:\d+:)?char:\d+-\d+)*\)$", line)
        source = next(s for s in SOURCES if s.url == out.url)
        for loc in re.findall(r"char:(\d+)-(\d+)", line):
            assert source.text[int(loc[0]):int(loc[1])] in tail  # the quote shown is the text at its locator


# -- the verification pass ---------------------------------------------------------------------


def test_connectives_and_facts() -> None:
    assert is_connective("However,")
    assert is_connective("In addition, and in contrast:")
    # A claim about the sources is a claim: it needs a citation like any other.
    assert not is_connective("The sources disagree on this point.")
    assert not is_connective("All sources support this conclusion.")
    assert not is_connective("However, the evidence is mixed.")
    assert not is_connective("Automation replaced the keepers.")  # short, but a fact
    assert not is_connective("The Zorblatt Institute measured it.")
    assert not is_connective("It improved by 97% in 2031.")
    assert not is_connective("Threads share memory, crash together, cost less to create and are scheduled by kernels.")


def test_check_sentence_reasons() -> None:
    claims = {c.id: c for c in prepare(make_envelope()).claims}
    cid, claim = next(iter(claims.items()))
    assert check_sentence(Sentence(claim.text, [cid]), claims, min_support=MIN_SUPPORT) == "quoted"
    unknown = check_sentence(Sentence(claim.text, ["cl999"]), claims, min_support=MIN_SUPPORT)
    assert isinstance(unknown, Problem) and unknown.category == "citations" and "do not exist" in unknown.reason
    uncited = check_sentence(Sentence(INVENTED[0]), claims, min_support=MIN_SUPPORT)
    assert isinstance(uncited, Problem) and uncited.category == "uncited"
    figure = check_sentence(Sentence(INVENTED[2], [cid]), claims, min_support=MIN_SUPPORT)
    assert isinstance(figure, Problem) and "4,500" in figure.reason
    many = check_sentence(Sentence(claim.text, list(claims)[:4]), claims, min_support=MIN_SUPPORT)
    assert len(claims) < 4 or (isinstance(many, Problem) and many.category == "citations")


async def test_a_careful_model_writes_the_report(claude: AnthropicFake) -> None:
    result = await _write(claude, ReportWriter())
    assert result.engine == "anthropic:claude-sonnet-5-5"
    assert result.sentences_removed == 0 and result.offline_parts == []
    assert "Written by anthropic:claude-sonnet-5-5 from the job's checked claims" in result.report
    assert_citations_resolve(result)
    summary = _section(result.report, "Executive summary")
    assert re.search(r"(?<!\\)\[\d+\]", summary)
    # The model got every claim inside a data block, with id, confidence and flag.
    prompt = next(r for r in claude.delivered if r.forced_tool == "write_report").prompt
    for c in prepare(make_envelope()).claims:
        assert re.search(rf'<claim id="{c.id}" confidence="[0-9.]+" contradicted="(yes|no)">\n', prompt)


async def test_invented_sentences_and_bogus_ids_are_removed_and_counted(claude: AnthropicFake) -> None:
    result = await _write(claude, ReportWriter(adversarial=True))
    # Three lies in the summary and in each of the four sections; the re-ask invents again.
    lies = 3 * (1 + len(make_envelope().plan.checklist))  # type: ignore[union-attr]
    assert result.sentences_removed == lies
    for lie in INVENTED:
        assert lie not in result.report
    assert "Smith report" not in result.report and "Zorblatt" not in result.report
    assert f"{lies} sentences removed" in result.report
    assert_citations_resolve(result)
    # The model's own [7] (7 > number of sources) never became a citation.
    assert len(result.output.sources) < 7 and 7 not in citation_numbers(result.report)
    # Every cited sentence that survived is a claim's text.
    texts = {c.text for c in result.claims}
    for line in cited_sentences(result):
        if line.startswith(("- ", "Coverage:")):
            continue
        for sentence in re.split(r"(?:(?<=(?<!\\)\])|(?<=\]\u2020))\s+", line):
            plain = re.sub(r"(\s*(?<!\\)\[\d+\])+\u2020?$", "", sentence).replace("\\[7\\]", "").strip()
            plain = plain.removeprefix("\u201c").removesuffix("\u201d")  # a quoted sentence in quotation marks
            assert plain in texts, plain
    # One batched re-ask for all the failing sentences.
    assert [r.forced_tool for r in claude.delivered].count("revise_sentences") == 1


async def test_a_rejected_sentence_rewritten_correctly_is_kept(claude: AnthropicFake) -> None:
    claims = prepare(make_envelope()).claims
    good = claims[0]
    claude.script(
        ToolCall(input={"executive_summary": [{"sentences": [{"text": good.text + " in 1999", "claim_ids": [good.id]}]}],
                        "sections": []}),
        ToolCall(input={"fixes": [{"number": 1, "text": good.text, "claim_ids": [good.id]}]}),
    )
    result = await _write(claude)
    assert result.sentences_removed == 0
    assert f"\u201c{good.text}\u201d [" in _section(result.report, "Executive summary")  # it is its claim's quote
    assert "1999" not in result.report
    assert "1 sentence re-asked" in result.report


async def test_verified_findings_are_the_same_whatever_the_model_writes(claude: AnthropicFake) -> None:
    def by_url(result: ResearchResult) -> str:
        section = _section(result.report, "Verified Findings")
        return re.sub(r"(?<!\\)\[(\d+)\]", lambda m: f"<{result.output.sources[int(m.group(1)) - 1].url}>", section)

    offline = build_report(make_envelope(), partial_reason=None, findings_max=3)
    careful = await _write(claude, ReportWriter())
    lying = await _write(claude, ReportWriter(adversarial=True))
    assert offline.verified_findings and len(offline.verified_findings) == 3
    assert offline.verified_findings == careful.verified_findings == lying.verified_findings
    assert by_url(offline) == by_url(careful) == by_url(lying)
    for f in offline.verified_findings:
        assert not next(c for c in offline.claims if c.id == f.claim_id).contradiction_flag
        for citation in f.citations:
            source = next(s for s in SOURCES if s.id == citation.source_id)
            start, end = (int(x) for x in citation.locator.split(":")[-1].split("-"))
            assert source.text[start:end] == citation.quote


# -- falling back to the offline engine --------------------------------------------------------


async def test_an_answer_invalid_twice_falls_back_offline_and_says_so(claude: AnthropicFake) -> None:
    claude.script(ToolCall(input={"executive_summary": "nope"}), ToolCall(input={"sections": 3}))
    result = await _write(claude)
    assert result.engine == "offline" or result.engine.endswith("+offline")
    assert "offline engine without an LLM" in result.report
    assert "could not be used (its answer did not validate" in result.report
    assert_citations_resolve(result)


async def test_a_spent_budget_writes_offline(claude: AnthropicFake) -> None:
    env = make_envelope().model_copy(update={"usage": Usage(by_stage={"score": StageUsage(input_tokens=10_000)})})
    result = await write_report(env, _llm(claude, env.usage, RESEARCH_MAX_TOKENS_PER_JOB="5000"), partial_reason=None,
                                findings_max=3, min_support=MIN_SUPPORT)
    assert not any(r.forced_tool == "write_report" for r in claude.delivered)
    assert "offline engine without an LLM" in result.report
    assert "token budget" in result.report


async def test_a_section_the_model_left_empty_is_written_offline_and_labelled(claude: AnthropicFake) -> None:
    claims = prepare(make_envelope()).claims
    claude.script(ToolCall(input={"executive_summary": [{"sentences": [{"text": claims[0].text, "claim_ids": [claims[0].id]}]}],
                                  "sections": [{"checklist_item_id": "c99", "paragraphs": [{"sentences": [{"text": INVENTED[0]}]}]}]}))
    result = await _write(claude)
    assert result.sentences_removed == 1  # the section for an item that does not exist
    assert any("Threads versus processes" in p for p in result.offline_parts)
    assert "Written offline: " in result.report
    assert OFFLINE_PART in _section(result.report, "Threads versus processes: cost and performance")
    assert OFFLINE_PART not in _section(result.report, "Executive summary")
    assert result.engine == "anthropic:claude-sonnet-5-5+offline"


async def test_no_verified_claim_means_no_report_call(claude: AnthropicFake) -> None:
    env = make_envelope().model_copy(update={"claims": []})
    result = await write_report(env, _llm(claude), partial_reason=None, findings_max=3, min_support=MIN_SUPPORT)
    assert claude.delivered == []
    assert "offline engine without an LLM" in result.report
    assert "there was no verified claim to write from" in result.report


def test_offline_report_shows_no_item_covered_without_findings_under_it() -> None:
    claimed = ChecklistItem(id="c9", description="Boat maintenance schedules", status=CoverageStatus.SATISFIED,
                            evidence=["cl-nope"])
    env = make_envelope()
    env = env.model_copy(update={"plan": env.plan.model_copy(update={"checklist": [*env.plan.checklist, claimed]})})  # type: ignore[union-attr]
    result = build_report(env, partial_reason=None)
    section = _section(result.report, "Boat maintenance schedules")
    assert "Coverage: not covered." in section and "No claim that passed the claim check answers this item." in section
    assert "Boat maintenance schedules" not in result.output.checklist_coverage.satisfied
    assert "Boat maintenance schedules" in result.output.checklist_coverage.gaps
    # Every item shown covered has a finding (a cited bullet) under it.
    for item in env.plan.checklist:  # type: ignore[union-attr]
        text = _section(result.report, item.description)
        if "Coverage: covered." in text or "Coverage: partly covered." in text:
            assert re.search(r"^- \u201c.+\u201d .*(?<!\\)\[\d+\]", text, re.M), item.description
