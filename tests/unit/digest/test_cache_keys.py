from __future__ import annotations

from services.digest.cache import LocalCache, cache_key, config_hash, kv_key
from shared.research.envelope import DigestPayload


def payload(n: int) -> DigestPayload:
    return DigestPayload(query_hash="ab12cd34", summary=f"s{n}", key_points=[], evidence_snippets=[],
                         original_chars=10, digest_chars=2, compression_ratio=0.2, source_text_hash="sha256:00")


def test_key_format_is_seed_002s() -> None:
    key = cache_key(source_id="src-abc", content_hash="sha256-" + "f" * 64, query_hash="ab12cd34", config_hash="0badc0de")
    assert key == f"digest:1.0:src-abc:{'f' * 64}:ab12cd34:0badc0de"
    assert kv_key(key) == f"digest.1.0.src-abc.{'f' * 64}.ab12cd34.0badc0de"


def test_kv_key_hashes_what_nats_would_refuse() -> None:
    odd = cache_key(source_id="src with spaces/ü", content_hash="ab", query_hash="q", config_hash="c")
    assert kv_key(odd).startswith("digest.h.") and len(kv_key(odd)) == len("digest.h.") + 64
    assert kv_key(odd) != kv_key(odd.replace("ü", "u"))


def test_config_hash_changes_with_any_setting() -> None:
    base = {"max_chars": 400, "max_snippets": 5, "engine": "offline", "pages": None}
    assert config_hash(base) == config_hash(dict(reversed(list(base.items()))))  # order-free
    assert len(config_hash(base)) == 8
    for change in ({"max_chars": 300}, {"max_snippets": 4}, {"engine": "anthropic:claude"}, {"pages": [0, 10]}):
        assert config_hash({**base, **change}) != config_hash(base)


def test_half_flush_drops_the_oldest_half_when_full() -> None:
    cache = LocalCache(max_entries=100)
    for i in range(100):
        cache.put(f"k{i}", payload(i))
    assert len(cache) == 100
    cache.get("k0")  # reads do not refresh: eviction is by insertion age
    cache.put("k0", payload(0))  # replacing an entry is not growth
    assert len(cache) == 100
    cache.put("k100", payload(100))
    assert len(cache) == 51
    assert all(f"k{i}" not in cache for i in range(50))
    assert all(f"k{i}" in cache for i in range(50, 101))
    assert cache.get("k100") == payload(100)
