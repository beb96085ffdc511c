"""`deepresearch config`: the settings in effect (from the environment, then `.env`
in the working directory, then the defaults), with secrets masked, and which
providers they configure (the model, Tavily web search, PubMed, local corpora)."""

from __future__ import annotations

import argparse
import json
import os
import re
from pathlib import Path
from typing import Any

from dotenv import dotenv_values
from pydantic import SecretStr

from shared.research.corpora import read_corpora
from shared.settings import CliSettings, DigestSettings

__all__ = ["cmd_config", "effective_settings", "mask", "providers"]

MASK = "****"
# user:password@ in a URL (NATS, PostgreSQL); a URL list keeps its commas.
_URL_PASSWORD = re.compile(r"(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*://)(?P<user>[^:@/\s,]*):(?P<pw>[^@/\s,]*)@")


def mask(name: str, value: Any) -> Any:
    """``value`` fit to print: secrets replaced, passwords in URLs hidden, the keys of
    RESEARCH_API_KEYS (``key:user,...``) hidden with their users shown."""
    if isinstance(value, SecretStr):
        return MASK if value.get_secret_value() else ""
    if not isinstance(value, str):
        return str(value) if isinstance(value, Path) else value
    if name == "research_api_keys" and value:
        return ",".join(f"{MASK}:{item.partition(':')[2]}" for item in filter(None, (p.strip() for p in value.split(","))))
    return _URL_PASSWORD.sub(lambda m: f"{m['scheme']}{m['user']}:{MASK}@", value)


def _origin(name: str, dotenv: dict[str, str | None]) -> str:
    env = name.upper()
    if os.environ.get(env):
        return "environment"
    if dotenv.get(env):
        return ".env"
    return "default"


def effective_settings(env_file: Path = Path(".env")) -> list[dict[str, Any]]:
    """Every setting with its masked value and where it came from."""
    dotenv = dotenv_values(env_file) if env_file.is_file() else {}
    rows: dict[str, dict[str, Any]] = {}
    for settings in (CliSettings(), DigestSettings()):
        for name in type(settings).model_fields:
            if name not in rows:
                rows[name] = {"name": name.upper(), "value": mask(name, getattr(settings, name)), "from": _origin(name, dotenv)}
    return sorted(rows.values(), key=lambda r: r["name"])


def providers(settings: CliSettings) -> dict[str, str]:
    """Each provider and what it is configured to do (or what would enable it)."""
    choice = settings.llm_provider
    if choice == "auto":
        choice = "anthropic" if settings.anthropic_api_key else "offline"
    model = {
        "anthropic": f"Anthropic, model {settings.anthropic_model}" + (f" at {settings.anthropic_base_url}" if settings.anthropic_base_url else "")
        + ("" if settings.anthropic_api_key else " (ANTHROPIC_API_KEY missing: jobs will fail)"),
        "openai": f"OpenAI-compatible, model {settings.openai_model or '(OPENAI_MODEL missing)'} at {settings.openai_base_url or 'api.openai.com'}",
        "offline": "offline (deterministic, no model; set ANTHROPIC_API_KEY, or LLM_PROVIDER=openai with OPENAI_BASE_URL and OPENAI_MODEL)",
    }[choice]
    corpora = [c.name for c in read_corpora(settings.corpora_dir)]
    return {
        "model": model,
        "web": "Tavily" + (f" at {settings.tavily_base_url}" if settings.tavily_base_url else "") if settings.tavily_api_key
        else "off (set TAVILY_API_KEY)",
        "pubmed": f"on (NCBI E-utilities, {'with' if settings.ncbi_api_key else 'without'} an API key)" if settings.pubmed_enabled
        else "off (set NCBI_EMAIL or NCBI_API_KEY)",
        "local": f"{len(corpora)} {'corpus' if len(corpora) == 1 else 'corpora'} in {settings.corpora_dir}: {', '.join(corpora)}" if corpora
        else f"no corpus in {settings.corpora_dir} (`deepresearch index DIR`)",
    }


def cmd_config(args: argparse.Namespace) -> int:
    rows = effective_settings()
    found = providers(CliSettings())
    if args.json:
        print(json.dumps({"settings": rows, "providers": found}, indent=2, default=str))
        return 0
    env_file = Path(".env").resolve()
    print(f"settings: environment first, then {env_file}" + ("" if env_file.is_file() else " (absent)") + ", then defaults")
    width = max(len(r["name"]) for r in rows)
    for r in rows:
        value = "" if r["value"] is None else r["value"]
        print(f"  {r['name']:<{width}}  {value}" + (f"   [{r['from']}]" if r["from"] != "default" else ""))
    print("providers:")
    for name, what in found.items():
        print(f"  {name:<7} {what}")
    return 0
