"""The deployment files match the code: every setting a process reads reaches that
process in docker-compose.yml, every variable compose reads is listed in .env.example
(without a value), NATS runs as a fsyncing 3-node cluster, and the Kubernetes
manifests parse and wire each stage. No Docker engine is needed: the YAML is parsed."""

from __future__ import annotations

import ast
import re
import subprocess
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import yaml
from pydantic_settings import BaseSettings

from services.cli.supervisor import SERVICES, STAGE_SERVICES
from shared import settings as settings_module
from shared.platform.servers import nats_server_binary

ROOT = Path(__file__).resolve().parents[2]
COMPOSE = ROOT / "docker-compose.yml"
ENV_EXAMPLE = ROOT / ".env.example"
SETTINGS_DIR = Path(settings_module.__file__).parent  # the settings classes and their mixins
K8S = ROOT / "deploy" / "k8s"


@cache
def compose() -> dict[str, Any]:
    return yaml.safe_load(COMPOSE.read_text())


def _text(paths: list[Path]) -> str:
    return "\n".join(p.read_text() for p in paths)


def settings_classes(service: str) -> list[type[BaseSettings]]:
    """The settings classes the service's package instantiates (its own, and another
    stage's when it must agree with that stage, as retrieval does with the digest)."""
    source = _text(list((ROOT / "services" / service).rglob("*.py")))
    names = sorted(set(re.findall(r"\b(\w+Settings)\(\)", source)))
    assert names, f"services/{service} builds no settings"
    return [getattr(settings_module, name) for name in names]


def _module_file(module: str) -> Path | None:
    path = ROOT / Path(*module.split("."))
    for candidate in (path.with_suffix(".py"), path / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def _imports(path: Path) -> set[Path]:
    """The project's own modules ``path`` imports (services.*, shared.*)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module, *(f"{node.module}.{a.name}" for a in node.names)]
        elif isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        else:
            continue
        for name in names:
            if name.split(".")[0] in ("services", "shared") and (f := _module_file(name)) is not None:
                found.add(f)
    return found


def code_of(service: str) -> list[Path]:
    """The service's package and every project module it imports, transitively."""
    seen: set[Path] = set()
    todo = list((ROOT / "services" / service).rglob("*.py"))
    while todo:
        path = todo.pop()
        if path not in seen:
            seen.add(path)
            todo += _imports(path) - seen
    return sorted(p for p in seen if SETTINGS_DIR not in p.parents)


@cache
def _settings_readers() -> dict[str, set[str]]:
    """For each field of the settings package: the properties and methods of the
    settings classes that read it (``self.<field>``)."""
    readers: dict[str, set[str]] = {}
    for node in (n for path in SETTINGS_DIR.glob("*.py") for n in ast.walk(ast.parse(path.read_text()))):
        if isinstance(node, ast.FunctionDef):
            for inner in ast.walk(node):
                if isinstance(inner, ast.Attribute) and isinstance(inner.value, ast.Name) and inner.value.id == "self":
                    readers.setdefault(inner.attr, set()).add(node.name)
    return readers


def _through(name: str) -> set[str]:
    """The properties and methods that read ``name``, and those that read them."""
    found: set[str] = set()
    todo = [name]
    while todo:
        for reader in _settings_readers().get(todo.pop(), set()) - found:
            found.add(reader)
            todo.append(reader)
    return found


def settings_read_by(service: str) -> set[str]:
    """Environment names of the fields of ``service``'s settings class that its code
    reads: named in its own package or a module it imports, or read through a property
    or method of the settings object that its code names (``pubmed_enabled``), or named
    nowhere but the settings module (like ``data_dir`` or ``api_key_map``, read by the
    settings object itself)."""
    code = _text(code_of(service))
    project = [*(ROOT / "services").rglob("*.py"), *(ROOT / "shared").rglob("*.py")]
    everywhere = _text([p for p in project if SETTINGS_DIR not in p.parents])
    read = set()
    for name in {f for cls in settings_classes(service) for f in cls.model_fields}:
        word = re.compile(rf"\b{name}\b")
        through = [r for r in _through(name) if not r.startswith("_")]
        if through and not word.search(everywhere):
            if any(re.search(rf"\b{r}\b", code) for r in through):
                read.add(name.upper())
        elif word.search(code) or not word.search(everywhere):
            read.add(name.upper())
    return read


def compose_env(service: str) -> dict[str, Any]:
    env = compose()["services"][service]["environment"]
    assert isinstance(env, dict), f"{service}: environment must be a mapping"
    return env


def compose_variables() -> set[str]:
    """Variables docker compose interpolates (comments are not interpolated)."""
    code = "\n".join(line.split(" #", 1)[0] for line in COMPOSE.read_text().splitlines() if not line.lstrip().startswith("#"))
    return set(re.findall(r"\$\{([A-Z][A-Z0-9_]*)", code))


def env_example() -> dict[str, str]:
    pairs = {}
    for line in ENV_EXAMPLE.read_text().splitlines():
        if line.strip() and not line.lstrip().startswith("#"):
            name, sep, value = line.partition("=")
            assert sep, f".env.example: {line!r} is not NAME="
            pairs[name.strip()] = value
    return pairs


@pytest.mark.parametrize("service", SERVICES)
def test_every_setting_a_process_reads_is_in_its_compose_environment(service: str) -> None:
    missing = settings_read_by(service) - set(compose_env(service))
    assert not missing, f"docker-compose.yml does not pass {sorted(missing)} to {service}"


@pytest.mark.parametrize("service", STAGE_SERVICES)
def test_every_stage_gets_the_model_keys(service: str) -> None:
    # The regression this file guards: stages without keys run offline in silence.
    env = compose_env(service)
    for name in ("LLM_PROVIDER", "ANTHROPIC_API_KEY", "OPENAI_API_KEY", "OPENAI_BASE_URL", "RESEARCH_MAX_TOKENS_PER_JOB"):
        assert name in env and "${" + name in str(env[name]), f"{service} does not get {name} from .env"


def test_retrieval_gets_the_search_keys_and_the_corpora() -> None:
    env = compose_env("retrieval")
    for name in ("TAVILY_API_KEY", "NCBI_API_KEY", "NCBI_EMAIL"):
        assert "${" + name in str(env[name])
    assert any(str(v).endswith(":/data:ro") for v in compose()["services"]["retrieval"]["volumes"])


def test_secrets_reach_only_the_processes_that_use_them() -> None:
    for service in SERVICES:
        env = compose_env(service)
        if service != "retrieval":
            assert "TAVILY_API_KEY" not in env and "NCBI_API_KEY" not in env, service
        if service == "gateway":
            assert "ANTHROPIC_API_KEY" not in env and "OPENAI_API_KEY" not in env
        else:
            assert "DATABASE_URL" not in env and "RESEARCH_API_KEYS" not in env, service


def test_every_process_joins_the_cluster_with_r3() -> None:
    for service in SERVICES:
        env = compose_env(service)
        assert env["NATS_URL"].split(",") == [f"nats://nats{i}:4222" for i in (1, 2, 3)]
        assert env["RESEARCH_STREAM_REPLICAS"] == "3"


def test_every_compose_variable_is_listed_in_env_example_without_a_value() -> None:
    example = env_example()
    assert not (compose_variables() - set(example)), sorted(compose_variables() - set(example))
    assert not (set(example) - compose_variables()), f"listed but never read: {sorted(set(example) - compose_variables())}"
    assert all(value == "" for value in example.values()), "no values (and no secrets) in .env.example"
    assert ".env" in (ROOT / ".gitignore").read_text().split()


def test_nats_is_a_three_node_cluster_that_fsyncs_every_write() -> None:
    services = compose()["services"]
    conf = (ROOT / "deploy" / "nats-cluster.conf").read_text()
    assert re.search(r"^\s*sync_interval:\s*always\s*$", conf, re.M)
    routes = re.findall(r"nats-route://(nats\d):6222", conf)
    assert sorted(routes) == ["nats1", "nats2", "nats3"]
    for node in routes:
        command = services[node]["command"]
        assert command[command.index("--name") + 1] == node
        assert "--jetstream" in command
        assert any(v.startswith("./deploy/nats-cluster.conf:") for v in services[node]["volumes"])


def test_the_nats_configuration_is_one_the_server_accepts() -> None:
    # `-t` parses and checks every field (an unknown or misspelt one fails) and exits.
    conf = ROOT / "deploy" / "nats-cluster.conf"
    r = subprocess.run([nats_server_binary(), "-c", str(conf), "-t"], capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stderr + r.stdout


def test_stage_services_scale_by_replicas() -> None:
    for service in STAGE_SERVICES:
        spec = compose()["services"][service]
        assert "ports" not in spec, f"{service} publishes a port: --scale would collide"
        assert spec["deploy"]["replicas"] == "${%s_REPLICAS:-1}" % service.upper()


# -- Kubernetes ------------------------------------------------------------------------


def k8s_documents() -> list[dict[str, Any]]:
    docs = []
    for path in sorted(K8S.glob("*.yaml")):
        if path.name == "nats-values.yaml":
            continue
        docs += [d for d in yaml.safe_load_all(path.read_text()) if d]
    return docs


def test_the_nats_helm_values_ask_for_three_jetstream_nodes_that_fsync() -> None:
    values = yaml.safe_load((K8S / "nats-values.yaml").read_text())
    assert values["config"]["cluster"] == {"enabled": True, "replicas": 3}
    js = values["config"]["jetstream"]
    assert js["enabled"] and js["fileStore"]["enabled"] and js["fileStore"]["pvc"]["enabled"]
    assert js["merge"]["sync_interval"] == "always"


def test_every_service_has_a_deployment_with_its_command_config_and_secrets() -> None:
    docs = k8s_documents()
    deployments = {d["metadata"]["name"]: d for d in docs if d["kind"] == "Deployment"}
    assert set(deployments) == set(SERVICES)
    config = next(d for d in docs if d["kind"] == "ConfigMap" and d["metadata"]["name"] == "deepresearch-config")
    assert config["data"]["RESEARCH_STREAM_REPLICAS"] == "3"
    assert len(config["data"]["NATS_URL"].split(",")) == 3
    for name, d in deployments.items():
        [container] = d["spec"]["template"]["spec"]["containers"]
        assert container["args"] == ["service", name]
        sources = {(k, v["name"]) for ref in container["envFrom"] for k, v in ref.items()}
        assert ("configMapRef", "deepresearch-config") in sources
        if name == "gateway":
            assert ("secretRef", "deepresearch-db") in sources
        else:
            assert ("secretRef", "deepresearch-llm") in sources, name
        assert (("secretRef", "deepresearch-search") in sources) == (name == "retrieval"), name
        assert d["spec"]["selector"]["matchLabels"].items() <= d["spec"]["template"]["metadata"]["labels"].items()
