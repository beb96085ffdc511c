"""The decomposition answer's parsing rules, the offline planner, and refinement queries."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from services.decomposition import plan as plan_mod
from services.decomposition.offline import classify_step, key_terms, offline_checklist, offline_sub_questions
from services.decomposition.plan import (
    first_plan,
    parse_sub_questions,
    pubmed_query,
    refine_question,
    refinement_queries,
)
from shared.research.envelope import (
    ChecklistItem,
    CoverageStatus,
    Plan,
    ResearchRequest,
    RetrievalMethod,
    SearchQuery,
    StepKind,
    SubQuestion,
)
from shared.research.text import normalize_query

Q = "What are the trade-offs between threads and processes?"


# -- parse_sub_questions -------------------------------------------------------


def test_parses_json_array_and_prepends_query() -> None:
    raw = json.dumps(["1. What is a thread?", "2. What is a process?"])
    assert parse_sub_questions(raw, Q) == [Q, "What is a thread?", "What is a process?"]


def test_parses_fenced_json() -> None:
    raw = 'Here are the sub-questions:\n```json\n["What is a thread?", "What is a process?"]\n```\nDone.'
    assert parse_sub_questions(raw, Q) == [Q, "What is a thread?", "What is a process?"]


def test_parses_array_embedded_in_prose() -> None:
    raw = 'Sure [see below]: ["What is a thread?", "How are threads scheduled?"] Hope this helps.'
    assert parse_sub_questions(raw, Q) == [Q, "What is a thread?", "How are threads scheduled?"]


@pytest.mark.parametrize("raw", [
    None, "", "I cannot help with that.", "not json [at all", '{"questions": ["a?"]}',
    '"just a string"', "42", "[]", "[1, 2, null, {}]", '["", "   ", "1. ", "2)"]',
])
def test_unusable_answers_fall_back_to_query(raw: str | None) -> None:
    assert parse_sub_questions(raw, Q) == [Q]


@pytest.mark.parametrize(("item", "expected"), [
    ("1. What is a thread?", "What is a thread?"),
    ("2) What is a process?", "What is a process?"),
    ("3 - How do they compare?", "How do they compare?"),
    ("4: Which is cheaper?", "Which is cheaper?"),
    ("(5) Why use processes?", "Why use processes?"),
    ("12.   Spaces after the number", "Spaces after the number"),
    ("1.5 million threads: is that feasible?", "1.5 million threads: is that feasible?"),
    ("2024-05 benchmarks of fork()", "2024-05 benchmarks of fork()"),
])
def test_strips_numbered_prefixes(item: str, expected: str) -> None:
    assert parse_sub_questions(json.dumps([item]), Q) == [Q, expected]


def test_deduplicates_case_and_whitespace_insensitively_keeping_first() -> None:
    raw = json.dumps(["1. What is a Thread?", "2. what  is a thread?", "3. WHAT IS A THREAD?", "4. Other?"])
    assert parse_sub_questions(raw, Q) == [Q, "What is a Thread?", "Other?"]


def test_original_query_first_and_not_repeated() -> None:
    raw = json.dumps(["1. " + Q.upper(), "2. What is a thread?", "3.  " + Q])
    assert parse_sub_questions(raw, Q) == [Q, "What is a thread?"]


def test_non_string_items_are_ignored() -> None:
    raw = json.dumps([1, "What is a thread?", None, ["nested"]])
    assert parse_sub_questions(raw, Q) == [Q, "What is a thread?"]


def test_caps_total_at_eight_including_query() -> None:
    raw = json.dumps([f"{i}. Sub-question number {i}?" for i in range(1, 21)])
    out = parse_sub_questions(raw, Q)
    assert len(out) == 8
    assert out[0] == Q
    assert out[1:] == [f"Sub-question number {i}?" for i in range(1, 8)]
    assert len(parse_sub_questions(raw, Q, cap=3)) == 3


@given(items=st.lists(st.one_of(st.text(max_size=30), st.integers(), st.none()), max_size=20),
       cap=st.integers(min_value=1, max_value=10))
def test_parse_invariants(items: list[object], cap: int) -> None:
    out = parse_sub_questions(json.dumps(items), Q, cap=cap)
    assert out[0] == Q
    assert 1 <= len(out) <= cap
    keys = [normalize_query(s) for s in out]
    assert len(keys) == len(set(keys))
    assert all(k for k in keys)


# -- offline generation ----------------------------------------------------------


def _subs(question: str, context: str | None = None) -> list[str]:
    return parse_sub_questions(offline_sub_questions(question, context), question)


def test_offline_answer_is_a_json_array_of_numbered_strings() -> None:
    items = json.loads(offline_sub_questions(Q, None))
    assert isinstance(items, list) and 3 <= len(items) <= 7
    assert [item.split(". ", 1)[0] for item in items] == [str(n) for n in range(1, len(items) + 1)]


def test_offline_comparison_covers_both_sides() -> None:
    subs = _subs(Q)
    assert subs[0] == Q
    assert "What are threads?" in subs
    assert "What are processes?" in subs
    both = [s for s in subs[1:] if "threads" in s and "processes" in s]
    assert len(both) >= 3
    assert any("cost" in s for s in both)
    assert any(s.startswith("When") for s in both)


@pytest.mark.parametrize(("question", "a", "b"), [
    ("Postgres vs MySQL for analytics?", "Postgres", "MySQL"),
    ("Should I use Rust or Go for CLI tools?", "Rust", "Go"),
    ("How does TCP compare to UDP?", "TCP", "UDP"),
    ("Compare TCP and UDP", "TCP", "UDP"),
])
def test_offline_comparison_forms(question: str, a: str, b: str) -> None:
    subs = _subs(question)
    assert f"What is {a}?" in subs
    assert f"What is {b}?" in subs
    assert any(a in s and b in s for s in subs[1:])


def test_offline_enumeration_defines_each_item() -> None:
    subs = _subs("How do Python, Go and Rust handle memory management?")
    for name in ("Python", "Go", "Rust"):
        assert f"What is {name}?" in subs
    assert "How do Python, Go and Rust compare?" in subs


def test_offline_plain_question_aspects() -> None:
    # The question itself asks how it works: not asked again.
    assert _subs("How does photosynthesis work?")[1:] == [
        "What is photosynthesis?",
        "What are examples of photosynthesis?",
    ]
    assert _subs("What is a decorator in Python?")[1:] == [
        "How does a decorator in Python work?",
        "What are examples of a decorator in Python?",
        "What are the limitations of a decorator in Python?",
    ]


def test_offline_question_asking_two_things_is_split() -> None:
    subs = _subs("What is the GIL and what does it prevent?")
    # The pronoun stands for what the first question defines: each can be asked alone.
    assert subs[1:3] == ["What is the GIL?", "What does the GIL prevent?"]


@pytest.mark.parametrize(("question", "later"), [
    # A bare plural noun after the auxiliary is a part of what the first question is about.
    ("What does Kafka store and how long are messages retained?", "How long are Kafka messages retained?"),
    ("What does the journal record and how long are entries kept?", "How long are entries of the journal kept?"),
    # A noun the subject already names stands for the subject.
    ("What are Git hooks and where are hooks stored?", "Where are Git hooks stored?"),
    # A subject with its own words is left alone.
    ("What does the with statement do and how do context managers work?", "How do context managers work?"),
])
def test_offline_later_question_keeps_the_subject_of_the_first(question: str, later: str) -> None:
    assert _subs(question)[2] == later


def test_offline_enumeration_of_one_things_aspects_keeps_the_owner() -> None:
    subs = _subs("What are the causes, symptoms and treatments of diabetes?")
    # Each aspect is of diabetes ("What are treatments?" names nothing), and aspects of
    # one thing are not alternatives to compare or choose between.
    assert subs[1:] == ["What are the causes of diabetes?", "What are the symptoms of diabetes?",
                        "What are the treatments of diabetes?"]


def test_offline_enumeration_whose_last_member_has_its_own_of_phrase() -> None:
    # "number of decimal places" is one member; the three are of "a value".
    subs = _subs("How do I control the width, precision and number of digits of a column in a report?")
    assert subs[1:] == ["What is the width of a column?", "What is the precision of a column?",
                        "What is the number of digits of a column?"]


def test_offline_enumeration_owner_leaves_out_a_closing_verb() -> None:
    subs = _subs("How do the width, height and depth of a box relate?")
    assert subs[1:] == ["What is the width of a box?", "What is the height of a box?", "What is the depth of a box?"]


def test_offline_words_that_say_which_of_a_thing_are_not_a_list() -> None:
    # "some ascending and some descending" says which columns; it names no things to
    # define and compare ("Definition of some ascending").
    subs = _subs("How do I order a table of results by several columns, some ascending and some descending?")
    assert not any("some ascending" in s and s.startswith("What is") for s in subs)
    assert not any(s.startswith(("How do several columns", "When should each")) for s in subs)
    assert subs[0].startswith("How do I order a table of results")


def test_offline_context_adds_a_scoped_question_and_stays_within_cap() -> None:
    subs = _subs(Q, "Focus on Linux servers")
    assert subs[-1] == "How do threads and processes apply to Linux servers?"
    assert len(subs) <= 8


def test_offline_generation_is_deterministic() -> None:
    assert offline_sub_questions(Q, "x") == offline_sub_questions(Q, "x")
    req = ResearchRequest(question=Q, context="Linux")
    assert first_plan(req) == first_plan(req)


# -- refine, key terms, checklist ------------------------------------------------------


def test_refine_question_appends_context_and_normalizes_whitespace() -> None:
    assert refine_question("  What   is\na thread? ", None) == "What is a thread?"
    assert refine_question("What is a thread?", "  on   Linux ") == "What is a thread? (Scope: on Linux)"
    assert refine_question("What is a thread?", "   ") == "What is a thread?"


def test_key_terms() -> None:
    assert key_terms(Q) == ["trade-offs", "threads", "processes"]
    # one term per stem, filler dropped
    assert key_terms("Process and processes (Scope: focus on threads)") == ["process", "threads"]


def test_checklist_from_comparison() -> None:
    subs = _subs(Q)
    items = offline_checklist(refine_question(Q, None), subs)
    assert 3 <= len(items) <= 7
    assert [i.id for i in items] == [f"c{n}" for n in range(1, len(items) + 1)]
    assert items[0].description == "Definition of threads"
    assert "Threads versus processes: cost and performance" in [i.description for i in items]
    assert all(i.status is CoverageStatus.UNSATISFIED and i.evidence == [] for i in items)
    assert all(normalize_query(i.description) != normalize_query(Q) for i in items)


def test_checklist_pads_to_three_items() -> None:
    items = offline_checklist(Q, [Q])
    assert [i.description for i in items] == [
        "Examples of threads and processes",
        "Limitations of threads and processes",
        "Definition of threads and processes",
    ]
    items = offline_checklist(Q, [Q, "What is a thread?"])
    assert [i.description for i in items] == [
        "Definition of a thread",
        "Examples of threads and processes",
        "Limitations of threads and processes",
    ]


# -- checklist titles read as what the answer must cover ---------------------------------


def _titles(question: str) -> list[str]:
    return [i.description for i in first_plan(ResearchRequest(question=question)).checklist]


def test_titles_of_a_question_asking_two_things() -> None:
    titles = _titles("How does PostgreSQL protect against transaction ID wraparound, and which settings control it?")
    # "Which settings control it" only repeated the second question's words.
    assert titles[:2] == ["How PostgreSQL protects against transaction ID wraparound", "Settings that control it"]
    assert "Definition of transaction ID wraparound" in titles
    assert not any("Definition of PostgreSQL protect" in t for t in titles)


@pytest.mark.parametrize(("question", "first"), [
    ("What is the global interpreter lock in CPython?", "Definition of the global interpreter lock in CPython"),
    ("What are generators?", "Definition of generators"),
    ("What is the purpose of __slots__ in a class?", "The purpose of __slots__ in a class"),
    ("How does asyncio run coroutines concurrently?", "How asyncio runs coroutines concurrently"),
    ("How do generator functions work in Python?", "How generator functions work in Python"),
    ("How does the multiprocessing package side-step the GIL?", "How the multiprocessing package side-steps the GIL"),
    ("How can I speed up a Python loop?", "How to speed up a Python loop"),
    ("What does the dataclass decorator generate?", "What the dataclass decorator generates"),
    ("Why do databases need connection pooling?", "Why databases need connection pooling"),
    # A be-question turned around only reorders its words: the lead word is named instead.
    ("Why is the GIL a problem for CPU-bound programs?", "Reasons the GIL is a problem for CPU-bound programs"),
    ("When are default argument values evaluated?", "The point at which default argument values are evaluated"),
    ("Can asyncio run blocking code?", "Whether asyncio can run blocking code"),
    ("List the settings that control autovacuum", "The settings that control autovacuum"),
    ("Explain how the GIL works", "How the GIL works"),
])
def test_titles_of_plain_questions(question: str, first: str) -> None:
    titles = _titles(question)
    assert titles[0] == first
    assert 3 <= len(titles) <= 7
    assert not any(t.endswith("?") for t in titles)


def test_titles_of_two_questions_joined_by_and() -> None:
    assert _titles("What does the with statement do and how do context managers work?")[:2] == [
        "What the with statement does", "How context managers work"]
    assert _titles("What is a virtual environment and how do you create one?")[:2] == [
        "Definition of a virtual environment", "How to create a virtual environment"]


@pytest.mark.parametrize(("question", "a", "b"), [
    ("How do tuples differ from lists in Python?", "tuples", "lists"),
    ("When should a program use asyncio instead of a thread pool?", "asyncio", "a thread pool"),
    ("Compare TCP and UDP", "TCP", "UDP"),
])
def test_titles_of_comparisons(question: str, a: str, b: str) -> None:
    titles = _titles(question)
    assert titles[:3] == [f"Definition of {a}", f"Definition of {b}", f"How {a} and {b} differ"]
    assert f"When to choose {a} or {b}" in titles


def test_titles_of_lists() -> None:
    titles = _titles("How do Python, Go and Rust handle memory management?")
    assert titles[:3] == ["Definition of Python", "Definition of Go", "Definition of Rust"]
    assert "Comparison of Python, Go and Rust" in titles


def test_titles_of_a_question_with_an_unknown_verb() -> None:
    # No known verb: the last word after the subject is taken as the verb.
    assert _titles("How does the flux capacitor frobnicate?")[0] == "How the flux capacitor frobnicates"


def test_checklist_caps_at_seven() -> None:
    subs = [Q] + [f"What is topic number {n}?" for n in range(10)]
    items = offline_checklist(Q, subs)
    assert len(items) == 7
    assert items[-1].id == "c7"


# -- step kinds and plans ---------------------------------------------------------------


@pytest.mark.parametrize(("text", "index", "kind"), [
    (Q, 0, StepKind.INDEPENDENT),
    ("What are threads?", 1, StepKind.INDEPENDENT),
    ("How do threads and processes compare in cost and performance?", 3, StepKind.HYBRID),
    ("When is it better to choose threads, and when processes?", 6, StepKind.HYBRID),
    ("Which is faster to start?", 2, StepKind.HYBRID),
    ("Summarize the trade-offs found above.", 7, StepKind.DEPENDENT),
    ("Recommend an approach for a web server", 7, StepKind.DEPENDENT),
    ("Based on the above, which model fits best?", 5, StepKind.DEPENDENT),
])
def test_classify_step(text: str, index: int, kind: StepKind) -> None:
    assert classify_step(text, index) is kind


def test_first_plan() -> None:
    plan = first_plan(ResearchRequest(question=Q, context="Linux servers"))
    assert plan.refined_question == f"{Q} (Scope: Linux servers)"
    assert plan.sub_questions[0].text == Q
    assert len(plan.sub_questions) <= 8
    assert 3 <= len(plan.checklist) <= 7
    # Only independent steps search at once; hybrid ones wait for their dependencies' claims.
    searchable = [s.text for s in plan.sub_questions if s.kind is StepKind.INDEPENDENT]
    assert _texts(plan.queries) == searchable
    assert _texts(plan.queries, RetrievalMethod.WEB) == searchable
    pubmed = _texts(plan.queries, RetrievalMethod.PUBMED)
    assert len(pubmed) == len(searchable)
    assert all(q.iteration == 0 for q in plan.queries)
    assert pubmed[0] == '"trade-offs"[tiab] AND "threads"[tiab] AND "processes"[tiab]'
    hybrid = plan.sub_questions[3]
    assert hybrid.kind is StepKind.HYBRID and hybrid.ran_in_iteration is None and not hybrid.searched
    # A hybrid step that named nothing needs the searching steps before it.
    assert hybrid.depends_on == [s.id for s in plan.sub_questions[:3]]
    assert [s.id for s in plan.sub_questions] == [f"q{n}" for n in range(1, len(plan.sub_questions) + 1)]
    assert plan.step_order == [s.id for s in plan.sub_questions if s.kind is StepKind.INDEPENDENT]
    assert plan.sub_questions[0].searched == [Q, '"trade-offs"[tiab] AND "threads"[tiab] AND "processes"[tiab]']


def _texts(queries: list[SearchQuery], provider: RetrievalMethod = RetrievalMethod.RAG) -> list[str]:
    return [q.text for q in queries if q.provider is provider]


@pytest.mark.parametrize(("text", "expected"), [
    ("How does immunotherapy affect mesothelioma survival?", '"immunotherapy"[tiab] AND "affect"[tiab] AND "mesothelioma"[tiab]'),
    ("Go", '"go"[tiab]'),
])
def test_pubmed_query_syntax(text: str, expected: str) -> None:
    assert pubmed_query(text) == expected


def test_clarification_answer_scopes_the_offline_plan() -> None:
    plan = first_plan(ResearchRequest(question=Q, clarification="Linux servers"))
    assert "Linux servers" in plan.refined_question


def test_first_plan_respects_max_sub_questions() -> None:
    plan = first_plan(ResearchRequest(question=Q), max_sub_questions=3)
    assert len(plan.sub_questions) == 3


def test_dependent_steps_get_no_queries(monkeypatch: pytest.MonkeyPatch) -> None:
    answer = json.dumps(["1. What are threads?", "2. Summarize the differences", "3. Recommend one"])
    monkeypatch.setattr(plan_mod, "offline_sub_questions", lambda question, context: answer)
    plan = first_plan(ResearchRequest(question=Q))
    kinds = {s.text: s.kind for s in plan.sub_questions}
    assert kinds["Summarize the differences"] is StepKind.DEPENDENT
    assert kinds["Recommend one"] is StepKind.DEPENDENT
    assert _texts(plan.queries) == [Q, "What are threads?"]


def test_parse_failure_in_first_plan_falls_back_to_question(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(plan_mod, "offline_sub_questions", lambda question, context: "oops")
    plan = first_plan(ResearchRequest(question=Q))
    assert [s.text for s in plan.sub_questions] == [Q]
    assert _texts(plan.queries) == [Q]
    assert len(plan.checklist) == 3


# -- refinement ---------------------------------------------------------------------------


def _plan(statuses: list[CoverageStatus]) -> Plan:
    items = [ChecklistItem(id=f"c{n}", description=d, status=s) for n, (d, s) in enumerate(zip(
        ["Definition of threads", "Threads versus processes: cost", "When to choose threads"],
        statuses, strict=True), start=1)]
    return Plan(refined_question=Q, sub_questions=[SubQuestion(text=Q)], checklist=items,
                queries=[SearchQuery(provider=RetrievalMethod.RAG, text=Q)])


def test_refinement_targets_open_items_only() -> None:
    plan = _plan([CoverageStatus.SATISFIED, CoverageStatus.PARTIAL, CoverageStatus.UNSATISFIED])
    queries = refinement_queries(plan, iteration=1, queries_run=[Q])
    assert _texts(queries) == _texts(queries, RetrievalMethod.WEB) == [
        "Threads versus processes: cost trade-offs",
        "When to choose threads trade-offs processes",
    ]
    assert all(q.iteration == 1 for q in queries)
    assert all("[tiab]" in t for t in _texts(queries, RetrievalMethod.PUBMED))


def test_refinement_uses_variants_then_gives_up() -> None:
    plan = _plan([CoverageStatus.UNSATISFIED] * 3)
    run: list[str] = [Q]
    seen: list[str] = []
    for iteration in range(1, 10):
        queries = refinement_queries(plan, iteration=iteration, queries_run=run)
        if not queries:
            break
        texts = _texts(queries)
        keys = [normalize_query(t) for t in texts]
        assert len(keys) == len(set(keys))
        assert not {normalize_query(q.text) for q in queries} & {normalize_query(r) for r in run}
        assert not set(keys) & {normalize_query(r) for r in run}
        seen += texts
        run += texts
    else:
        pytest.fail("refinement never ran out of new queries")
    assert iteration == 5  # the natural query and three variants per item
    assert "Definition of threads trade-offs processes examples" in seen


def test_refinement_is_case_and_whitespace_insensitive() -> None:
    plan = _plan([CoverageStatus.SATISFIED, CoverageStatus.SATISFIED, CoverageStatus.UNSATISFIED])
    run = ["  when TO choose threads   trade-offs PROCESSES "]
    queries = refinement_queries(plan, iteration=2, queries_run=run)
    assert _texts(queries) == ["When to choose threads trade-offs processes examples"]


def test_refinement_returns_empty_when_all_satisfied() -> None:
    plan = _plan([CoverageStatus.SATISFIED] * 3)
    assert refinement_queries(plan, iteration=1, queries_run=[]) == []


def test_refinement_never_repeats_between_items() -> None:
    items = [ChecklistItem(id="c1", description="Threads"), ChecklistItem(id="c2", description="threads")]
    plan = Plan(refined_question="threads", sub_questions=[SubQuestion(text="threads")], checklist=items)
    texts = _texts(refinement_queries(plan, iteration=1, queries_run=[]))
    assert texts == ["Threads", "threads examples"]
