"""research_jobs: the report's depth

Revision ID: 0012
Revises: 0011
"""

import sqlalchemy as sa
from alembic import op

revision = "0012"
down_revision = "0011"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # How much the report says, as the request asked: brief, standard or detailed
    # (services/synthesis/depth.py); every job stored before this revision: standard.
    op.add_column("research_jobs", sa.Column("report_depth", sa.String(10), nullable=False, server_default="standard"))


def downgrade() -> None:
    op.drop_column("research_jobs", "report_depth")
