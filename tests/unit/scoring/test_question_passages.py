"""Passages chosen by the job's questions from a source's whole text."""

from __future__ import annotations

from datetime import UTC, datetime

from services.scoring.claims import extract_claims
from services.scoring.engine import SourceScorer
from services.scoring.model_claims import MODEL_PASSAGES_PER_SOURCE
from services.scoring.passages import (
    PASSAGE_MAX_CHARS,
    PASSAGES_PER_SOURCE,
    example_end,
    heading_before,
    passages_by_source,
    question_passages,
)
from shared.research.envelope import Claim, CredibilityTier, RetrievalMethod, Source
from shared.research.locators import locate
from shared.research.text import canonicalize, text_hash

FILLER = [
    "The scheduler keeps a queue of runnable tasks for every core.",
    "Each task records the time it last ran and its priority.",
    "A context switch saves the registers of the task that stops.",
    "Interrupts arrive from devices and timers at any moment.",
    "Memory pages are mapped on first touch by the kernel.",
    "The page cache keeps recently read file blocks in memory.",
]
FACT = "Thread stacks reserve eight megabytes of address space each by default, which limits how many threads fit."


def long_page() -> str:
    """About sixty paragraphs of unrelated operating-system prose, the fact in the last third."""
    paragraphs = [" ".join(FILLER[(i + j) % len(FILLER)] for j in range(3)) for i in range(60)]
    paragraphs.insert(48, FACT)
    return canonicalize("\n\n".join(paragraphs))


def _scored(text: str, excerpt: str, url: str, title: str) -> tuple[Source, list]:
    """A local source whose search matched ``excerpt`` of ``text``, and it scored."""
    source = Source(id="s1", text=excerpt, excerpt_start=0, url=url, title=title, relevance_score=0.9,
                    credibility_tier=CredibilityTier.AUTHORITATIVE, domain_authority=80,
                    retrieval_method=RetrievalMethod.RAG, text_hash=text_hash(text), text_chars=len(text))
    return source, [SourceScorer().score(source, now=datetime(2025, 6, 1, tzinfo=UTC))]


def _claims_for(text: str, url: str, title: str, question: str) -> list[Claim]:
    """The offline claims for ``question`` from one local page, with its passages."""
    source, scored = _scored(text, text[:400], url, title)
    passages = passages_by_source(scored, {source.text_hash: text}, [question])
    return extract_claims(question, [question], [], scored, passages=passages)


def _cited(text: str, claim: Claim) -> str:
    """The text at the claim's one citation's locator."""
    (citation,) = claim.citations
    return text[slice(*map(int, citation.locator.removeprefix("char:").split("-")))]


def test_a_fact_in_the_last_third_of_a_long_page_is_offered() -> None:
    text = long_page()
    at = text.index(FACT)
    assert at > 2 * len(text) / 3
    passages = question_passages(text, ["What limits the number of threads?", "thread stack size"])
    assert any(FACT in p.text for p in passages)
    for p in passages:
        assert text[p.start:p.end] == p.text and p.locator == locate(p.start, p.end)
        assert len(p.text) <= PASSAGE_MAX_CHARS
    assert len(passages) <= PASSAGES_PER_SOURCE


def test_each_question_gets_its_own_best_passage_and_none_overlap() -> None:
    text = long_page()
    passages = question_passages(text, ["How large are thread stacks?", "What does the page cache keep?"])
    assert any(FACT in p.text for p in passages)
    assert any("page cache keeps recently read file blocks" in p.text for p in passages)
    spans = sorted((p.start, p.end) for p in passages)
    assert all(a_end <= b_start for (_, a_end), (b_start, _) in zip(spans, spans[1:], strict=False))


def test_no_question_words_no_passages() -> None:
    assert question_passages(long_page(), ["What is it?"]) == []
    assert question_passages("", ["threads"]) == []


def test_the_offline_claim_step_finds_the_deep_fact_through_its_passage() -> None:
    text = long_page()
    excerpt = text[:800]  # what the search matched: the page's opening
    source, scored = _scored(text, excerpt, "file:///os.md", "Operating systems")
    question = "What limits how many threads a process can have?"
    without = extract_claims(question, [question], [], scored)
    assert not any(FACT == c.text for c in without)
    passages = passages_by_source(scored, {source.text_hash: text}, [question])
    claims = extract_claims(question, [question], [], scored, passages=passages)
    (claim,) = [c for c in claims if c.text == FACT]
    (citation,) = claim.citations
    assert text[slice(*map(int, citation.locator.removeprefix("char:").split("-")))] == FACT


def test_a_command_line_is_no_heading() -> None:
    assert heading_before("--mixed\n\nResets the index but not the working tree.", 9) == "--mixed"
    at_prompt = "$ git fetch git://example.com/proj.git theirbranch\n\nThe fetched commits stay in FETCH_HEAD."
    assert heading_before(at_prompt, at_prompt.index("The fetched")) == ""
    variable = "$GIT_DIR/hooks/update refname\n\nThe refname parameter is relative to $GIT_DIR."
    assert heading_before(variable, variable.index("The refname")) == ""
    # A sentence going on in lower case after a command: the command is part of it.
    goes_on = "git fetch origin tag X\n\nto get my updated tag."
    assert heading_before(goes_on, goes_on.index("to get")) == ""


COLON = "Creation of virtual environments is done by executing the command venv:"
COMMAND = "python3 -m venv /path/to/new/virtual/environment"


def page_with_a_command() -> str:
    paragraphs = [" ".join(FILLER[(i + j) % len(FILLER)] for j in range(3)) for i in range(30)]
    paragraphs[20:20] = [COLON, COMMAND, "Running this command creates the target directory."]
    return canonicalize("\n\n".join(paragraphs))


def test_a_sentence_ending_in_a_colon_is_offered_with_its_one_line_example() -> None:
    text = page_with_a_command()
    passages = question_passages(text, ["How do you create a virtual environment?"])
    (passage,) = [p for p in passages if COLON in p.text]
    assert passage.text == f"{COLON}\n\n{COMMAND}" == text[passage.start:passage.end]
    # Prose or more than one line after the colon is no example of it.
    assert example_end(text, text.index(COLON) + len(COLON)) == passage.end
    assert example_end(f"{COLON}\n\nIt takes a path.", len(COLON)) is None
    assert example_end(f"{COLON}\n\n{COMMAND}\n{COMMAND}", len(COLON)) is None
    assert example_end(f"{COLON[:-1]}.\n\n{COMMAND}", len(COLON)) is None


def test_the_claim_step_quotes_the_command_a_sentence_announces() -> None:
    text = page_with_a_command()
    claims = _claims_for(text, "file:///venv.md", "venv", "How do you create a virtual environment?")
    (claim,) = [c for c in claims if COMMAND in c.text]
    assert claim.text == f"{COLON} {COMMAND}"
    assert _cited(text, claim) == f"{COLON}\n\n{COMMAND}"


def test_a_sentence_sharing_only_the_commoner_word_of_the_question_is_not_offered() -> None:
    # "thread" is in two sentences, "stack" in one: a sentence saying only "thread"
    # scores over a third of the best one's, and still answers nothing about stacks.
    best, loose = "Each thread has a stack of its own.", "A thread is a unit of execution."
    text = canonicalize("\n\n".join([best, *FILLER[:4], loose]))
    passages = question_passages(text, ["How large are thread stacks?"])
    assert [p.text for p in passages] == [best]


def test_the_model_is_offered_fewer_passages_a_source_than_the_offline_engine_reads() -> None:
    text = long_page()
    source, scored = _scored(text, text[:800], "file:///os.md", "Operating systems")
    questions = ["What does the scheduler keep?", "What does a context switch save?", "What do interrupts do?",
                 "How are memory pages mapped?", "What does the page cache keep?", "What limits threads?",
                 "When did each task last run?", "Where do interrupts come from?"]
    offline = passages_by_source(scored, {source.text_hash: text}, questions)
    for_model = passages_by_source(scored, {source.text_hash: text}, questions, limit=MODEL_PASSAGES_PER_SOURCE)
    assert MODEL_PASSAGES_PER_SOURCE < PASSAGES_PER_SOURCE
    assert len(offline[0]) > MODEL_PASSAGES_PER_SOURCE >= len(for_model[0]) > 0
