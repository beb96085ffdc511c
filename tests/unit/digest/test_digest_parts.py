"""A source longer than one call's context window is digested in parts, each call's
prompt fitting the window with room for the answer, and the parts' drafts merged.
Against the loopback OpenAI-compatible fake playing Ollama: it never refuses, it drops
the start of a conversation longer than its window (the system prompt) and counts it."""

from __future__ import annotations

from typing import Any

from services.digest.compress import DigestLimits, compress
from services.digest.parts import merge_drafts, split_text
from services.digest.schemas import DigestDraft, DraftEvidence
from shared.llm.engine import make_engine
from shared.research.envelope import Usage
from shared.settings import StageSettings
from tests.fakes.llm import RecordedRequest, ToolCall
from tests.fakes.openai import OpenAIFake
from tests.unit.digest.helpers import make_source

SENTENCES = [
    "The keeper climbed the tower at dusk to light the lamp.",
    "Clockwork rotated the lens through the night.",
    "Automation arrived with electric lamps and timers.",
    "By 1990 most towers in the region ran without a keeper.",
    "Supply boats visited the station every fortnight.",
]


def _text(chars: int) -> str:
    out: list[str] = []
    n = 0
    while sum(len(p) + 2 for p in out) < chars:
        out.append(" ".join(f"{SENTENCES[(n + k) % len(SENTENCES)]}" for k in range(4)) + f" (Note {n}.)")
        n += 1
    return "\n\n".join(out)


def _quoting(request: RecordedRequest) -> ToolCall:
    """A digest quoting the first sentence of the part it was shown (verbatim)."""
    part = request.prompt.split("\n", 3)[-1]
    quote = next(s for s in SENTENCES if s in part)
    return ToolCall(input={"summary": f"Part about: {quote}", "key_points": [quote[:40]],
                           "evidence": [{"text": quote, "relevance": 0.9}]})


def _llm(fake: OpenAIFake, window: int) -> Any:
    settings = StageSettings(**{k.lower(): v for k, v in {
        **fake.env(), "OPENAI_MODEL": "llama3.2:3b", "LLM_MAX_RETRIES": "0", "LLM_TIMEOUT_S": "5",
        "LLM_CONTEXT_TOKENS": str(window)}.items()})
    return make_engine(settings).bind("digest", Usage())


def test_split_text_cuts_at_paragraph_ends_and_stops_after_most_parts() -> None:
    text = _text(20_000)
    spans = split_text(text, 3_000, most=4)
    assert len(spans) == 4
    assert spans[0][0] == 0 and all(a[1] == b[0] for a, b in zip(spans, spans[1:]))
    assert all(0 < e - s <= 3_000 for s, e in spans)
    assert all(text[e - 2:e] == "\n\n" for _, e in spans)
    assert split_text("short", 3_000, most=4) == [(0, 5)]


def test_merge_takes_key_points_in_turn_and_every_quote() -> None:
    a = DigestDraft(summary="First part.", key_points=["a1", "a2"], evidence=[DraftEvidence(text="qa", relevance=0.5)])
    b = DigestDraft(summary="Second part.", key_points=["b1"], evidence=[DraftEvidence(text="qb", relevance=0.7)])
    merged = merge_drafts([a, b])
    assert merged.summary == "First part. Second part."
    assert merged.key_points == ["a1", "b1", "a2"]
    assert [e.text for e in merged.evidence] == ["qa", "qb"]


async def test_a_long_source_is_read_in_parts_that_each_fit_the_window() -> None:
    text = _text(40_000)
    source = make_source(text)
    with OpenAIFake(responder=_quoting, context_tokens=4096, truncate_long=True) as fake:
        llm = _llm(fake, 4096)
        result = await compress(llm, text, source=source, question="How did automation change lighthouse keeping?",
                                focus=[], limits=DigestLimits(max_parts=4))
        assert fake.truncated == 0  # no prompt lost its start (the instructions) to the window
        assert len(fake.delivered) == result.parts == 4
        assert all(p + c <= 4096 for p, c in fake.prompt_sizes)
        assert all("record_digest" in r.system for r in fake.delivered)
        assert all("consecutive parts of the source" in r.prompt for r in fake.delivered)
    assert result.engine == "openai:llama3.2:3b"
    assert result.unread_chars > 0  # DIGEST_MAX_PARTS: the rest is not read, and said so
    assert result.payload.evidence_snippets
    for snippet in result.payload.evidence_snippets:
        start, end = (int(x) for x in snippet.locator.split(":")[-1].split("-"))
        assert text[start:end] == snippet.text


async def test_a_source_that_fits_is_one_call_and_a_large_window_reads_it_whole() -> None:
    text = _text(40_000)
    with OpenAIFake(responder=_quoting) as fake:
        result = await compress(_llm(fake, 200_000), text, source=make_source(text), question="q", focus=[],
                                limits=DigestLimits())
        assert len(fake.delivered) == result.parts == 1 and result.unread_chars == 0
        assert "consecutive parts" not in fake.delivered[0].prompt


async def test_a_window_too_small_for_any_text_digests_offline_without_a_call() -> None:
    text = _text(10_000)
    with OpenAIFake(responder=_quoting) as fake:
        result = await compress(_llm(fake, 1_200), text, source=make_source(text), question="q", focus=[],
                                limits=DigestLimits())
        assert fake.requests == []
    assert result.engine == "offline"
