"""Relevance before confidence: which claims the report may show, and where.

A claim can be true, quoted and well supported and still answer nothing ("A web server
must handle many client connections at once." for a question about garbage collection
pauses). Confidence says how well a claim is supported, not whether it answers; so the
report shows a claim only when it answers the question or a checklist item, and ranks
by how squarely it answers before how confident it is. The rest stay in the result's
claims list (and the API), not in the report.

- A claim answers an item when the coverage check filed it there (``item.evidence``:
  with a model, the model judged it; offline, the coverage rule did), when it names
  the item and is about its subject (:func:`addresses`), or when the claim step matched
  it to the item (its ``checklist_item_ids``, :func:`relevant_claims`).
- A claim answers the question when it carries at least min(2, n) of the question's
  n subject terms (:func:`answers_question`).
- How squarely (:func:`relevance`): the share of the item's (or question's) subject
  terms the claim carries, less for a claim that leans on its context ("This guide
  summarises...", "...follows from this single difference").
"""

from __future__ import annotations

from collections.abc import Sequence

from shared.research.claims import answering_claims, item_terms, leans_on_context
from shared.research.envelope import ChecklistItem, Claim
from shared.research.text import terms

__all__ = ["addresses", "answers_question", "relevance", "relevant_claims"]


def addresses(item: ChecklistItem, claim: Claim) -> bool:
    """The claim belongs under the item: the coverage check filed it there (the
    evidence holds only claims checked to be about the item), or the claim names the
    item and is about it (a model's naming alone is not enough)."""
    if claim.id in item.evidence:
        return True
    return item.id in claim.checklist_item_ids and bool(answering_claims(item, [claim], judged=True))


def answers_question(question: str, claim: Claim) -> bool:
    """The claim carries the question's subject: at least min(2, n) of its n subject
    terms. Looser than the coverage rule (half of them): a question names its subject
    and what it asks of it ("What is the global interpreter lock in CPython and what
    does it prevent?"), and an answer names the subject in its own words ("only one
    thread executes Python bytecode", under a heading the claim does not carry)."""
    subject = item_terms(question)
    return bool(subject) and len(set(terms(claim.text)) & subject) >= min(2, len(subject))


def relevance(subject_of: str, claim: Claim) -> float:
    """The share of ``subject_of``'s subject terms the claim carries, a quarter less for
    each way the claim leans on its context (about its own text, pointing back)."""
    subject = item_terms(subject_of)
    share = len(set(terms(claim.text)) & subject) / len(subject) if subject else 0.0
    return share - 0.25 * leans_on_context(claim.text)


def relevant_claims(question: str, checklist: Sequence[ChecklistItem], claims: Sequence[Claim]) -> list[Claim]:
    """The claims that answer the question or an item, in their order. A claim the claim
    step matched to an item (``checklist_item_ids``: offline, by the coverage rule over
    the sentence and the heading it stands under; with a model, the model's judgement)
    answers it even when its own words do not name the item ("Does not touch the index
    file or the working tree at all" under "--soft")."""
    known = {item.id for item in checklist}
    return [c for c in claims if answers_question(question, c) or set(c.checklist_item_ids) & known
            or any(addresses(item, c) for item in checklist)]
