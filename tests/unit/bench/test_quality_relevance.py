"""bench/quality.py's relevance share: which sentences of a report make its body, and
which of them answer the question or their checklist item (the coverage rule)."""

from __future__ import annotations

import json
import re

import bench.quality_facts as facts
import bench.quality_report as quality_report

QUESTION = "How does git rebase differ from git merge?"  # subject terms: git, rebas, merg

# As services/synthesis/render.py writes a report: every kind of line it has.
REPORT = """# How does git rebase differ from git merge?

Written offline: every sentence is a source's own words about git rebase and git merge.

Refined question: How does git rebase differ from git merge? *(the planner's wording, not a finding)*

## Executive summary

“Git rebase reapplies commits on top of another base tip.” [1] A merge commit records two parents of \
the merge. [2]† The weather in Lisbon is mild.

*† Checked by code only: the sentence passed the deterministic checks against the quotes of the claims it cites.*

*The section headings below are the research plan's checklist items, in the planner's wording: what the \
answer had to cover, not findings.*

## What git merge records

Coverage: covered.

- “Git merge records the result in a new commit.” [2] (confidence 80%)
- “Fast-forward updates do not create a merge commit.” [2] (confidence 70%)
- Also answered by 1 finding under "Why rebasing rewrites history" [1]

## Why rebasing rewrites history

Coverage: partly covered.

- “Published history should stay as it is.” [1] (listed under "Why rebasing rewrites history")

## Other findings

- “Bananas are yellow.” [3] (confidence 40%)

## Verified Findings

Chosen by the service, not the model: the strongest claims whose quotes were found in the archived \
source texts, each with its check level (quoted: the claim is a source's own words).

1. “A merge records the named commits as parents.” [2] (quoted, confidence 80%)
   > “A merge records the named commits as parents of git rebase and git merge.” [2] `char:0-46`
2. “Rebasing rewrites history that others fetched.” [1] (quoted, confidence 70%)
3. “Bananas are rich in potassium.” [3] (quoted, confidence 60%)

## Contradictions

- **Claim:** git rebase and git merge both move git branches.

## What remains unknown

*Open checklist items and the searches run for them, in the planner's wording.*

- How git rebase and git merge differ (searched: `git rebase merge`)

## Confidence

Confidence: 70% (3 claims from 2 sources), git rebase and git merge.

## Methodology

- Searched the local corpus gitdocs for git rebase and git merge.

## Sources

[1] git-rebase(1) — gitdocs://git-rebase.html (char:1-2)
> “Git rebase reapplies commits on top of another base tip.”
"""

BODY = [
    ("summary", "“Git rebase reapplies commits on top of another base tip.”"),  # the question: git, rebase
    ("summary", "A merge commit records two parents of the merge."),  # an item: merge, records
    ("summary", "The weather in Lisbon is mild."),  # nothing
    ("item", "“Git merge records the result in a new commit.”"),  # the question and its item
    ("item", "“Fast-forward updates do not create a merge commit.”"),  # merge alone: 1 of 3
    ("item", "“Published history should stay as it is.”"),  # history alone: 1 of 3
    ("other", "“Bananas are yellow.”"),
    ("findings", "“A merge records the named commits as parents.”"),
    ("findings", "“Rebasing rewrites history that others fetched.”"),
    ("findings", "“Bananas are rich in potassium.”"),
]


def test_the_body_is_summary_sections_other_and_verified_findings_without_notes() -> None:
    sentences = facts.body_sentences(REPORT)
    assert [(s.kind, s.text) for s in sentences] == BODY
    assert [s.heading for s in sentences if s.kind == "item"] == ["What git merge records"] * 2 + [
        "Why rebasing rewrites history"]
    assert [s.finding for s in sentences if s.kind == "findings"] == [1, 2, 3]


def test_a_sentence_answers_the_question_or_its_item() -> None:
    # Without the checklist, a finding may answer any item of the report.
    assert facts.relevance({"report": REPORT}, QUESTION) == (5, 10)


def test_a_finding_answers_only_its_own_claims_items() -> None:
    checklist = [{"id": "c1", "description": "What git merge records", "status": "SATISFIED"},
                 {"id": "c2", "description": "Why rebasing rewrites history", "status": "PARTIAL"}]
    claims = [{"id": "k1", "text": "...", "checklistItemIds": ["c2"]},  # not the merge item; as the API spells it
              {"id": "k2", "text": "...", "checklist_item_ids": ["c2"]}]
    findings = [{"claim_id": "k1"}, {"claim_id": "k2"}, {"claim_id": "k9"}]
    result = {"report": REPORT, "checklist": checklist, "claims": claims, "verified_findings": findings}
    assert facts.relevance(result, QUESTION) == (4, 10)  # finding 1 no longer answers
    claims[0]["checklistItemIds"] = ["c1"]
    assert facts.relevance(result, QUESTION) == (5, 10)


def test_the_question_alone_counts_when_there_is_no_checklist() -> None:
    report = "# Q\n\n## Executive summary\n\nGit rebase rewrites commits [1]. Bananas are yellow [2].\n"
    assert facts.relevance({"report": report}, QUESTION) == (1, 2)
    assert facts.relevance({"report": ""}, QUESTION) == (0, 0)
    assert facts.relevance({}, QUESTION) == (0, 0)


def _outcome(qid: str, split: str, report: str, tokens: int):  # noqa: ANN202 - a quality_report.Outcome
    question = facts.Question(qid, split, QUESTION, [[re.compile("reappl", re.IGNORECASE)]])
    result = {"report": report, "usage": {"by_stage": {"plan": {"input_tokens": tokens, "output_tokens": 1}}}}
    outcome = quality_report.Outcome(question, "COMPLETED", result=result)
    outcome.score()
    return outcome


def test_relevance_share_is_printed_next_to_fact_recall_per_split_and_written_to_json() -> None:
    outcomes = [_outcome("a", "tuning", REPORT, 99), _outcome("b", "held-out", "# Q\n\n## Summary\n\nBananas [1].\n", 9)]
    text = quality_report.report(outcomes, corpus_note="test", engine="none", doc_set="git")
    lines = {line.split()[0]: line for line in text.splitlines() if "relevance share" in line}
    assert "fact recall 1/1 = 1.00" in lines["tuning"] and "relevance share 5/10 = 0.50" in lines["tuning"]
    assert "tokens per report 100" in lines["tuning"]
    assert "fact recall 0/1 = 0.00" in lines["held-out"] and "relevance share 0/1 = 0.00" in lines["held-out"]
    assert "relevance share 5/11 = 0.45" in lines["all"]
    assert "set      git" in text

    compared = quality_report.compare([("none", outcomes)])
    assert any(line.split()[:3] == ["relevance", "share", "0.45"] for line in compared.splitlines())

    records = json.loads(json.dumps(quality_report.json_records([("none", outcomes)], "git")))
    assert [(r["id"], r["set"], r["engine"]) for r in records] == [("a", "git", "none"), ("b", "git", "none")]
    assert records[0]["relevance"] == {"answering": 5, "sentences": 10, "share": 0.5}
    assert records[0]["tokens"] == 100
    assert records[0]["split_figures"] == {"fact_recall": 1.0, "relevance_share": 0.5, "tokens_per_report": 100.0}
    assert records[1]["split_figures"]["relevance_share"] == 0.0


def test_the_reports_own_framing_is_not_counted() -> None:
    report = ("# Q\n\n## Executive summary\n\n20 claims from 12 sources passed the claim check. "
              "The best-supported findings follow.\n\n“Git rebase rewrites commits.” [1]\n")
    assert facts.relevance({"report": report}, QUESTION) == (1, 1)
