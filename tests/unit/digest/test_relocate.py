"""Model quotes are relocated into the canonical text or dropped; whatever the model
answers, every emitted locator verifies."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from services.digest.compress import DigestLimits, finalize
from services.digest.evidence import verify_snippet
from shared.research.relocate import Match, locate
from services.digest.schemas import DigestDraft, DraftEvidence
from shared.research.text import canonicalize, short_hash, text_hash

TEXT = canonicalize(
    "Lighthouses were automated during the twentieth century. "
    "The keeper's duties — trimming wicks, winding clockwork — disappeared with electric lamps. "
    "A mutex deadlock happens when two threads each wait for a lock held by the other. "
    "Fog signals used compressed air. "
    "A mutex deadlock happens when two threads each wait for a lock held by the other."
)


def test_exact_quote_points_at_its_first_occurrence() -> None:
    quote = "A mutex deadlock happens when two threads each wait for a lock held by the other."
    start, end, how = locate(TEXT, quote)
    assert how == Match.EXACT and TEXT[start:end] == quote and start == TEXT.index(quote)


def test_respaced_and_retypographed_quote_is_normalized_back() -> None:
    quote = "The keeper's duties -  trimming wicks,\n winding clockwork - disappeared"
    start, end, how = locate(TEXT, quote)
    assert how == Match.NORMALIZED
    assert TEXT[start:end] == "The keeper's duties — trimming wicks, winding clockwork — disappeared"


def test_lightly_edited_quote_is_relocated_to_the_sentence() -> None:
    quote = "A mutex deadlock happens when two threads wait for a lock held by the other one."
    start, end, how = locate(TEXT, quote)
    assert how == Match.FUZZY
    assert TEXT[start:end] == "A mutex deadlock happens when two threads each wait for a lock held by the other."


def test_paraphrase_is_not_found() -> None:
    assert locate(TEXT, "Deadlocks arise if each of two threads holds the lock the other one needs.") is None
    assert locate(TEXT, "   ") is None


def test_finalize_relocates_or_drops_and_never_emits_a_wrong_locator() -> None:
    draft = DigestDraft(
        summary="Keepers lost their jobs to automation.",
        key_points=["Automation", "Automation", " ", "Deadlocks"],
        evidence=[
            DraftEvidence(text="Deadlocks arise if each of two threads holds the lock the other one needs.", relevance=0.99),
            DraftEvidence(text="Fog signals used  compressed air.", relevance=0.9),
            DraftEvidence(text="lighthouses were automated during the twentieth century", relevance=0.8),
            DraftEvidence(text="Fog signals used compressed air.", relevance=0.7),  # the same passage again
        ],
    )
    payload, dropped = finalize(draft, TEXT, question="lighthouse automation", focus=[], text_key=text_hash(TEXT),
                                limits=DigestLimits(max_snippets=5, max_chars=400))
    assert dropped == 1  # the paraphrase
    assert [s.text for s in payload.evidence_snippets] == [
        "Fog signals used compressed air.",
        "Lighthouses were automated during the twentieth century.",
    ]
    assert all(verify_snippet(TEXT, s) for s in payload.evidence_snippets)
    assert payload.key_points == ["Automation", "Deadlocks"]
    assert payload.query_hash == short_hash("lighthouse automation")
    assert payload.source_text_hash == text_hash(TEXT).replace("sha256-", "sha256:")
    assert payload.digest_chars == len(payload.summary) + sum(map(len, payload.key_points)) + sum(
        len(s.text) for s in payload.evidence_snippets)


def test_finalize_respects_limits_and_include_evidence() -> None:
    draft = DigestDraft(summary="s", key_points=[f"p{i}" for i in range(9)],
                        evidence=[DraftEvidence(text=TEXT[:120], relevance=1.0), DraftEvidence(text="Fog signals", relevance=0.5)])
    payload, _ = finalize(draft, TEXT, question="q", focus=[], text_key=text_hash(TEXT), limits=DigestLimits(max_snippets=1, max_chars=30))
    assert len(payload.key_points) == 5 and len(payload.evidence_snippets) == 1
    assert len(payload.evidence_snippets[0].text) <= 30 and verify_snippet(TEXT, payload.evidence_snippets[0])
    payload, _ = finalize(draft, TEXT, question="q", focus=[], text_key=text_hash(TEXT),
                          limits=DigestLimits(include_evidence=False))
    assert payload.evidence_snippets == []


# -- property: random documents, random (mangled) quotes --------------------------------

_WORDS = ["mutex", "deadlock", "thread", "café", "naïve", "Ünïcödé", "数据库", "锁", "🙂", "e\u0301t\u00e9",
          "résumé", "straße", "δοκιμή", "lock-free", "it's", "“quoted”", "a—b", "x"]
_SEP = [" ", " ", " ", ", ", "\t", "  ", "\u00a0", "\r\n", " - "]
_END = [". ", "! ", "? ", "。", "\n\n", "\r\n\r\n", "\r\n", ""]


@st.composite
def documents(draw: st.DrawFn) -> str:
    def sentence() -> str:
        tokens = draw(st.lists(st.one_of(st.sampled_from(_WORDS), st.text(min_size=1, max_size=6)), min_size=1, max_size=25))
        seps = draw(st.lists(st.sampled_from(_SEP), min_size=len(tokens), max_size=len(tokens)))
        return "".join(t + s for t, s in zip(tokens, seps, strict=True)).strip() + draw(st.sampled_from(_END))

    paragraphs = ["".join(sentence() for _ in range(draw(st.integers(1, 5)))) for _ in range(draw(st.integers(1, 4)))]
    repeats = draw(st.integers(0, 2))  # repeated passages at several offsets
    return draw(st.sampled_from(["\n\n", "\r\n\r\n", "\r\n"])).join(paragraphs + paragraphs[:1] * repeats)


@st.composite
def quotes(draw: st.DrawFn, text: str) -> str:
    kind = draw(st.sampled_from(["slice", "respaced", "edited", "junk"]))
    if kind == "junk" or not text:
        return draw(st.text(min_size=0, max_size=60))
    start = draw(st.integers(0, len(text) - 1))
    end = draw(st.integers(start + 1, min(len(text), start + 300)))
    quote = text[start:end]
    if kind == "respaced":
        quote = quote.replace(" ", "  ").replace("\n", " ").replace("—", "-")
    elif kind == "edited" and len(quote) > 3:
        cut = draw(st.integers(0, len(quote) - 2))
        quote = quote[:cut] + quote[cut + 1 :]
    return quote


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=st.data(), raw=documents(), max_chars=st.integers(1, 200), max_snippets=st.integers(0, 6))
def test_every_emitted_locator_verifies(data: st.DataObject, raw: str, max_chars: int, max_snippets: int) -> None:
    text = canonicalize(raw)
    evidence = [DraftEvidence(text=data.draw(quotes(text)), relevance=data.draw(st.floats(0, 1))) for _ in range(data.draw(st.integers(0, 8)))]
    draft = DigestDraft(summary="s", key_points=[], evidence=evidence)
    payload, dropped = finalize(draft, text, question="q", focus=[], text_key=text_hash(text),
                                limits=DigestLimits(max_snippets=max_snippets, max_chars=max_chars))
    assert len(payload.evidence_snippets) <= max_snippets
    assert len({s.text for s in payload.evidence_snippets}) == len(payload.evidence_snippets)
    for snippet in payload.evidence_snippets:
        assert verify_snippet(text, snippet)
        assert 0 < len(snippet.text) <= max_chars
    assert dropped <= len(evidence)
