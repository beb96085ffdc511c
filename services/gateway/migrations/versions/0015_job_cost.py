"""research_jobs: the job's cost so far, in USD

Revision ID: 0015
Revises: 0014
"""

import sqlalchemy as sa
from alembic import op

revision = "0015"
down_revision = "0014"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # USD the job's model calls have cost so far at the configured prices (LLM_PRICES),
    # kept like its token counters: only ever raised, live while it runs.
    op.add_column("research_jobs", sa.Column("cost_usd", sa.Float(), nullable=False, server_default="0"))


def downgrade() -> None:
    op.drop_column("research_jobs", "cost_usd")
