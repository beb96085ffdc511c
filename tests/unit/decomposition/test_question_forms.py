"""Offline plans for questions of many forms and domains: titles a person would write.

For every form (how do I, how does X verb, why, what limits, should I, can I, is it
safe to, X vs Y, differences between, kinds of, lists, what happens when/if, what
caused), and over software, medicine, economics and history: no title or planner-written
sub-question speaks as the asker ("I", "we", "you", "my"), none defines a doing ("What
is I decide...", "Definition of deciding..."), none only reorders the question's words,
and a question about how a named thing does something is not answered with what the
thing is.
"""

from __future__ import annotations

import re

import pytest

from services.decomposition.asker import action, impersonal
from services.decomposition.offline import echoes
from services.decomposition.phrasing import parse_clause
from services.decomposition.plan import first_plan
from shared.research.envelope import ResearchRequest

QUESTIONS = [
    # how do I / how can I: procedural, in the first or second person
    "How do I decide which index to use?",
    "How do I configure SSH keys for GitHub?",
    "How do we choose a database for analytics?",
    "How do you treat type 2 diabetes?",
    "How do I know if I have diabetes?",
    "How can I improve my credit score?",
    "How can I find out who last changed each line of a file, while skipping commits that only reformatted code?",
    "How can I have only some directories of a big repository present in my working tree?",
    "How do I migrate from MySQL to Postgres?",
    # how does X verb: a process
    "How does Git decide which files are ignored?",
    "How does Git store objects?",
    "How does the kernel handle page faults?",
    "How does the Fed choose interest rates?",
    "How does insulin regulate blood sugar?",
    "How do central banks fight inflation?",
    "How does a bill become law?",
    "How does Kubernetes schedule pods?",
    # why
    "Why does Git use SHA-1?",
    "Why does inflation rise after wars?",
    "Why did the Roman Empire fall?",
    "Why is my Python program slow?",
    "Why do we use indexes?",
    # what limits / what causes / what led to
    "What limits economic growth in developing countries?",
    "What limits the accuracy of blood tests?",
    "What causes migraines?",
    "What caused the Great Depression?",
    "What led to the fall of the Berlin Wall?",
    # should I / can I / is it safe to / is it worth
    "Should I rebase or merge?",
    "Should I take aspirin daily?",
    "Should you use microservices?",
    "When should I refinance a mortgage?",
    "Can I undo a git commit?",
    "Can I drink coffee while pregnant?",
    "Is it safe to take ibuprofen with alcohol?",
    "Is it safe to force push to main?",
    "Is it worth learning Rust?",
    "What should I do if my code leaks memory?",
    "Do I need a visa to visit Japan?",
    "When should you sell a stock?",
    "What is the best way to learn Go?",
    # comparisons
    "Postgres vs MySQL",
    "What are the differences between TCP and UDP?",
    "What are the differences between Keynesian and monetarist economics?",
    "Which is better for data science, Python or Java?",
    "Which is better for beginners, Python or JavaScript?",
    "Is Git better than SVN?",
    # lists, kinds, what happens
    "What are the kinds of diabetes?",
    "What are the types of sorting algorithms?",
    "List the main causes of World War I",
    "What are the symptoms of Lyme disease?",
    "What happens when the Fed raises interest rates?",
    "What happens if I skip a dose of antibiotics?",
]


def _plan(question: str):  # noqa: ANN202
    return first_plan(ResearchRequest(question=question))


def _written(question: str) -> list[str]:
    """What the planner wrote: its sub-questions (a clause of the question asked
    alone keeps the asker's words) and every checklist title."""
    plan = _plan(question)
    subs = [s.text for s in plan.sub_questions[1:] if s.text.rstrip("?").lower() not in question.lower()]
    return subs + [c.description for c in plan.checklist]


def _titles(question: str) -> list[str]:
    return [c.description for c in _plan(question).checklist]


_ASKER = re.compile(r"\b(?:I|we|you|my|our|your|me|us)\b", re.IGNORECASE)


@pytest.mark.parametrize("question", QUESTIONS)
def test_nothing_written_speaks_as_the_asker(question: str) -> None:
    for text in _written(question):
        assert not _ASKER.search(re.sub(r"\bWorld War I\b", "", text)), text


@pytest.mark.parametrize("question", QUESTIONS)
def test_no_doing_or_asker_is_defined(question: str) -> None:
    # "What is I decide which index to use?", "Definition of deciding which index to use",
    # "What is it safe to take?": a definition is of a thing.
    for text in _written(question):
        assert not re.match(r"^(?:What (?:is|are) (?:I|it|we|you)\b|Definition of (?:I|it|we|you)\b)", text), text
        assert not re.match(r"^(?:What (?:is|are)|Definition of) \w+ing (?:which|what|whether|an?|the|to|or)\b",
                            text), text


@pytest.mark.parametrize("question", QUESTIONS)
def test_no_title_only_reorders_the_question(question: str) -> None:
    for title in _titles(question):
        assert not echoes(title, question), title


@pytest.mark.parametrize("question", QUESTIONS)
def test_titles_are_statements(question: str) -> None:
    titles = _titles(question)
    assert 3 <= len(titles) <= 7
    for title in titles:
        assert not title.endswith("?"), title
        # An auxiliary left before its subject: "Why does git push refuse", "How can a push be".
        assert not re.match(r"^(?:How|Why|When|Where|What) (?:does|do|did|can|should|is|are)\b", title), title


@pytest.mark.parametrize("question", [
    "How does Git decide which files are ignored?",
    "How does Git store objects?",
    "How does the Fed choose interest rates?",
    "How does Kubernetes schedule pods?",
    "Why does Git use SHA-1?",
    "What happens when the Fed raises interest rates?",
])
def test_a_named_subject_doing_something_is_not_defined(question: str) -> None:
    subject = parse_clause(question).subject or ""
    assert subject
    for text in _written(question):
        assert text not in (f"What is {subject}?", f"Definition of {subject}"), text


def test_a_process_question_asks_for_the_process() -> None:
    titles = _titles("How does Git decide which files are ignored?")
    assert titles == [
        "How Git decides which files are ignored",
        "Factors that determine how Git decides which files are ignored",
        "Examples of Git deciding which files are ignored",
    ]


def test_a_procedural_question_asks_for_what_to_weigh_or_the_steps() -> None:
    assert _titles("How do I decide which index to use?") == [
        "How to decide which index to use",
        "What to consider when deciding which index to use",
        "Examples of deciding which index to use",
    ]
    assert _titles("How do I know if I have diabetes?") == [
        "How to know if one has diabetes",
        "Steps to know if one has diabetes",
        "Examples of knowing if one has diabetes",
    ]


@pytest.mark.parametrize(("question", "titles"), [
    ("Should I take aspirin daily?", [
        "Whether to take aspirin daily", "Benefits of taking aspirin daily", "Risks of taking aspirin daily"]),
    ("Should I rebase or merge?", [
        "Whether to rebase or merge", "Benefits of rebasing or merging", "Risks of rebasing or merging"]),
    ("Can I undo a git commit?", [
        "Whether it is possible to undo a git commit", "Risks of undoing a git commit",
        "Alternatives to undoing a git commit", "Definition of a git commit"]),
    ("Is it safe to take ibuprofen with alcohol?", [
        "Safety of taking ibuprofen with alcohol", "Risks of taking ibuprofen with alcohol",
        "Alternatives to taking ibuprofen with alcohol"]),
    ("What happens if I skip a dose of antibiotics?", [
        "Consequences of skipping a dose of antibiotics", "What to do after skipping a dose of antibiotics",
        "Examples of skipping a dose of antibiotics"]),
    ("What caused the Great Depression?", [
        "Causes of the Great Depression", "The timeline of the Great Depression",
        "Consequences of the Great Depression"]),
    ("Why is my Python program slow?", [
        "Reasons the Python program is slow", "How to diagnose why the Python program is slow",
        "How to make the Python program less slow"]),
    ("Do I need a visa to visit Japan?", [
        "Whether one needs a visa to visit Japan", "Factors that determine whether one needs a visa to visit Japan",
        "Examples of needing a visa to visit Japan"]),
    ("When should you sell a stock?", [
        "When to sell a stock", "Definition of a stock", "What to consider when selling a stock",
        "Examples of a stock"]),
    ("What is the best way to learn Go?", [
        "The best way to learn Go", "Definition of Go", "Examples of learning Go",
        "Limitations of each way to learn Go"]),
    ("Which is better for beginners, Python or JavaScript?", [
        "Definition of Python", "Definition of JavaScript", "How Python and JavaScript differ",
        "Python versus JavaScript: cost and performance", "When to choose Python or JavaScript"]),
    ("What are the symptoms of Lyme disease?", [
        "The symptoms of Lyme disease", "Definition of Lyme disease", "Examples of the symptoms of Lyme disease"]),
])
def test_titles_of_asker_and_event_forms(question: str, titles: list[str]) -> None:
    assert _titles(question) == titles


def test_both_sides_of_a_comparison_keep_their_shared_noun() -> None:
    titles = _titles("What are the differences between Keynesian and monetarist economics?")
    assert titles[:2] == ["Definition of Keynesian economics", "Definition of monetarist economics"]


@pytest.mark.parametrize(("question", "kind", "subject", "title"), [
    ("How do I decide which index to use", "wh", "deciding which index to use", "How to decide which index to use"),
    ("How does insulin regulate blood sugar", "wh", "insulin", "How insulin regulates blood sugar"),
    ("How do central banks fight inflation", "wh", "central banks", "How central banks fight inflation"),
    ("Why does git push refuse some updates", "wh", "git push", "Why git push refuses some updates"),
    ("How can a rejected push be forced safely", "wh", "a rejected push", "How a rejected push can be forced safely"),
    ("Why does a traceback sometimes show two exceptions", "wh", "a traceback",
     "Why a traceback sometimes shows two exceptions"),
    ("Can I drink coffee while pregnant", "yes-no", "coffee",
     "Whether it is possible to drink coffee while pregnant"),
    ("Is it worth learning Rust", "yes-no", "learning Rust", "Value of learning Rust"),
    ("What led to the fall of the Berlin Wall", "what-verb", "the fall of the Berlin Wall",
     "Causes of the fall of the Berlin Wall"),
])
def test_clause_reading_of_more_forms(question: str, kind: str, subject: str, title: str) -> None:
    clause = parse_clause(question)
    assert (clause.kind, clause.subject, clause.statement) == (kind, subject, title)


@pytest.mark.parametrize(("given", "expected"), [
    ("How to improve my credit score", "How to improve the credit score"),
    ("How to know if I have diabetes", "How to know if one has diabetes"),
    ("if you are pregnant", "if one is pregnant"),
    ("What we can do", "What one can do"),
    ("the causes of World War I", "the causes of World War I"),
])
def test_impersonal(given: str, expected: str) -> None:
    assert impersonal(given) == expected


@pytest.mark.parametrize(("verb", "rest", "expected"), [
    ("decide", "which index to use", "deciding which index to use"),
    ("rebase", "or merge", "rebasing or merging"),
    ("force", "push to main", "force pushing to main"),
    ("take", "aspirin daily", "taking aspirin daily"),
    ("improve", "my credit score", "improving the credit score"),
])
def test_action(verb: str, rest: str, expected: str) -> None:
    assert action(verb, rest) == expected
