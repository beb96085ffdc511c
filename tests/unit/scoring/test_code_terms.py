"""A description in a definition list is quoted with the code term it describes."""

from __future__ import annotations

from services.scoring.claims import claim_text
from services.scoring.passages import is_code_term, question_passages, term_start
from shared.research.text import canonicalize
from tests.unit.scoring.test_question_passages import FILLER, _cited, _claims_for

OPTION = "--rebase[=false|true|merges]"
DESCRIPTION = "When true, rebase the current branch on top of the upstream branch after fetching."


def manual_page() -> str:
    paragraphs = [" ".join(FILLER[(i + j) % len(FILLER)] for j in range(3)) for i in range(30)]
    paragraphs[20:20] = ["--no-verify", "Bypass the hooks of the command.", OPTION, DESCRIPTION]
    return canonicalize("\n\n".join(paragraphs))


def test_code_terms_are_told_from_titles() -> None:
    for term in ("--ignore-rev <rev>", "contextvars.copy_context()¶", "class contextvars.ContextVar(name)¶",
                 "prune", "pre-commit", "core.autocrlf", OPTION):
        assert is_code_term(term), term
    for title in ("Context Variables¶", "3.1. Objects, values and types¶", "Summary",
                  "the list of all the things we know about"):
        assert not is_code_term(title), title


def test_a_passage_opening_a_definition_starts_with_its_term() -> None:
    text = manual_page()
    (passage,) = [p for p in question_passages(text, ["How do I rebase the current branch after fetching?"])
                  if DESCRIPTION in p.text]
    assert passage.text.startswith(f"{OPTION}\n\n{DESCRIPTION}")
    assert text[passage.start:passage.end] == passage.text
    assert passage.term == len(f"{OPTION}\n\n")
    assert term_start(text, text.index(DESCRIPTION)) == text.index(OPTION)


def test_a_line_a_colon_introduces_is_no_term() -> None:
    text = "Create one by running this command:\n\npython3 -m venv env\n\nRunning it creates the directory."
    assert term_start(text, text.index("Running")) is None


def test_the_claim_names_the_option_it_describes() -> None:
    text = manual_page()
    question = "How do I rebase the current branch after fetching?"
    claims = _claims_for(text, "file:///git-pull.html", "git-pull", question)
    (claim,) = [c for c in claims if DESCRIPTION in c.text]
    # The option's brackets would make the quote look like code: the sentence is judged alone.
    assert claim.text == f"{OPTION} {DESCRIPTION}"
    assert _cited(text, claim) == f"{OPTION}\n\n{DESCRIPTION}"


def test_claim_text_drops_permalink_marks() -> None:
    assert claim_text("contextvars.copy_context()¶\n\nReturns a copy of the current Context object.") == \
        "contextvars.copy_context() Returns a copy of the current Context object."
