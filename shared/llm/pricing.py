"""What a model call costs in money: a price table per model (USD per million input
and output tokens).

The defaults cover the model families the project names (Claude's Haiku, Sonnet and
Opus; OpenAI's GPT-4o, GPT-4.1 and o-series models) at their public list prices;
``LLM_PRICES`` overrides or adds entries: ``claude-x=3/15,gpt-y=0.15/0.6`` (input/output
per million tokens; ``model=0`` prices a model at nothing, e.g. a local one you run).

A model matches the entry that is its name, or the longest entry its name starts with
followed by ``-``, ``@`` or ``:`` (``claude-sonnet-4-5-20250929`` is priced by
``claude-sonnet-4-5``, else ``claude-sonnet``). A model served by an OpenAI-compatible server on this
machine or its private network (a loopback, private or link-local address, or a
``.local``/``localhost`` name: Ollama, vLLM, llama.cpp) costs nothing per token unless
``LLM_PRICES`` names it. Any other model no entry matches (a new name at a paid API) is
*unpriced*: its calls count 0 in the cost and the model is listed as unpriced wherever
the cost is shown, since 0 then means "not known", not "free". A cost limit (``RESEARCH_MAX_COST_USD``, a request's
``max_cost_usd``) cannot bound an unpriced model's calls; its token budget still does.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import urlsplit

from shared.platform.errors import ConfigurationError

__all__ = ["DEFAULT_PRICES", "LOCAL_PRICE", "Price", "PriceTable", "on_this_network", "parse_prices", "served_locally"]


@dataclass(frozen=True)
class Price:
    """USD per million tokens."""

    input_per_mtok: float
    output_per_mtok: float

    def cost(self, input_tokens: int | float, output_tokens: int | float) -> float:
        return (input_tokens * self.input_per_mtok + output_tokens * self.output_per_mtok) / 1_000_000

    @property
    def free(self) -> bool:
        return self.input_per_mtok == 0 and self.output_per_mtok == 0


# List prices (USD per million input / output tokens). The project's default model
# (ANTHROPIC_MODEL, claude-sonnet-5-5) is priced by the Sonnet family's entry.
DEFAULT_PRICES: dict[str, Price] = {
    "claude-haiku": Price(1.0, 5.0),
    "claude-3-5-haiku": Price(0.8, 4.0),
    "claude-3-haiku": Price(0.25, 1.25),
    "claude-sonnet": Price(3.0, 15.0),
    "claude-3-5-sonnet": Price(3.0, 15.0),
    "claude-3-7-sonnet": Price(3.0, 15.0),
    "claude-opus": Price(15.0, 75.0),
    "claude-opus-4-5": Price(5.0, 25.0),
    "claude-3-opus": Price(15.0, 75.0),
    "gpt-4o": Price(2.5, 10.0),
    "gpt-4o-mini": Price(0.15, 0.6),
    "gpt-4.1": Price(2.0, 8.0),
    "gpt-4.1-mini": Price(0.4, 1.6),
    "gpt-4.1-nano": Price(0.1, 0.4),
    "o3": Price(2.0, 8.0),
    "o4-mini": Price(1.1, 4.4),
}

_SEPARATORS = ("-", "@", ":")


def _key(model: str) -> str:
    """A model name as the table keys it: case folded, without a ``provider:`` prefix."""
    name = model.strip().lower()
    for prefix in ("anthropic:", "openai:"):
        if name.startswith(prefix):
            return name[len(prefix):]
    return name


def parse_prices(spec: str, setting: str = "LLM_PRICES") -> dict[str, Price]:
    """``claude-x=3/15,gpt-y=0.15/0.6`` -> {model: Price}; ``model=0`` is free."""
    prices: dict[str, Price] = {}
    for item in filter(None, (p.strip() for p in (spec or "").split(","))):
        model, sep, value = item.rpartition("=")
        try:
            if not sep or not model.strip():
                raise ValueError
            parts = [float(v) for v in value.split("/")]
            if len(parts) == 1 and parts[0] == 0:
                parts = [0.0, 0.0]
            if len(parts) != 2 or any(p < 0 or p != p or p == float("inf") for p in parts):
                raise ValueError
        except ValueError:
            raise ConfigurationError(
                f"{setting}: {item!r} is not model=input/output (USD per million tokens, e.g. claude-x=3/15)") from None
        prices[_key(model)] = Price(parts[0], parts[1])
    return prices


class PriceTable:
    """The defaults with ``LLM_PRICES`` over them."""

    def __init__(self, overrides: Mapping[str, Price] | None = None, *, defaults: bool = True) -> None:
        self.prices: dict[str, Price] = {**(DEFAULT_PRICES if defaults else {}),
                                         **{_key(k): v for k, v in (overrides or {}).items()}}

    @classmethod
    def from_settings(cls, settings: object) -> PriceTable:
        return cls(parse_prices(getattr(settings, "llm_prices", "") or ""))

    def price(self, model: str) -> Price | None:
        """``model``'s price, or None when it is unpriced."""
        name = _key(model)
        if name in self.prices:
            return self.prices[name]
        best = ""
        for key in self.prices:
            if len(key) > len(best) and name.startswith(key) and name[len(key)] in _SEPARATORS:
                best = key
        return self.prices[best] if best else None

    def cost(self, model: str, input_tokens: int | float, output_tokens: int | float) -> float | None:
        """What the tokens cost on ``model``, or None when it is unpriced."""
        price = self.price(model)
        return None if price is None else price.cost(input_tokens, output_tokens)


LOCAL_PRICE = Price(0.0, 0.0)


def on_this_network(base_url: str | None) -> bool:
    """``base_url`` names a server on this machine or its private network (loopback,
    private, link-local or unique-local addresses; ``localhost``, ``*.local``,
    ``*.internal``, a bare host name such as a compose service's ``ollama``)."""
    if not base_url:
        return False
    host = (urlsplit(base_url).hostname or "").lower()
    if not host:
        return False
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        return host == "localhost" or host.endswith((".localhost", ".local", ".internal", ".lan")) or "." not in host
    return ip.is_loopback or ip.is_private or ip.is_link_local


def served_locally(provider: object) -> bool:
    """The provider is an OpenAI-compatible server on this machine or network (Ollama,
    vLLM, llama.cpp): the models it serves cost nothing per token. (Anthropic's API is
    never run locally.)"""
    return getattr(provider, "name", "") == "openai" and on_this_network(getattr(provider, "base_url", None))

