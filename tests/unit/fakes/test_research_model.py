"""The fake research model behind ``bench/quality.py --llm fake``: through the real
``anthropic`` SDK (the project's provider) against the loopback fake, its answers
fit the stages' own schemas, its honest claims and quotes are verbatim, its invented
ones fail the project's own grounding check, and it answers the same request the
same way."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest
from pydantic import BaseModel

from services.decomposition.planner import Brief, Decomposition
from services.digest import prompts as digest_prompts
from services.digest.schemas import DigestDraft
from services.scoring import prompts as scoring_prompts
from shared.verification.grounding import check_grounding
from shared.llm.providers import AnthropicProvider
from shared.llm.prompting import block
from tests.fakes.anthropic import AnthropicFake
from tests.fakes.research_model import BOGUS_SNIPPET, HONEST_CLAIMS, STRAY_WORDS, ResearchModel

QUESTION = "What does the global interpreter lock prevent in CPython?"
SOURCE = (
    "The global interpreter lock, usually called the GIL, is a mutex inside CPython. "
    "The GIL ensures that only one thread executes Python bytecode at any moment.\n\n"
    "A thread releases the GIL while it waits on a blocking system call. "
    "Many C extensions release the GIL during long computations. "
    "The switch interval defaults to five milliseconds."
)
SNIPPETS = {
    "s1.e1": "The GIL ensures that only one thread executes Python bytecode at any moment.",
    "s1.e2": "A thread releases the GIL while it waits on a blocking system call.",
    "s2.e1": "Processes each have their own interpreter, so they run Python code in parallel.",
}


@pytest.fixture(scope="module")
def fake() -> Iterator[AnthropicFake]:
    with AnthropicFake(responder=ResearchModel(seed=3, invalid_share=0.0)) as served:
        yield served


def _ask(fake: AnthropicFake, schema: type[BaseModel] | None, tool: str, system: str, prompt: str, *,
         followup: list[tuple[str, str]] | None = None, model: type[BaseModel] | None = None) -> Any:
    provider = AnthropicProvider(api_key=fake.api_key, model="claude-test", base_url=fake.base_url,
                                 timeout_s=10, max_retries=0)

    async def call() -> Any:
        answer = await provider.structured((schema or model).model_json_schema(), system=system, prompt=prompt,
                                           tool_name=tool, tool_description="record it", max_tokens=4096,
                                           followup=followup)
        assert answer.input_tokens > 0 and answer.output_tokens > 0
        return answer.data

    data = asyncio.run(call())
    if schema is not None:
        schema.model_validate(data)
    return data


def test_plan_fits_the_planner_schemas(fake: AnthropicFake) -> None:
    brief = _ask(fake, Brief, "record_brief", "plan", f"Write the research brief.\n{block('question', QUESTION)}")
    assert brief["refined_question"] == QUESTION and 3 <= len(brief["checklist"]) <= 7
    steps = _ask(fake, Decomposition, "record_sub_questions", "plan",
                 f"Decompose.\n{block('question', QUESTION)}")["sub_questions"]
    assert steps[0]["question"] == QUESTION and all(s["web_queries"] for s in steps)


def test_digest_quotes_verbatim_but_one(fake: AnthropicFake) -> None:
    system = digest_prompts.DIGEST_SYSTEM.format(summary_sentences=3, key_points=5, max_snippets=4, max_chars=200)
    prompt = digest_prompts.DIGEST_PROMPT.format(
        question=block("question", QUESTION), focus=block("focus", "- what it prevents"),
        source=block("source", SOURCE, id="s1", title="GIL"), cut_note="")
    evidence = [e["text"] for e in _ask(fake, DigestDraft, digest_prompts.DIGEST_TOOL, system, prompt)["evidence"]]
    assert len(evidence) == 4
    assert all(e in SOURCE for e in evidence[:-1])
    assert evidence[-1] not in SOURCE  # the reworded quotation


class _Claims(BaseModel):
    claims: list[dict[str, Any]]


def _claims_prompt() -> str:
    return scoring_prompts.CLAIMS_PROMPT.format(
        question=block("question", QUESTION),
        checklist=block("checklist", "c1: What the lock prevents\nc2: How threads release it"),
        sources="\n".join(block("snippet", text, id=sid) for sid, text in SNIPPETS.items()))


def test_claims_are_verbatim_or_invented_and_the_check_tells_them_apart(fake: AnthropicFake) -> None:
    claims = _ask(fake, _Claims, scoring_prompts.CLAIMS_TOOL, scoring_prompts.CLAIMS_SYSTEM, _claims_prompt())["claims"]
    assert len(claims) == min(HONEST_CLAIMS, len(SNIPPETS)) + 3
    bogus = [c for c in claims if BOGUS_SNIPPET in c["supporting"]]
    assert len(bogus) == 1
    checked = [(c, check_grounding(c["text"], [SNIPPETS[i] for i in c["supporting"]]))
               for c in claims if c not in bogus]
    honest = [c for c, g in checked if g.ok]
    refused = [(c, g) for c, g in checked if not g.ok]
    assert all(c["text"] in SNIPPETS[c["supporting"][0]] for c in honest) and len(honest) == len(SNIPPETS)
    # One adds a figure its quote lacks, one strays from its quote.
    assert len(refused) == 2, refused
    assert any(g.category == "number" for _, g in refused)
    assert any(c["text"].startswith(STRAY_WORDS.split("{")[0]) for c, _ in refused)


def test_same_request_same_answer(fake: AnthropicFake) -> None:
    first = _ask(fake, _Claims, scoring_prompts.CLAIMS_TOOL, scoring_prompts.CLAIMS_SYSTEM, _claims_prompt())
    again = _ask(fake, _Claims, scoring_prompts.CLAIMS_TOOL, scoring_prompts.CLAIMS_SYSTEM, _claims_prompt())
    assert first == again


def test_a_wrong_shape_then_a_proper_answer_when_re_asked() -> None:
    with AnthropicFake(responder=ResearchModel(invalid_share=1.0)) as fake:
        system, prompt = scoring_prompts.CLAIMS_SYSTEM, _claims_prompt()
        first = _ask(fake, None, scoring_prompts.CLAIMS_TOOL, system, prompt, model=_Claims)
        assert isinstance(first["claims"], str)  # not a list: the stage re-asks
        fixed = _ask(fake, _Claims, scoring_prompts.CLAIMS_TOOL, system, prompt,
                     followup=[("assistant", str(first)), ("user", "claims: Input should be a valid list. Call it again.")])
        assert any(c["supporting"] == ["s1.e1"] for c in fixed["claims"])
