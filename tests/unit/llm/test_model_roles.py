"""A model per role: LLM_MODEL_<ROLE> picks the engine of that stage's work."""

from __future__ import annotations

import pytest

from shared.llm.engine import make_engine
from shared.platform.errors import ConfigurationError
from shared.runtime.stage import STAGE_ROLES
from shared.settings import StageSettings
from shared.subjects import Stage
from shared.verification.judge import make_verifier_engine


def _settings(**env: str) -> StageSettings:
    return StageSettings(**{"llm_provider": "openai", "openai_model": "default-model",
                            "openai_base_url": "http://127.0.0.1:9/v1", **env})


def test_each_role_uses_its_model_and_the_rest_the_default() -> None:
    settings = _settings(llm_model_digest="openai:small-local", llm_model_write="openai:strong")
    assert make_engine(settings, "digest").provider.model == "small-local"
    assert make_engine(settings, "write").provider.model == "strong"
    assert make_engine(settings, "plan").provider.model == "default-model"
    assert make_engine(settings).provider.model == "default-model"


def test_a_role_model_works_when_the_default_is_offline() -> None:
    settings = StageSettings(llm_provider="offline", llm_model_write="openai:local",
                             openai_base_url="http://127.0.0.1:9/v1")
    assert make_engine(settings, "write").provider.model == "local"
    assert make_engine(settings, "plan").offline


def test_every_model_stage_has_a_role_and_retrieval_none() -> None:
    assert STAGE_ROLES == {Stage.PLAN: "plan", Stage.DIGEST: "digest", Stage.SCORE: "claims", Stage.SYNTHESIZE: "write"}


def test_the_verify_role_is_the_judges_model_unless_the_judge_names_one() -> None:
    settings = _settings(llm_model_verify="openai:judge")
    job = make_engine(settings, "claims")
    assert make_verifier_engine(settings, job).provider.model == "judge"
    named = _settings(llm_model_verify="openai:judge", research_verifier_model="openai:named")
    assert make_verifier_engine(named, job).provider.model == "named"


@pytest.mark.parametrize("spec", ["strong", "mistral:x", "openai:", "anthropic"])
def test_a_malformed_role_names_its_setting(spec: str) -> None:
    with pytest.raises(ConfigurationError, match="LLM_MODEL_WRITE"):
        make_engine(_settings(llm_model_write=spec), "write")


def test_an_anthropic_role_without_a_key_says_so() -> None:
    with pytest.raises(ConfigurationError, match="ANTHROPIC_API_KEY"):
        make_engine(_settings(llm_model_plan="anthropic:claude-x"), "plan")
