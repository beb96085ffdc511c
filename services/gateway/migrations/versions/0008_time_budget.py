"""research_jobs: the job's own time budget

Revision ID: 0008
Revises: 0007
"""

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # Seconds from the job's start to its deadline, as the request asked; NULL: the
    # gateway's RESEARCH_JOB_DEADLINE_S (every job stored before this revision).
    op.add_column("research_jobs", sa.Column("time_budget_s", sa.Float, nullable=True))


def downgrade() -> None:
    op.drop_column("research_jobs", "time_budget_s")
