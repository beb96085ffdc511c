"""research_jobs: providers, clarification, LLM calls

Revision ID: 0003
Revises: 0002
"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("research_jobs", sa.Column("providers", JSONB, nullable=True))
    op.add_column("research_jobs", sa.Column("clarify", sa.Boolean, nullable=False, server_default=sa.false()))
    op.add_column("research_jobs", sa.Column("clarifying_questions", JSONB, nullable=True))
    op.add_column("research_jobs", sa.Column("clarification", sa.Text, nullable=True))
    op.add_column("research_jobs", sa.Column("llm_calls", sa.Integer, nullable=False, server_default="0"))


def downgrade() -> None:
    for column in ("llm_calls", "clarification", "clarifying_questions", "clarify", "providers"):
        op.drop_column("research_jobs", column)
