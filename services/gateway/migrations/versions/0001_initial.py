"""research_jobs, research_results, research_sources

Revision ID: 0001
Revises:
"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def _tz() -> sa.DateTime:
    return sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "research_jobs",
        sa.Column("id", sa.String(36), primary_key=True),
        sa.Column("seq", sa.BigInteger, sa.Identity(), unique=True, nullable=False),
        sa.Column("user_id", sa.String(200), nullable=False, index=True),
        sa.Column("question", sa.Text, nullable=False),
        sa.Column("context", sa.Text, nullable=True),
        sa.Column("max_iterations", sa.Integer, nullable=False),
        sa.Column("corpora", JSONB, nullable=True),
        sa.Column("status", sa.String(20), nullable=False, index=True),
        sa.Column("stage", sa.String(20), nullable=True),
        sa.Column("iteration", sa.Integer, nullable=False, server_default="0"),
        sa.Column("progress", sa.Float, nullable=False, server_default="0"),
        sa.Column("error", sa.Text, nullable=True),
        sa.Column("partial", sa.Boolean, nullable=False, server_default=sa.false()),
        sa.Column("input_tokens", sa.Integer, nullable=False, server_default="0"),
        sa.Column("output_tokens", sa.Integer, nullable=False, server_default="0"),
        sa.Column("created_at", _tz(), nullable=False, index=True),
        sa.Column("started_at", _tz(), nullable=True),
        sa.Column("finished_at", _tz(), nullable=True),
        sa.Column("updated_at", _tz(), nullable=False),
    )
    op.create_index("ix_research_jobs_user_created", "research_jobs", ["user_id", "created_at"])
    op.create_table(
        "research_results",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("job_id", sa.String(36), sa.ForeignKey("research_jobs.id", ondelete="CASCADE"), unique=True, nullable=False),
        sa.Column("report", sa.Text, nullable=False),
        sa.Column("output", JSONB, nullable=False),
        sa.Column("citations", JSONB, nullable=False),
        sa.Column("claims", JSONB, nullable=False),
        sa.Column("confidence", JSONB, nullable=False),
        sa.Column("token_usage", JSONB, nullable=False),
        sa.Column("engine", sa.String(40), nullable=False),
        sa.Column("partial", sa.Boolean, nullable=False, server_default=sa.false()),
        sa.Column("partial_reason", sa.Text, nullable=True),
        sa.Column("created_at", _tz(), nullable=False),
    )
    op.create_table(
        "research_sources",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("job_id", sa.String(36), sa.ForeignKey("research_jobs.id", ondelete="CASCADE"), nullable=False, index=True),
        sa.Column("source_id", sa.String(64), nullable=False),
        sa.Column("url", sa.Text, nullable=False),
        sa.Column("title", sa.Text, nullable=False),
        sa.Column("retrieval_method", sa.String(20), nullable=False),
        sa.Column("credibility_tier", sa.String(20), nullable=False),
        sa.Column("domain_authority", sa.Integer, nullable=False),
        sa.Column("published_at", _tz(), nullable=True),
        sa.Column("relevance_score", sa.Float, nullable=False),
        sa.Column("authority_score", sa.Float, nullable=False),
        sa.Column("recency_score", sa.Float, nullable=False),
        sa.Column("relevance_component", sa.Float, nullable=False),
        sa.Column("credibility_score", sa.Float, nullable=False),
        sa.Column("composite_score", sa.Float, nullable=False),
        sa.Column("text_hash", sa.String(80), nullable=False),
        sa.Column("excerpt", sa.Text, nullable=False),
        sa.Column("digest", JSONB, nullable=True),
        sa.Column("created_at", _tz(), nullable=False),
        sa.UniqueConstraint("job_id", "source_id"),
    )


def downgrade() -> None:
    op.drop_table("research_sources")
    op.drop_table("research_results")
    op.drop_table("research_jobs")
