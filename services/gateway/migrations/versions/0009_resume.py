"""research_jobs: resume and reuse

Revision ID: 0009
Revises: 0008
"""

import sqlalchemy as sa
from alembic import op

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # How many times the job was resumed (every resumed run's message ids carry it),
    # and when it last was: expiry counts a resumed job's age from then, not from its
    # submission. ``reuse``: the request allows starting from a similar earlier job.
    op.add_column("research_jobs", sa.Column("resumes", sa.Integer, nullable=False, server_default="0"))
    op.add_column("research_jobs", sa.Column("resumed_at", sa.DateTime(timezone=True), nullable=True))
    op.add_column("research_jobs", sa.Column("reuse", sa.Boolean, nullable=False, server_default=sa.true()))


def downgrade() -> None:
    for column in ("reuse", "resumed_at", "resumes"):
        op.drop_column("research_jobs", column)
