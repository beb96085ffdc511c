"""research_jobs: plan review

Revision ID: 0013
Revises: 0012
"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB

revision = "0013"
down_revision = "0012"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # The request's option: the user approves (or edits) the first plan before research
    # goes on (shared/research/plan_review.py); every job stored before: off.
    op.add_column("research_jobs", sa.Column("review_plan", sa.Boolean, nullable=False, server_default=sa.false()))
    # The envelope research continues from: the planner's, while the job waits; with the
    # user's plan, once approved (services/gateway/plan_review.py).
    op.add_column("research_jobs", sa.Column("plan_envelope", JSONB, nullable=True))
    # When the user approved the plan, and what they changed in it (also in the trace).
    op.add_column("research_jobs", sa.Column("plan_reviewed_at", sa.DateTime(timezone=True), nullable=True))
    op.add_column("research_jobs", sa.Column("plan_changes", JSONB, nullable=True))


def downgrade() -> None:
    for column in ("plan_changes", "plan_reviewed_at", "plan_envelope", "review_plan"):
        op.drop_column("research_jobs", column)
