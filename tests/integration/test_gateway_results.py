"""A completed result's verification summary and its claims' check levels, stored in
PostgreSQL and served by the API (``GET …/result``, ``GET …/claims``); the migration
that adds the column, applied, undone and applied again.

A gateway runs alone (no stages): the test publishes the ``completed`` event."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from alembic import command
from alembic.config import Config

from services.gateway.db import ALEMBIC_INI
from shared.research.envelope import Citation, Claim, RejectedClaim
from shared.research.events import VerificationSummary
from tests.integration.gateways import Gateways, completed_result, publish_completed, submit
from tests.integration.harness import new_database, run_sql

SUMMARY = VerificationSummary(
    sentences={"quoted": 2, "entailed": 5, "supported": 1},
    sentences_removed={"negation": 1, "judge": 2},
    claims={"quoted": 1, "entailed": 1},
    claims_rejected={"number": 1},
    judge="ran", judge_model="anthropic:claude-haiku-5", judge_tokens=1234,
)
CITATION = Citation(source_id="s1", locator="char:0-44", quote="Keepers were replaced by automation in 1990.")
CLAIMS = [
    Claim(id="cl1", text="Keepers were replaced by automation in 1990.", supporting_indices=[0],
          citations=[CITATION], level="quoted"),
    Claim(id="cl2", text="Automation replaced the keepers.", supporting_indices=[0], citations=[CITATION],
          level="entailed"),
    Claim(id="cl3", text="A claim stored before levels.", supporting_indices=[0], citations=[CITATION]),
]
REJECTED = [RejectedClaim.of("Keepers left in 1950.", "number 1950 not in its quotes", iteration=0,
                             engine="model", category="number")]


@pytest.fixture(scope="module")
def gw(tmp_root: Path, postgres) -> Iterator[Gateways]:  # noqa: ANN001
    g = Gateways(tmp_root / ("gwr-" + uuid.uuid4().hex[:6]), postgres).start(1)
    try:
        yield g
    finally:
        g.stop()


def test_the_verification_summary_and_claim_levels_round_trip(gw: Gateways) -> None:
    with gw.client() as c:
        job_id = submit(c).json()["job_id"]
    gw.wait_status(job_id, {"PROCESSING"})
    result = completed_result("\u201cKeepers were replaced by automation in 1990.\u201d [1] Automation came late [1]\u2020\n")
    result = result.model_copy(update={"verification": SUMMARY, "claims": CLAIMS, "rejected_claims": REJECTED})
    publish_completed(gw, job_id, result)
    assert gw.wait_status(job_id, {"COMPLETED", "FAILED"}) == "COMPLETED"

    stored = gw.sql("SELECT verification, report FROM research_results WHERE job_id = $1", job_id)[0]
    assert "\u2020" in stored["report"] and "\u201c" in stored["report"]
    with gw.client() as c:
        body = c.get(f"/api/research/jobs/{job_id}/result").json()
        assert VerificationSummary.model_validate(body["verification"]) == SUMMARY
        assert [x.get("level") for x in body["claims"]] == ["quoted", "entailed", None]  # claims are JSON: level rides along
        listing = c.get(f"/api/research/jobs/{job_id}/claims").json()
    kept = [x for x in listing["claims"] if x["status"] == "verified"]
    assert [(x["id"], x["level"]) for x in kept] == [("cl1", "quoted"), ("cl2", "entailed"), ("cl3", None)]
    [refused] = [x for x in listing["claims"] if x["status"] == "rejected"]
    assert (refused["category"], refused["level"]) == ("number", None)

    # A result stored before the column existed has none: the API says null, nothing made up.
    gw.sql("UPDATE research_results SET verification = NULL WHERE job_id = $1", job_id)
    with gw.client() as c:
        assert c.get(f"/api/research/jobs/{job_id}/result").json()["verification"] is None


def test_the_migration_applies_undoes_and_applies_again(postgres) -> None:  # noqa: ANN001
    dsn = new_database(postgres, "mig_")
    cfg = Config(str(ALEMBIC_INI))
    # As the gateway's settings spell it (SQLAlchemy with asyncpg).
    cfg.set_main_option("sqlalchemy.url", ("postgresql+asyncpg://" + dsn.split("://", 1)[1]).replace("%", "%%"))

    def columns() -> set[str]:
        rows = run_sql(dsn, "SELECT column_name, is_nullable, data_type FROM information_schema.columns "
                            "WHERE table_name = 'research_results'")
        return {f"{r['column_name']}:{r['data_type']}:{r['is_nullable']}" for r in rows}

    command.upgrade(cfg, "0009")
    assert not any(c.startswith("verification:") for c in columns())
    command.upgrade(cfg, "head")
    assert "verification:jsonb:YES" in columns()
    command.downgrade(cfg, "0009")
    assert not any(c.startswith("verification:") for c in columns())
    command.upgrade(cfg, "head")
    assert "verification:jsonb:YES" in columns()
