"""The job token budget as a real bound, against real servers and the loopback
Anthropic fake (real SDK): the spend of a crashed attempt survives in the usage
bucket, and whole jobs stay within 10% of RESEARCH_MAX_TOKENS_PER_JOB in the three
cases that overshot it before (up to ten times)."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import nats
import pytest
from pydantic import BaseModel, Field

from shared import subjects

from shared.research.envelope import Usage
from shared.llm.engine import make_engine
from shared.settings import StageSettings
from shared.stores.spend import KvSpendLedger
from tests.conftest import FIXTURE_CORPUS
from tests.fakes.anthropic import AnthropicFake
from tests.fakes.llm import Delay
from tests.integration.harness import System, jetstream_with_topology

BUDGET = 3000


class Finding(BaseModel):
    """One finding."""

    statement: str = Field(min_length=3)
    confidence: float = Field(ge=0, le=1)


VALID = {"statement": "Lenses focus light", "confidence": 0.8}


@pytest.fixture(scope="module")
def claude() -> Iterator[AnthropicFake]:
    with AnthropicFake() as fake:
        yield fake


def _engine(fake: AnthropicFake, budget: int):  # noqa: ANN202
    env = {**fake.env(), "LLM_TIMEOUT_S": "60", "LLM_MAX_RETRIES": "0", "RESEARCH_MAX_TOKENS_PER_JOB": str(budget)}
    return make_engine(StageSettings(**{k.lower(): v for k, v in env.items()}))


async def _ask(llm) -> Finding:  # noqa: ANN001
    return await llm.structured(Finding, system="Extract.", prompt="Record one finding about lenses. " * 30,
                                tool_name="record_finding", max_tokens=512,
                                offline=lambda: Finding(statement="offline", confidence=0))


async def test_a_redelivered_stage_counts_the_spend_of_the_attempt_that_crashed(nats_url: str, claude: AnthropicFake) -> None:
    async with jetstream_with_topology(nats_url) as js:
        ledger, job_id = KvSpendLedger(js), uuid.uuid4().hex
        claude.reset()
        claude.tool(VALID).script(Delay(30))

        first = _engine(claude, BUDGET).bind("score", Usage(), job_id=job_id, ledger=ledger)
        await first.load()
        await _ask(first)
        billed = claude.total_tokens
        crashed = asyncio.create_task(_ask(first))  # the process dies while this call runs
        while len(claude.requests) < 2:
            await asyncio.sleep(0.01)
        crashed.cancel()
        await asyncio.gather(crashed, return_exceptions=True)
        in_flight = first.calls[-1].charged
        assert in_flight > 0

        # The redelivered command carries the envelope the crashed attempt received:
        # no usage of that attempt. The ledger has it, the estimate of the call in
        # flight included (the provider may have billed its input).
        second = _engine(claude, BUDGET).bind("score", Usage(), job_id=job_id, ledger=ledger)
        await second.load()
        assert await ledger.spent(job_id) == billed + in_flight == second.tokens_used()

        # With the first attempt counted, a budget that only the envelope's count would
        # leave room in refuses the call.
        tight = _engine(claude, billed + in_flight + 400).bind("score", Usage(), job_id=job_id, ledger=ledger)
        await tight.load()
        answer = await _ask(tight)
        assert answer.statement == "offline" and tight.budget_hit and len(claude.requests) == 2
        blind = _engine(claude, billed + in_flight + 400).bind("score", Usage())  # what the stage did before
        assert (await _ask(blind)).statement != "offline"


async def test_concurrent_writers_of_the_ledger_lose_nothing(nats_url: str) -> None:
    async with jetstream_with_topology(nats_url) as js:
        ledgers = [KvSpendLedger(js) for _ in range(4)]
        job_id = uuid.uuid4().hex
        await asyncio.gather(*(ledgers[i % 4].add(job_id, 10) for i in range(40)))
        assert await ledgers[0].spent(job_id) == 400
        kv = await js.key_value(subjects.USAGE_BUCKET)
        assert (await kv.get(job_id)).value == b"400"


def _long_corpus(root: Path) -> Path:
    """Three documents of about 37,000 characters each, on the question's subject."""
    corpus = root / "long-corpus"
    corpus.mkdir(parents=True, exist_ok=True)
    topics = {
        "lenses": "Fresnel lenses let lighthouses project a beam many miles out to sea with far less glass.",
        "keepers": "Lighthouse keepers trimmed wicks, wound clockwork and logged the weather every night.",
        "automation": "Automation of lighthouses replaced resident keepers with electric lamps and remote monitoring.",
    }
    for name, sentence in topics.items():
        paragraphs = []
        n = 0
        while sum(len(p) for p in paragraphs) < 37_000:
            n += 1
            paragraphs.append(f"Section {n}. {sentence} In year {1800 + n} records show change number {n}. " * 3)
        (corpus / f"{name}.md").write_text(f"# {name.title()} of lighthouses\n\n" + "\n\n".join(paragraphs))
    return corpus


@pytest.mark.parametrize("case", ["sample corpus", "digest always", "three long documents"])
def test_a_job_stays_within_its_token_budget(tmp_root: Path, postgres, claude: AnthropicFake, case: str) -> None:  # noqa: ANN001
    corpus = _long_corpus(tmp_root / uuid.uuid4().hex[:8]) if case == "three long documents" else FIXTURE_CORPUS
    env = {**claude.env(), "RESEARCH_MAX_TOKENS_PER_JOB": str(BUDGET), "RESEARCH_MAX_CONCURRENCY": "1",
           "DIGEST_POLICY": "always" if case == "digest always" else "auto"}
    s = System(root=tmp_root / uuid.uuid4().hex[:8], postgres=postgres, corpus=corpus, env_overrides=env).start()
    try:
        before = claude.total_tokens
        job_id = s.submit("How did lighthouses change from keepers and lenses to automation?", max_iterations=3)
        job = s.wait_terminal(job_id, timeout=120)
        assert job["status"] == "COMPLETED", job
        with s.client() as c:
            result = c.get(f"/api/research/jobs/{job_id}/result").json()
    finally:
        s.stop()
    spent = claude.total_tokens - before
    usage = result["tokenUsage"]
    print(f"{case}: {spent} tokens billed, budget {BUDGET}, {usage['llm_calls']} calls")
    assert spent > 0
    assert spent <= BUDGET * 1.1
    assert usage["input_tokens"] + usage["output_tokens"] == spent


def test_a_plan_stage_killed_mid_call_is_redelivered_and_its_spend_still_counts(tmp_root: Path, postgres, claude: AnthropicFake) -> None:  # noqa: ANN001
    # Room for one attempt's plan (a brief of ~600 tokens and a decomposition of ~1,300) and a little more: the
    # redelivered attempt must count the first one's brief and its call in flight, or it
    # plans again in full and the later stages spend on top.
    budget = 2600
    env = {**claude.env(), "RESEARCH_MAX_TOKENS_PER_JOB": str(budget), "LLM_TIMEOUT_S": "120", "LLM_MAX_RETRIES": "0"}
    s = System(root=tmp_root / uuid.uuid4().hex[:8], postgres=postgres, corpus=FIXTURE_CORPUS, env_overrides=env,
               extra={"decomposition": 1}).start()
    try:
        claude.reset()
        # The brief is answered; the sub-questions call hangs until its process dies.
        claude.script(Delay(0), Delay(120))
        job_id = s.submit("How did lighthouses change from keepers and lenses to automation?", max_iterations=3)
        deadline = time.monotonic() + 30
        while len(claude.requests) < 2:
            assert time.monotonic() < deadline, f"the plan stage never made its second call\n{s.logs()}"
            time.sleep(0.05)
        first_attempt = claude.total_tokens
        started = [e for e in s.events(job_id) if e["type"] == "stage" and e["stage"] == "plan" and e["state"] == "started"]
        pid = int(started[0]["worker"].rsplit(":", 1)[1])
        s.kill(next(name for name, p in s.sup.procs.items() if p.pid == pid))  # type: ignore[union-attr]

        job = s.wait_terminal(job_id, timeout=120)
        assert job["status"] == "COMPLETED", job
        plan = [e for e in s.events(job_id) if e["type"] == "stage" and e["stage"] == "plan" and e["state"] == "started"]
        assert [e["delivery"] for e in plan] == [1, 2]
        with s.client() as c:
            result = c.get(f"/api/research/jobs/{job_id}/result").json()
        ledger = asyncio.run(_ledger_value(s.nats.url, job_id))  # type: ignore[union-attr]
    finally:
        s.stop()
    spent = claude.total_tokens
    requests = len(claude.requests)
    print(f"killed mid-call: {first_attempt} tokens billed before the kill, {spent} in all, ledger {ledger}, budget {budget}")
    assert first_attempt > 0
    # brief, the call that died, the redelivered brief; counting the first attempt leaves
    # too little for a second decomposition call, so it and every later stage go offline
    assert requests == 3, f"{requests} model calls"
    assert spent <= budget * 1.1
    assert ledger >= spent  # billed calls, plus the input estimate of the call that died with its process
    assert result["partial"] is True and "RESEARCH_MAX_TOKENS_PER_JOB" in result["partial_reason"]


async def _ledger_value(url: str, job_id: str) -> int:
    nc = await nats.connect(url)
    try:
        return await KvSpendLedger(nc.jetstream()).spent(job_id)
    finally:
        await nc.close()
