"""research_jobs: the job a follow-up question follows up

Revision ID: 0014
Revises: 0013
"""

import sqlalchemy as sa
from alembic import op

revision = "0014"
down_revision = "0013"  # the plan-review columns
branch_labels = None
depends_on = None


def upgrade() -> None:
    # A follow-up starts from its parent's research (services/gateway/followup.py); a
    # parent deleted later leaves the follow-up standing, without its link.
    op.add_column("research_jobs", sa.Column(
        "parent_job_id", sa.String(36), sa.ForeignKey("research_jobs.id", ondelete="SET NULL"), nullable=True))
    op.create_index("ix_research_jobs_parent_job_id", "research_jobs", ["parent_job_id"])


def downgrade() -> None:
    op.drop_index("ix_research_jobs_parent_job_id", table_name="research_jobs")
    op.drop_column("research_jobs", "parent_job_id")
