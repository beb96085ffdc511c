"""research_sources.fidelity: the digest stage's fidelity record of each source

Revision ID: 0002
Revises: 0001
"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("research_sources", sa.Column("fidelity", JSONB, nullable=True))


def downgrade() -> None:
    op.drop_column("research_sources", "fidelity")
