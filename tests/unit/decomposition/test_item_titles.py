"""Offline checklist titles for each question form: they read as a person would write
them, name the question's subject (no verb or auxiliary glued onto it), never only
reorder the question's words, and carry the subject terms the coverage rule matches."""

from __future__ import annotations

import re

import pytest

from services.decomposition.offline import echoes, offline_checklist
from services.decomposition.phrasing import parse_clause
from services.decomposition.plan import MAX_SUB_QUESTIONS, first_plan, parse_sub_questions
from services.decomposition.wordforms import (
    compact,
    gerund,
    is_past_participle,
    past,
    plural,
    reads_plural,
    singular,
)
from shared.research.claims import claim_matches_item, item_terms
from shared.research.envelope import ResearchRequest
from shared.research.text import normalize_query, terms

# (question, its titles, the words naming its subject)
FORMS: list[tuple[str, list[str], str]] = [
    # Two actions on one thing are not a comparison of two things; a verb that can be a
    # noun too ("show") is still the verb before what it acts on.
    ("How does Git show a merge conflict in a file and how do you finish or abandon the merge?", [
        "How Git shows a merge conflict in a file",
        "How to finish or abandon the merge",
        "Definition of a merge conflict",
    ], "merge conflict"),
    # A later question keeps the first one's subject; "how long" of what is done is a span.
    ("What does the journal record and how long are entries kept?", [
        "What the journal records",
        "Length of time entries of the journal are kept",
        "Examples of what the journal records",
    ], "journal"),
    ("Which files are ignored by default?", [
        "Files that are ignored by default",
        "Definition of files that are ignored by default",
        "Examples of files that are ignored by default",
    ], "files ignored"),
    # "Where/When does X V Y": examples of X doing it, not of X alone ("Examples of pip").
    ("Where does pip install packages?", [
        "Where pip installs packages",
        "Definition of pip",
        "Examples of pip installing packages",
    ], "pip"),
    ("How do you finish a merge?", [
        "How to finish a merge",
        "Definition of a merge",
        "Examples of finishing a merge",
    ], "merge"),
    # "What limits X?": the factors, named as a person would; the quality is also
    # asked with its verb, which is how sentences say it ("threads scale poorly").
    ("What limits the scalability of threads?", [
        "What limits thread scalability",
        "Factors that limit thread scaling",
        "How well threads scale",
        "Examples of limits on thread scaling",
    ], "threads"),
    ("What causes false sharing?", [
        "Causes of false sharing",
        "Definition of false sharing",
        "How to prevent false sharing",
        "Examples of false sharing",
    ], "false sharing"),
    # Nothing to shorten: "What affects throughput" would be the question itself.
    ("What affects throughput?", [
        "Factors that affect throughput",
        "Definition of throughput",
        "Examples of factors that affect throughput",
    ], "throughput"),
    ("What prevents deadlocks?", [
        "Ways to prevent deadlocks",
        "Definition of deadlocks",
        "Causes of deadlocks",
    ], "deadlocks"),
    ("Why does false sharing hurt performance?", [
        "Why false sharing hurts performance",
        "Definition of false sharing",
        "Examples of false sharing hurting performance",
    ], "false sharing"),
    ("Why is the GIL a problem for CPU-bound programs?", [
        "Reasons the GIL is a problem for CPU-bound programs",
        "Definition of the GIL",
        "Examples of the GIL in practice",
    ], "GIL"),
    ("Should I use threads or processes for CPU-bound work in Python?", [
        "Definition of threads",
        "Definition of processes",
        "How threads and processes differ",
        "Threads versus processes: cost and performance",
        "When to choose threads or processes for CPU-bound work in Python",
    ], "threads processes"),
    ("Threads vs processes", [
        "Definition of threads",
        "Definition of processes",
        "How threads and processes differ",
        "Threads versus processes: cost and performance",
        "When to choose threads or processes",
    ], "threads processes"),
    ("What is the difference between a mutex and a semaphore?", [
        "Definition of a mutex",
        "Definition of a semaphore",
        "How a mutex and a semaphore differ",
        "A mutex versus a semaphore: cost and performance",
        "When to choose a mutex or a semaphore",
    ], "mutex semaphore"),
    ("How does copy-on-write work?", [
        "How copy-on-write works",
        "Definition of copy-on-write",
        "Examples of copy-on-write",
    ], "copy-on-write"),
    ("How do garbage collection pauses affect latency in concurrent servers?", [
        "Effect of garbage collection pauses on latency in concurrent servers",
        "Definition of garbage collection pauses",
        "Examples of garbage collection pauses affecting latency",
    ], "garbage collection pauses"),
    ("How do I reduce GC pauses?", [
        "How to reduce GC pauses",
        "Definition of GC pauses",
        "Examples of reducing GC pauses",
    ], "GC pauses"),
    # What the asker acts on is no term to define when it lists things, counts them or
    # is a plain adjective's thing: the steps take its place.
    ("How do I stop Windows and Linux developers from committing files with different line endings?", [
        "How to stop Windows and Linux developers from committing files with different line endings",
        "Steps to stop Windows and Linux developers from committing files with different line endings",
        "Examples of stopping Windows and Linux developers",
    ], "Windows and Linux developers"),
    ("How can I clone a large repository without downloading its whole history?", [
        "How to clone a large repository without downloading its whole history",
        "Steps to clone a large repository without downloading its whole history",
        "Examples of cloning a large repository",
    ], "large repository"),
    ("What is the global interpreter lock?", [
        "Definition of the global interpreter lock",
        "How the global interpreter lock works",
        "Examples of the global interpreter lock in practice",
        "Limitations of the global interpreter lock",
    ], "global interpreter lock"),
    ("What are the types of database indexes?", [
        "The types of database indexes",
        "Definition of database indexes",
        "How each type of database index works",
        "When to use each type of database index",
    ], "database indexes"),
    ("What are the kinds of locks in Python?", [
        "The kinds of locks in Python",
        "Definition of locks in Python",
        "How each kind of lock in Python works",
        "When to use each kind of lock in Python",
    ], "locks"),
    ("What are the ways to reduce context switching costs?", [
        "The ways to reduce context switching costs",
        "Definition of context switching costs",
        "Examples of reducing context switching costs",
        "Limitations of each way to reduce context switching costs",
    ], "context switching costs"),
    ("Which message brokers support at-least-once delivery?", [
        "Message brokers that support at-least-once delivery",
        "Definition of at-least-once delivery",
        "How message brokers support at-least-once delivery",
    ], "brokers at-least-once delivery"),
    ("When should I use backpressure?", [
        "When to use backpressure",
        "Definition of backpressure",
        "Limitations of backpressure",
        "Examples of backpressure",
    ], "backpressure"),
    ("When are default argument values evaluated?", [
        "The point at which default argument values are evaluated",
        "Definition of default argument values",
        "Examples of default argument values",
    ], "default argument values"),
    ("Is asyncio faster than threads?", [
        "Whether asyncio is faster than threads",
        "Definition of asyncio",
        "Definition of threads",
        "How asyncio and threads differ",
        "Conditions under which asyncio is faster than threads",
    ], "asyncio threads"),
    ("Can asyncio run blocking code?", [
        "Whether asyncio can run blocking code",
        "Definition of asyncio",
        "Definition of blocking code",
        "Examples of asyncio running blocking code",
    ], "asyncio blocking code"),
    ("Compare containers and virtual machines", [
        "Definition of containers",
        "Definition of virtual machines",
        "How containers and virtual machines differ",
        "Containers versus virtual machines: cost and performance",
        "When to choose containers or virtual machines",
    ], "containers virtual machines"),
    ("Explain the actor model", [
        "Definition of the actor model",
        "How the actor model works",
        "Examples of the actor model in practice",
        "Limitations of the actor model",
    ], "actor model"),
    ("What are the benefits of connection pooling?", [
        "The benefits of connection pooling",
        "How connection pooling works",
        "Examples of connection pooling",
        "Limitations of connection pooling",
    ], "connection pooling"),
    ("What are the drawbacks of the GIL?", [
        "The drawbacks of the GIL",
        "How the GIL works",
        "Examples of the GIL in practice",
        "Advantages of the GIL",
    ], "GIL"),
    ("How many threads can a process run?", [
        "Number of threads a process can run",
        "Definition of a process",
        "Examples of a process",
    ], "threads process"),
    ("How fast is asyncio?", [
        "Speed of asyncio",
        "Definition of asyncio",
        "Examples of asyncio",
    ], "asyncio"),
]

QUESTIONS = [q for q, _, _ in FORMS]


def _plan(question: str):  # noqa: ANN202
    return first_plan(ResearchRequest(question=question))


def _titles(question: str) -> list[str]:
    return [item.description for item in _plan(question).checklist]


@pytest.mark.parametrize(("question", "titles", "subject"), FORMS, ids=QUESTIONS)
def test_titles_by_question_form(question: str, titles: list[str], subject: str) -> None:
    assert _titles(question) == titles


@pytest.mark.parametrize("question", QUESTIONS)
def test_no_title_only_reorders_the_question(question: str) -> None:
    words = sorted(w.lower() for w in re.findall(r"[\w'’-]+", question))
    for title in _titles(question):
        assert sorted(w.lower() for w in re.findall(r"[\w'’-]+", title)) != words, title
        assert not echoes(title, question)


@pytest.mark.parametrize(("question", "titles", "subject"), FORMS, ids=QUESTIONS)
def test_every_title_carries_subject_terms(question: str, titles: list[str], subject: str) -> None:
    # Each item has subject terms (it can be matched at all), and they include the
    # question's subject, so a sentence about the subject can satisfy it.
    wanted = set(terms(subject))
    for title in _titles(question):
        own = item_terms(title)
        assert own, title
        assert own & wanted, title


@pytest.mark.parametrize("question", QUESTIONS)
def test_no_verb_or_auxiliary_glued_onto_the_subject(question: str) -> None:
    plan = _plan(question)
    # A clause of the question asked on its own keeps the asker's words; what the planner
    # writes does not ("Examples of limits the scalability of threads", "What is I use backpressure").
    texts = [s.text for s in plan.sub_questions[1:] if s.text.rstrip("?").lower() not in question.lower()]
    texts += [c.description for c in plan.checklist]
    glued = re.compile(r"\b(?:of|is|are)\s+(?:(?:limits|causes|affects|makes)\s+(?:the|a|an)|"
                       r"should|does|did|can|I|you|we)\b")
    for text in texts:
        assert not glued.search(text), text
        assert not re.search(r"\b(?:I|you|we)\b", text), text


@pytest.mark.parametrize("question", QUESTIONS)
def test_plans_stay_valid(question: str) -> None:
    plan = _plan(question)
    assert plan.sub_questions[0].text == question
    assert 1 <= len(plan.sub_questions) <= MAX_SUB_QUESTIONS
    assert 3 <= len(plan.checklist) <= 7
    assert [c.id for c in plan.checklist] == [f"c{n}" for n in range(1, len(plan.checklist) + 1)]
    keys = [normalize_query(c.description) for c in plan.checklist]
    assert len(keys) == len(set(keys)) and all(keys)
    assert not any(c.description.endswith("?") for c in plan.checklist)


@pytest.mark.parametrize(("question", "sentence"), [
    # Sentences of the sample corpus, each about the question's subject.
    ("What limits the scalability of threads?",
     "False sharing shows up as unexpectedly poor scaling when threads are added."),
    ("What limits the scalability of threads?",
     "Virtual threads make a thread per connection scale to millions of connections."),
    ("What is the global interpreter lock?",
     "The global interpreter lock allows only one thread to execute Python bytecode at a time."),
    ("How do garbage collection pauses affect latency in concurrent servers?",
     "Garbage collection pauses stop every application thread while the collector runs."),
    ("What causes false sharing?",
     "False sharing happens when threads write to different variables that share a cache line."),
])
def test_a_sentence_about_the_subject_satisfies_an_item(question: str, sentence: str) -> None:
    assert any(claim_matches_item(set(terms(sentence)), item_terms(t)) for t in _titles(question))


@pytest.mark.parametrize(("question", "kind", "subject", "title"), [
    ("What limits the scalability of threads", "what-verb", "thread scalability", "What limits thread scalability"),
    ("What can cause a deadlock", "what-verb", "a deadlock", "Causes of a deadlock"),
    ("When should I use backpressure", "wh", "backpressure", "When to use backpressure"),
    ("Why should I use asyncio", "wh", "asyncio", "Reasons to use asyncio"),
    ("Why do we need connection pooling", "wh", "connection pooling", "Reasons connection pooling is needed"),
    ("What do I need to install", "wh", None, "What one needs to install"),
    ("Which database should I use for analytics", "wh", "databases for analytics",
     "Which database to use for analytics"),
    ("What are the types of database indexes", "list", "database indexes", "The types of database indexes"),
    ("What are some ways of handling backpressure", "means", "backpressure", "Some ways of handling backpressure"),
    ("What is the purpose of __slots__ in a class", "definition", "__slots__ in a class",
     "The purpose of __slots__ in a class"),
    ("Tell me about goroutines", "definition", "goroutines", "Definition of goroutines"),
    ("Which settings control autovacuum", "which", "settings", "Settings that control autovacuum"),
    ("Which database supports JSON", "which", "databases", "Databases that support JSON"),
    ("Is asyncio faster than threads", "yes-no", "asyncio", "Whether asyncio is faster than threads"),
    ("Should I use asyncio", "yes-no", "asyncio", "Whether to use asyncio"),
    ("Where is the GIL released", "wh", "the GIL", "Places where the GIL is released"),
    ("How are threads scheduled", "wh", "threads", "The way threads are scheduled"),
    ("How did automation change lighthouse keeping", "wh", "automation", "How automation changed lighthouse keeping"),
    ("Why do threads deadlock", "wh", "threads", "Why threads deadlock"),
    ("What makes Python slow", "wh", "Python", "Reasons Python is slow"),
    ("What happens when a thread blocks", "consequence", "a thread", "Consequences when a thread blocks"),
    ("How much memory does a thread use", "wh", "a thread", "Amount of memory a thread uses"),
])
def test_clause_reading(question: str, kind: str, subject: str | None, title: str) -> None:
    clause = parse_clause(question)
    assert (clause.kind, clause.subject, clause.statement) == (kind, subject, title)


def test_objects_are_the_phrase_the_verb_acts_on() -> None:
    assert parse_clause("How does PostgreSQL protect against transaction ID wraparound").obj == \
        "transaction ID wraparound"
    assert parse_clause("How do GC pauses affect latency in concurrent servers").obj == "latency"
    assert parse_clause("How does asyncio run coroutines concurrently").obj == "coroutines"
    assert parse_clause("How does the GIL affect CPU-bound and I/O-bound programs").obj == \
        "CPU-bound and I/O-bound programs"
    assert parse_clause("How can I speed up a Python loop").obj == "a Python loop"


def test_between_places_the_subject_unless_something_is_compared() -> None:
    titles = _titles("How do message queues provide backpressure between producers and consumers?")
    assert titles[0] == "How message queues provide backpressure between producers and consumers"
    assert "Definition of producers" not in titles
    assert _titles("What are the trade-offs between threads and processes?")[0] == "Definition of threads"


def test_which_is_faster_compares_the_two_named() -> None:
    assert _titles("Which is faster, asyncio or threads?")[:3] == [
        "Definition of asyncio", "Definition of threads", "How asyncio and threads differ"]


def test_a_padded_checklist_never_echoes_the_question() -> None:
    # A statement-shaped question is its own words: it is no item of its checklist.
    question = "Thread pools and their sizing"
    items = offline_checklist(question, parse_sub_questions(None, question))
    assert len(items) == 3
    assert not any(echoes(i.description, question) for i in items)


@pytest.mark.parametrize(("fn", "given", "expected"), [
    (compact, "the scalability of threads", "thread scalability"),
    (compact, "the performance of Python programs in production", "Python program performance in production"),
    (compact, "the number of threads", "the number of threads"),
    (compact, "the latency of a request", "the latency of a request"),
    (singular, "database indexes", "database index"),
    (singular, "locks in Python", "lock in Python"),
    (singular, "Kubernetes", "Kubernetes"),
    (plural, "message broker", "message brokers"),
    (plural, "settings", "settings"),
    (gerund, "side-step", "side-stepping"),
    (past, "run", "ran"),
    (is_past_participle, "kept", True),
    (is_past_participle, "inlined", True),
    (is_past_participle, "run", False),
    (is_past_participle, "entries", False),
])
def test_word_forms(fn, given: str, expected: str) -> None:  # noqa: ANN001
    assert fn(given) == expected


def test_compact_names_a_quality_by_its_verb_on_request() -> None:
    assert compact("the scalability of threads", verbal=True) == "thread scaling"


@pytest.mark.parametrize(("phrase", "many"), [
    ("locks in Python", True), ("a decorator in Python", False), ("threads and processes", True),
    ("formatted string literals (f-strings)", True), ("Kubernetes", False), ("the scalability of threads", False),
])
def test_reads_plural(phrase: str, many: bool) -> None:
    assert reads_plural(phrase) is many
