"""research_trace_stages: each stage's part of a job's trace; research_results.memory

Revision ID: 0007
Revises: 0006
"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # One row per (job, stage, iteration), written from the stage's "done" event: the
    # events stream forgets a job after its TTL, the trace must not. The key is what
    # makes a redelivered event, or a redelivered stage, write nothing twice.
    op.create_table(
        "research_trace_stages",
        sa.Column("job_id", sa.String(36), sa.ForeignKey("research_jobs.id", ondelete="CASCADE"), nullable=False),
        sa.Column("stage", sa.String(20), nullable=False),
        sa.Column("iteration", sa.Integer, nullable=False),
        sa.Column("duration_s", sa.Float, nullable=False, server_default="0"),
        sa.Column("input_tokens", sa.Integer, nullable=False, server_default="0"),
        sa.Column("output_tokens", sa.Integer, nullable=False, server_default="0"),
        # The rest of the stage's contribution: searches and results per provider,
        # checklist, claims kept and rejected, the research memory after the pass.
        sa.Column("data", JSONB, nullable=False, server_default=sa.text("'{}'::jsonb")),
        sa.Column("recorded_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("job_id", "stage", "iteration"),
    )
    # The research memory the report was written from; results stored before have none.
    op.add_column("research_results", sa.Column("memory", JSONB, nullable=True))


def downgrade() -> None:
    op.drop_column("research_results", "memory")
    op.drop_table("research_trace_stages")
