"""research_jobs: the job's own cost limit

Revision ID: 0011
Revises: 0010
"""

import sqlalchemy as sa
from alembic import op

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # USD the job's model calls may cost (shared/llm/pricing.py), as the request asked;
    # NULL: the stages' RESEARCH_MAX_COST_USD (every job stored before this revision).
    op.add_column("research_jobs", sa.Column("max_cost_usd", sa.Float, nullable=True))


def downgrade() -> None:
    op.drop_column("research_jobs", "max_cost_usd")
