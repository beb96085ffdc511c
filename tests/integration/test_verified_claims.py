"""Claims come from the model, through the real SDK against the loopback Anthropic
fake, and are kept only when they check out: a model that cites snippet ids that do
not exist, strays from its quotes or adds numbers loses those claims (visible with
their reasons through GET …/claims), never the job; and no checklist item is
satisfied without a verified claim."""

from __future__ import annotations

import asyncio
import re
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import nats
import pytest

from shared.research.locators import parse_locator
from shared.stores.textstore import TextStore
from tests.fakes.anthropic import AnthropicFake
from tests.fakes.llm import RecordedRequest, Step, ToolCall, schema_responder
from tests.integration.conftest import KEYS, running_system
from tests.integration.harness import System

QUESTION = "How did automation change lighthouse keeping?"
ALICE, BOB = "key-alice", "key-bob"

# A plan a careful model would write for QUESTION, so that the sources found are about it.
PLAN: dict[str, dict[str, Any]] = {
    "record_brief": {
        "refined_question": QUESTION, "key_terms": ["lighthouse", "automation", "keeper"],
        "checklist": ["How automation changed the lighthouse keeper's work", "When lighthouses were automated",
                      "How automated lighthouses are monitored"],
    },
    "record_sub_questions": {"sub_questions": [
        {"question": QUESTION, "kind": "independent", "web_queries": ["lighthouse automation keepers"], "pubmed_queries": []},
    ]},
}

_SNIPPET = re.compile(r'<snippet id="([^"]+)">\n(.*?)\n</snippet>', re.DOTALL)
_CLAIM = re.compile(r'<claim id="([^"]+)">')
_CHECKLIST = re.compile(r"<checklist>\n(.*?)\n</checklist>", re.DOTALL)


class ClaimsModel:
    """Answers the scoring stage's tools as a model would: ``honest`` claims restate
    the snippets they cite; ``adversarial`` ones also cite snippets that do not exist,
    stray from their quotes and add numbers; ``invalid`` ones are of the wrong shape.
    The plan is a careful one (PLAN); every other tool gets the fake's default
    schema-valid answer."""

    def __init__(self) -> None:
        self.mode = "honest"
        self.claims_asked: list[RecordedRequest] = []

    def __call__(self, request: RecordedRequest) -> Step:
        if request.forced_tool in PLAN:
            return ToolCall(input=PLAN[request.forced_tool])
        if request.forced_tool == "record_claims":
            self.claims_asked.append(request)
            if self.mode == "invalid":  # the wrong shape, also when re-asked
                return ToolCall(input={"claims": "I could not find any claims."})
            return ToolCall(input={"claims": self._claims(request.prompt)})
        if request.forced_tool == "record_coverage":
            return ToolCall(input={"items": self._coverage(request.prompt)})
        return schema_responder(request)

    def _claims(self, prompt: str) -> list[dict[str, Any]]:
        snippets = [(sid, " ".join(text.split())) for sid, text in _SNIPPET.findall(prompt)]
        honest = [{"text": text, "supporting": [sid], "contradicting": [], "checklist_item_ids": ["c1"]}
                  for sid, text in snippets[:4]]
        if self.mode == "honest" or not snippets:
            return honest
        sid, text = snippets[0]
        return honest[:1] + [
            {"text": text, "supporting": ["s99.e9"]},
            {"text": text.rstrip(".") + ", according to 42 surveys.", "supporting": [sid]},
            {"text": "Orbiting satellites now steer every passing vessel around hazardous reefs.", "supporting": [sid]},
        ]

    def _coverage(self, prompt: str) -> list[dict[str, Any]]:
        block = _CHECKLIST.search(prompt)
        items = [line.split(":", 1)[0] for line in (block.group(1).splitlines() if block else [])]
        claims = _CLAIM.findall(prompt)
        if self.mode == "honest":
            return [{"item_id": item, "status": "satisfied" if n == 0 else "open",
                     "claim_ids": claims[:1] if n == 0 else [], "reason": "judged"} for n, item in enumerate(items)]
        # Every item "satisfied", by claims that do not exist or by none at all.
        return [{"item_id": item, "status": "satisfied", "claim_ids": ["cl999"] if n % 2 == 0 else [],
                 "reason": "trust me"} for n, item in enumerate(items)]


@pytest.fixture(scope="module")
def model() -> ClaimsModel:
    return ClaimsModel()


@pytest.fixture(scope="module")
def claude(model: ClaimsModel) -> Iterator[AnthropicFake]:
    with AnthropicFake(responder=model) as fake:
        yield fake


@pytest.fixture(scope="module")
def claims_system(tmp_root: Path, postgres, claude: AnthropicFake) -> Iterator[System]:  # noqa: ANN001
    env = {**claude.env(), "LLM_MAX_RETRIES": "1", "RESEARCH_API_KEYS": KEYS}
    with running_system(tmp_root, postgres, env_overrides=env) as s:
        yield s


def _get(system: System, path: str, key: str = ALICE) -> Any:
    with system.client(ALICE if key is None else key) as c:
        return c.get(path)


def _canonical_texts(system: System, keys: list[str]) -> dict[str, str]:
    async def read() -> dict[str, str]:
        nc = await nats.connect(system.nats.url)  # type: ignore[union-attr]
        try:
            store = TextStore(nc.jetstream())
            return {k: await store.get(k) for k in keys}
        finally:
            await nc.close()

    return asyncio.run(read())


def _run(system: System) -> tuple[str, dict[str, Any]]:
    job_id = system.submit(QUESTION, key=ALICE, max_iterations=1)
    early = _get(system, f"/api/research/jobs/{job_id}/claims")
    job = system.wait_terminal(job_id, key=ALICE)
    assert job["status"] == "COMPLETED", job
    listing = _get(system, f"/api/research/jobs/{job_id}/claims")
    assert listing.status_code == 200, listing.text
    if early.status_code != 200:  # the job had not completed yet
        assert early.status_code == 409 and "completed" in early.json()["detail"]
    return job_id, listing.json()


def test_claims_from_the_model_are_verified_against_the_archived_texts(
    claims_system: System, model: ClaimsModel
) -> None:
    model.mode = "honest"
    asked = len(model.claims_asked)
    job_id, listing = _run(claims_system)
    assert len(model.claims_asked) > asked
    prompt = model.claims_asked[-1].prompt
    assert '<snippet id="s1.e1">' in prompt and "<question>" in prompt
    assert "Use only the given snippets" in model.claims_asked[-1].system

    verified = [c for c in listing["claims"] if c["status"] == "verified"]
    assert verified and listing["verified"] == len(verified) and listing["rejected"] == 0
    offered = {" ".join(text.split()) for _, text in _SNIPPET.findall(prompt)}
    sources = {s["source_id"]: s for s in _get(claims_system, f"/api/research/jobs/{job_id}/sources").json()["sources"]}
    texts = _canonical_texts(claims_system, sorted({s["text_hash"] for s in sources.values()}))
    for claim in verified:
        assert claim["id"].startswith("cl") and 0 <= claim["confidence"] <= 1 and claim["reason"] is None
        assert claim["checklist_item_ids"] == ["c1"]
        assert claim["text"] in offered  # the model's sentence, kept as it was proposed
        assert claim["citations"]
        for cit in claim["citations"]:
            _, start, end = parse_locator(cit["locator"])
            assert texts[sources[cit["source_id"]]["text_hash"]][start:end] == cit["quote"]

    result = _get(claims_system, f"/api/research/jobs/{job_id}/result").json()
    assert [c["text"] for c in result["claims"]] == [c["text"] for c in verified]
    satisfied = result["output"]["checklist_coverage"]["satisfied"]
    assert len(satisfied) == 1  # c1, judged satisfied by a verified claim; the rest open


def test_invented_ids_strayed_text_and_added_numbers_lose_claims_not_the_job(
    claims_system: System, model: ClaimsModel
) -> None:
    model.mode = "adversarial"
    job_id, listing = _run(claims_system)
    rejected = [c for c in listing["claims"] if c["status"] == "rejected"]
    reasons = [c["reason"] for c in rejected]
    assert "cites unknown snippet s99.e9" in reasons
    assert "not grounded in its quotes: the figure 42 is not in its quotes" in reasons
    assert any(r.startswith("not grounded in its quotes: only ") for r in reasons)
    assert all(c["id"] is None and c["engine"] == "model" and c["iteration"] == 0 for c in rejected)
    assert listing["rejected"] == len(rejected) >= 3
    verified = [c for c in listing["claims"] if c["status"] == "verified"]
    assert verified and all("42 surveys" not in c["text"] and "satellites" not in c["text"] for c in verified)

    result = _get(claims_system, f"/api/research/jobs/{job_id}/result").json()
    # Every item was judged "satisfied" by claims that do not exist (or none): none is.
    assert result["output"]["checklist_coverage"]["satisfied"] == []
    assert "42 surveys" not in result["report"]


def test_an_invalid_claims_answer_falls_back_to_the_offline_engine_and_says_so(
    claims_system: System, model: ClaimsModel
) -> None:
    model.mode = "invalid"
    asked = len(model.claims_asked)
    job_id, listing = _run(claims_system)
    # Asked once per batch, and re-asked once with the validation error.
    assert len(model.claims_asked) - asked >= 2
    verified = [c for c in listing["claims"] if c["status"] == "verified"]
    assert verified and all(c["citations"] for c in verified)  # the offline engine's quotes, checked
    report = _get(claims_system, f"/api/research/jobs/{job_id}/result").json()["report"]
    assert "claims: offline (model output invalid)" in report


def test_claims_are_the_owners_only(claims_system: System, model: ClaimsModel) -> None:
    model.mode = "honest"
    job_id = claims_system.submit(QUESTION, key=ALICE, max_iterations=1)
    assert _get(claims_system, f"/api/research/jobs/{job_id}/claims", key=BOB).status_code == 404
    assert _get(claims_system, f"/api/research/jobs/{uuid.uuid4()}/claims").status_code == 404
    claims_system.wait_terminal(job_id, key=ALICE)
    assert _get(claims_system, f"/api/research/jobs/{job_id}/claims", key=BOB).status_code == 404
