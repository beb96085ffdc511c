"""The offline claim extractor and checklist coverage."""

from __future__ import annotations

from shared.research.text import terms

from datetime import UTC, datetime

from services.scoring.claim_relevance import leaning as _leaning
from services.scoring.claims import extract_claims
from services.scoring.coverage import assess_coverage
from services.scoring.engine import ClaimScorer, SourceScorer
from shared.research.claims import claim_matches_item, item_terms, knowledge_gaps
from shared.research.envelope import (
    ChecklistItem,
    Claim,
    CoverageStatus,
    CredibilityTier,
    DigestPayload,
    EvidenceSnippet,
    RetrievalMethod,
    ScoredSource,
    Source,
)
from shared.research.text import canonicalize, sentence_spans, text_hash

NOW = datetime(2025, 6, 1, tzinfo=UTC)
QUESTION = "What are the trade-offs between threads and processes?"
SUBS = [QUESTION, "What are threads?", "What are processes?",
        "How do threads and processes compare in cost and performance?"]


def make_source(sid: str, text: str, *, digest: bool = True, da: int = 60,
                tier: CredibilityTier = CredibilityTier.SECONDARY) -> Source:
    text = canonicalize(text)
    payload = None
    if digest:
        snippets = [EvidenceSnippet(text=text[s:e], locator=f"char:{s}-{e}", relevance_score=0.7)
                    for s, e in sentence_spans(text)]
        payload = DigestPayload(
            query_hash="0123abcd", summary=text[:60], key_points=[], evidence_snippets=snippets,
            original_chars=len(text), digest_chars=len(text), compression_ratio=1.0,
            source_text_hash=text_hash(text).replace("sha256-", "sha256:"),
        )
    return Source(id=sid, text=text, url=f"https://example.org/{sid}", title=f"Title {sid}",
                  relevance_score=0.8, credibility_tier=tier, domain_authority=da,
                  retrieval_method=RetrievalMethod.RAG, text_hash=text_hash(text),
                  text_chars=len(text), digest=payload)


def score(sources: list[Source]) -> list[ScoredSource]:
    return SourceScorer().score_all(sources, now=NOW)


def locate(locator: str) -> tuple[int, int]:
    start, end = locator.removeprefix("char:").split("-")
    return int(start), int(end)


def by_text(claims: list[Claim], fragment: str) -> Claim:
    matches = [c for c in claims if fragment in c.text]
    assert len(matches) == 1, (fragment, [c.text for c in claims])
    return matches[0]


def test_near_duplicates_across_sources_become_one_claim_with_exact_citations() -> None:
    sources = score([
        make_source("a", "Threads share the memory of their process. Creating a thread is cheap."),
        make_source("b", "Threads of one process share its memory.", da=95,
                    tier=CredibilityTier.PRIMARY_SOURCE),
        make_source("c", "Bananas are a yellow fruit rich in potassium."),
    ])
    claims = extract_claims(QUESTION, SUBS, [], sources)
    shared = by_text(claims, "share")
    assert shared.supporting_indices == [0, 1]
    # best-supported snippet: source b scores higher, so its sentence is the claim
    assert shared.text == "Threads of one process share its memory."
    assert [c.source_id for c in shared.citations] == ["a", "b"]
    for citation, index in zip(shared.citations, shared.supporting_indices, strict=True):
        start, end = locate(citation.locator)
        assert sources[index].text[start:end] == citation.quote
    assert shared.citations[1].quote == shared.text
    # the irrelevant source yields nothing
    assert all(2 not in c.supporting_indices for c in claims)
    assert [c.id for c in claims] == [f"cl{n}" for n in range(1, len(claims) + 1)]


def test_singular_and_plural_terms_meet() -> None:
    assert set(terms("a process")) == set(terms("the processes"))


def test_negated_sentence_is_a_contradiction_not_a_duplicate() -> None:
    sources = score([
        make_source("a", "Threads share memory with other threads of the process."),
        make_source("b", "Threads do not share memory with other threads of the process."),
        make_source("c", "Threads share memory with the other threads of their process."),
    ])
    claims = ClaimScorer().score_all(extract_claims(QUESTION, SUBS, [], sources), sources)
    positive = by_text(claims, "Threads share memory")
    negative = by_text(claims, "do not share")
    assert positive.supporting_indices == [0, 2]
    assert positive.contradicting_indices == [1]
    assert negative.supporting_indices == [1]
    assert negative.contradicting_indices == [0, 2]
    assert positive.contradiction_flag and negative.contradiction_flag
    assert positive.confidence_score > negative.confidence_score


def test_unrelated_negation_is_no_contradiction() -> None:
    sources = score([
        make_source("a", "Threads share memory with other threads of the process."),
        make_source("b", "Processes cannot be scheduled without a kernel on bare hardware."),
    ])
    claims = extract_claims(QUESTION, SUBS, [], sources)
    assert all(c.contradicting_indices == [] for c in claims)


def test_text_without_digest_is_split_into_sentences_without_locators() -> None:
    sources = score([make_source(
        "a", "# Threads and processes\n\nCreating a process is slower than creating a thread [12]. Hi. "
        "Processes are isolated from each other.\n\nThreads versus processes",
        digest=False)])
    claims = extract_claims(QUESTION, SUBS, [], sources)
    # "Hi." is too short to be a claim, headings are not statements; the sentence
    # sharing more terms ranks first
    assert [c.text for c in claims] == [
        "Creating a process is slower than creating a thread.",
        "Processes are isolated from each other.",
    ]
    slower = by_text(claims, "slower")
    # the footnote marker is gone from the claim, the quote is verbatim
    assert slower.citations[0].quote == "Creating a process is slower than creating a thread [12]."
    assert slower.citations[0].locator == ""
    assert slower.citations[0].quote in sources[0].text


def test_undigested_excerpt_with_known_offset_is_cited_with_verifying_locators() -> None:
    canonical = canonicalize("Preface text here.\n\n" + "Creating a process is slower than creating a thread. "
                             "Processes are isolated from each other.")
    at = canonical.index("Creating")
    source = make_source("a", canonical, digest=False).model_copy(
        update={"text": canonical[at:], "excerpt_start": at, "text_chars": len(canonical)})
    claims = extract_claims(QUESTION, SUBS, [], score([source]))
    assert claims
    for claim in claims:
        for citation in claim.citations:
            start, end = locate(citation.locator)
            assert canonical[start:end] == citation.quote

    # A PDF excerpt: the locator names the page the quote starts on.
    pdf = source.model_copy(update={"page_starts": [0, at]})
    cited = extract_claims(QUESTION, SUBS, [], score([pdf]))[0].citations[0]
    assert cited.locator.startswith("page:2:char:")
    assert canonical[slice(*locate(cited.locator.removeprefix("page:2:")))] == cited.quote


def test_digest_evidence_is_preferred_over_text() -> None:
    source = make_source("a", "Threads are lightweight units of execution.")
    assert source.digest is not None
    source = source.model_copy(update={
        "text": "Processes are heavyweight units of execution.",
    })
    claims = extract_claims(QUESTION, SUBS, [], score([source]))
    assert [c.text for c in claims] == ["Threads are lightweight units of execution."]


def test_relevance_order_cap_and_determinism() -> None:
    sources = score([
        make_source("a", "Threads and processes differ in cost. Kernels schedule work. "
                         "Processes own resources. The weather was mild."),
        make_source("b", "Threads and processes differ in their cost."),
    ])
    claims = extract_claims(QUESTION, SUBS, [], sources)
    assert claims[0].text.startswith("Threads and processes differ")
    assert claims[0].supporting_indices == [0, 1]
    assert all("weather" not in c.text and "Kernels" not in c.text for c in claims)
    capped = extract_claims(QUESTION, SUBS, [], sources, max_claims=1)
    assert [c.id for c in capped] == ["cl1"]
    assert capped[0].text == claims[0].text
    assert extract_claims(QUESTION, SUBS, [], sources) == claims


def test_claims_carry_matching_checklist_items() -> None:
    checklist = [ChecklistItem(id="c1", description="Definition of threads"),
                 ChecklistItem(id="c2", description="Threads versus processes: cost and performance"),
                 ChecklistItem(id="c3", description="Definition of bananas")]
    sources = score([make_source("a", "Threads and processes differ in cost.")])
    (claim,) = extract_claims(QUESTION, SUBS, checklist, sources)
    assert claim.checklist_item_ids == ["c1", "c2"]


# -- coverage ---------------------------------------------------------------------------------


def _claim(cid: str, text: str) -> Claim:
    return Claim(id=cid, text=text, supporting_indices=[0])


def test_coverage_statuses() -> None:
    checklist = [
        ChecklistItem(id="c1", description="Definition of threads"),  # one subject term
        ChecklistItem(id="c2", description="Threads versus processes: cost and performance"),
        ChecklistItem(id="c3", description="Isolation of processes"),
        ChecklistItem(id="c4", description="Bananas and potassium"),
        ChecklistItem(id="c5", description="Evidence and examples"),  # no subject terms
    ]
    claims = [
        _claim("cl1", "Threads share memory."),
        _claim("cl2", "Creating a thread costs less than creating a process."),
        _claim("cl3", "Processes get isolation from the kernel."),
    ]
    out = assess_coverage(checklist, claims)
    assert [(i.id, i.status, i.evidence) for i in out] == [
        ("c1", CoverageStatus.SATISFIED, ["cl1", "cl2"]),
        ("c2", CoverageStatus.PARTIAL, ["cl2"]),  # cl1 and cl3 share one term only
        ("c3", CoverageStatus.PARTIAL, ["cl3"]),
        ("c4", CoverageStatus.UNSATISFIED, []),
        ("c5", CoverageStatus.UNSATISFIED, []),
    ]
    # the input items are untouched
    assert all(i.status is CoverageStatus.UNSATISFIED and i.evidence == [] for i in checklist)


def test_knowledge_gaps() -> None:
    checklist = [
        ChecklistItem(id="c1", description="Definition of threads", status=CoverageStatus.SATISFIED),
        ChecklistItem(id="c2", description="Cost of threads", status=CoverageStatus.PARTIAL),
        ChecklistItem(id="c3", description="When to choose threads", status=CoverageStatus.UNSATISFIED),
    ]
    assert knowledge_gaps(checklist) == ["Cost of threads - partial coverage", "When to choose threads"]
    assert knowledge_gaps([]) == []


# -- answering the checklist ----------------------------------------------------------------


def _excerpt_source(sid: str, document: str, excerpt: str, *, digest_text: str | None = None,
                    relevance: float = 0.8) -> Source:
    """A local-corpus source: its excerpt is a passage of the canonical document, at a
    known offset; its digest (when given) quotes other sentences of the document."""
    canonical = canonicalize(document)
    at = canonical.index(excerpt)
    payload = None
    if digest_text is not None:
        s = canonical.index(digest_text)
        payload = DigestPayload(
            query_hash="0123abcd", summary="", key_points=[],
            evidence_snippets=[EvidenceSnippet(text=digest_text, locator=f"char:{s}-{s + len(digest_text)}",
                                               relevance_score=1.0)],
            original_chars=len(canonical), digest_chars=len(digest_text), compression_ratio=0.1,
            source_text_hash=text_hash(canonical).replace("sha256-", "sha256:"),
        )
    return Source(id=sid, text=excerpt, excerpt_start=at, url=f"https://example.org/{sid}", title=f"Title {sid}",
                  relevance_score=relevance, credibility_tier=CredibilityTier.SECONDARY, domain_authority=60,
                  retrieval_method=RetrievalMethod.RAG, text_hash=text_hash(canonical),
                  text_chars=len(canonical), digest=payload)


def test_excerpt_sentences_are_claims_beside_the_digest_with_verifying_locators() -> None:
    document = ("Threads and processes are both units of scheduling in Python programs. " * 3
                + "\n\nTuples are immutable sequences of values.")
    source = _excerpt_source("a", document, "Tuples are immutable sequences of values.",
                             digest_text="Threads and processes are both units of scheduling in Python programs.")
    question = "How do tuples differ from threads?"
    claims = extract_claims(question, [question], [], score([source]))
    texts = [c.text for c in claims]
    assert "Tuples are immutable sequences of values." in texts  # from the excerpt
    assert any(t.startswith("Threads and processes") for t in texts)  # from the digest
    canonical = canonicalize(document)
    for claim in claims:
        for citation in claim.citations:
            start, end = locate(citation.locator)
            assert canonical[start:end] == citation.quote


def test_every_item_gets_its_own_answer_before_the_most_relevant_claims() -> None:
    # Many sentences mention both sides; the one that says what a tuple is would lose
    # a plain relevance ranking, but the item "Definition of tuples" claims it.
    both = " ".join(f"Lists and tuples appear together in example number {n} of Python code." for n in range(8))
    text = both + " Tuples are immutable. Lists are mutable, so their items change."
    checklist = [ChecklistItem(id="c1", description="Definition of tuples"),
                 ChecklistItem(id="c2", description="Definition of lists"),
                 ChecklistItem(id="c3", description="How tuples and lists differ")]
    question = "How do tuples differ from lists?"
    claims = extract_claims(question, [question, "What are tuples?", "What are lists?"], checklist,
                            score([make_source("a", text)]), max_claims=4)
    texts = [c.text for c in claims]
    assert "Tuples are immutable." in texts
    assert "Lists are mutable, so their items change." in texts
    immutable = by_text(claims, "Tuples are immutable")
    assert immutable.checklist_item_ids == ["c1"]  # it names tuples only
    assert by_text(claims, "example number 0").checklist_item_ids == ["c1", "c2", "c3"]


def test_questions_and_code_are_no_findings() -> None:
    text = ("How do threads work? Threads run in one process.\n\n"
            "t = threading.Thread(target=f); t.start() # threads {x: [y]}.")
    claims = extract_claims(QUESTION, SUBS, [], score([make_source("a", text)]))
    assert [c.text for c in claims] == ["Threads run in one process."]


def test_a_trailing_qualifier_is_not_required_to_answer_an_item() -> None:
    checklist = [ChecklistItem(id="c1", description="Definition of a decorator in Python")]
    sources = score([make_source("a", "A decorator is a function returning another function.")])
    (claim,) = extract_claims("What is a decorator in Python?", ["What is a decorator in Python?"], checklist, sources)
    assert claim.checklist_item_ids == ["c1"]
    assert assess_coverage(checklist, [claim])[0].status is CoverageStatus.PARTIAL


def test_satisfied_only_with_claims_that_answer_the_item() -> None:
    checklist = [ChecklistItem(id="c1", description="How context managers work"),
                 ChecklistItem(id="c2", description="Definition of exception groups")]
    claims = [_claim("cl1", "A context manager defines __enter__ and __exit__ methods."),
              _claim("cl2", "Context managers can raise exception groups."),
              _claim("cl3", "An exception ends the block.")]  # one of c2's two terms
    out = {i.id: i for i in assess_coverage(checklist, claims)}
    assert out["c1"].status is CoverageStatus.SATISFIED and out["c1"].evidence == ["cl1", "cl2"]
    # One claim answers "exception groups" (both terms): partial; a claim naming only
    # one of its terms does not answer it.
    assert out["c2"].status is CoverageStatus.PARTIAL and out["c2"].evidence == ["cl2"]
    # What a claim lists as its items is what coverage counts for them.
    sources = score([make_source("a", " ".join(c.text for c in claims))])
    extracted = extract_claims("What does the with statement do and how do context managers work?",
                               ["How do context managers work?"], checklist, sources)
    for item in assess_coverage(checklist, extracted):
        assert item.evidence == [c.id for c in extracted if item.id in c.checklist_item_ids]
        if item.status is CoverageStatus.SATISFIED:
            assert item.evidence


def test_a_glossary_entry_is_chosen_for_the_term_in_its_heading() -> None:
    # The definition never repeats its term: the heading above it names it.
    document = ("Glossary\n\nglobal interpreter lock¶\n\nThe mechanism used by the interpreter to assure that "
                "only one thread executes bytecode at a time.\n\nlock file¶\n\nA file that marks a resource as taken.")
    excerpt = canonicalize(document)
    source = _excerpt_source("a", document, excerpt)
    checklist = [ChecklistItem(id="c1", description="Definition of the global interpreter lock")]
    question = "What is the global interpreter lock?"
    claims = extract_claims(question, [question], checklist, score([source]))
    assert claims[0].text.startswith("The mechanism used by the interpreter")
    # Chosen for what it is about, and matched to the item its heading names.
    assert claims[0].checklist_item_ids == ["c1"]


def test_acronyms_meet_their_spelled_out_words() -> None:
    text = ("The GIL is released when doing I/O. Bananas are yellow fruit. "
            "A global interpreter lock serializes bytecode.")
    sources = score([make_source("a", text)])
    checklist = [ChecklistItem(id="c1", description="Definition of the global interpreter lock")]
    asked = "What is the global interpreter lock?"
    texts = [c.text for c in extract_claims(asked, [asked], checklist, sources)]
    assert "The GIL is released when doing I/O." in texts and "Bananas are yellow fruit." not in texts
    texts = [c.text for c in extract_claims("What does the GIL prevent?", ["What does the GIL prevent?"], [], sources)]
    assert "A global interpreter lock serializes bytecode." in texts


def test_a_long_item_needs_half_its_subject_terms() -> None:
    item = item_terms("How PostgreSQL protects against transaction ID wraparound")
    assert len(item) == 5
    assert not claim_matches_item(set(terms("A table records the ID of every transaction.")), item)
    assert claim_matches_item(set(terms("Freezing protects old transaction IDs from wraparound.")), item)
    short = item_terms("Definition of exception groups")
    assert claim_matches_item(set(terms("Exception groups bundle errors.")), short)


def test_how_it_works_is_answered_by_the_mechanism_not_by_definitions() -> None:
    definitions = ("A context manager is an object that sets up a runtime context. "
                   "Context managers are a standard feature of the language.")
    mechanism = "The context manager protocol calls the enter method first, then the exit method when the block ends."
    checklist = [ChecklistItem(id="c1", description="How context managers work")]
    question = "How do context managers work?"
    (claim,) = extract_claims(question, [question], checklist,
                              score([make_source("a", definitions + " " + mechanism)]), max_claims=1)
    assert claim.text == mechanism


def test_a_sentence_naming_a_file_or_markers_is_a_finding() -> None:
    text = "Conflicted hunks are marked with the markers <<<<<<<, =======, and >>>>>>>."
    claims = extract_claims("How does Git mark conflicted hunks?", [], [], score([make_source("a", text)]))
    assert [c.text for c in claims] == [text]



def test_a_definition_opens_with_the_subject_itself_not_a_thing_named_after_it() -> None:
    document = ("The tuple values are set from the arguments.\n\n"
                "Tuples are immutable sequences, usually holding items of different kinds.")
    source = _excerpt_source("a", document, canonicalize(document))
    checklist = [ChecklistItem(id="c1", description="Definition of tuples")]
    question = "What are tuples?"
    claims = extract_claims(question, [question], checklist, score([source]), max_claims=1)
    assert [c.text for c in claims] == ["Tuples are immutable sequences, usually holding items of different kinds."]


def test_a_bracketed_aside_does_not_make_a_sentence_lean_on_its_context() -> None:
    assert _leaning("Tuples are immutable and accessed by unpacking (see later in this section).") == 0
    assert _leaning("This section covers tuples and their uses.") > 0


def test_the_places_left_after_the_items_go_to_claims_that_answer_by_the_coverage_rule() -> None:
    # "the ID of every transaction" names two of the item's five subject terms: enough to be
    # looked at for it, not to answer it, so it would sit among the other findings
    # answering nothing.
    answer = "Freezing protects old transaction IDs from wraparound."
    partial = "A table records the ID of every transaction."
    text = f"{answer} {partial} Bananas are yellow fruit. Every transaction has an ID."
    checklist = [ChecklistItem(id="c1", description="How PostgreSQL protects against transaction ID wraparound")]
    question = "How does PostgreSQL protect against transaction ID wraparound?"
    claims = extract_claims(question, [question], checklist, score([make_source("a", text)]), max_claims=2)
    assert [c.text for c in claims] == [answer]



def test_an_items_answer_that_also_answers_the_question_comes_first() -> None:
    # Both answer "How to stop a commit"; the one that also says what the question is
    # about (hooks) is the better answer to it, though the other opens with the subject.
    plain = "A commit is stopped by closing the editor with an empty message."
    hooks = "Git hooks can stop a commit by exiting with a non-zero status."
    checklist = [ChecklistItem(id="c1", description="How to stop a commit")]
    question = "What are Git hooks and how can one stop a commit?"
    text = f"{plain} {hooks} Bananas are yellow fruit."
    claims = extract_claims(question, [question], checklist, score([make_source("a", text)]), max_claims=1)
    assert [c.text for c in claims] == [hooks]


def test_a_sentence_copied_word_for_word_into_another_source_is_not_its_support() -> None:
    # An included page (the same options text in several manual pages) or a syndicated
    # article says one thing once: the copy adds no support and no citation.
    copied = "Threads share the memory of their process and can read its global variables."
    own = "The threads of a process share its memory and can read its global variables."
    sources = score([make_source("a", copied, da=95), make_source("copy", copied), make_source("own", own)])
    claims = extract_claims(QUESTION, SUBS, [], sources)
    shared = by_text(claims, "global variables")
    ids = [s.id for s in sources]
    assert sorted(ids[i] for i in shared.supporting_indices) == ["a", "own"]
    assert sorted(c.source_id for c in shared.citations) == ["a", "own"]
    # A short sentence may be written alike by two authors: each still counts.
    short = score([make_source("x", "Threads share memory."), make_source("y", "Threads share memory.")])
    assert by_text(extract_claims(QUESTION, SUBS, [], short), "share").supporting_indices == [0, 1]
