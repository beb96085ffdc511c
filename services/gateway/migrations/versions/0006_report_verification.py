"""research_results: what the report's verification did

Revision ID: 0006
Revises: 0005
"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None

_EMPTY = sa.text("'[]'::jsonb")


def upgrade() -> None:
    # Verified Findings (built by code from verified claims), the number of model-written
    # sentences the verification pass removed, the report parts written offline, and the
    # council's reviews. Results stored before this revision have none of them.
    op.add_column("research_results", sa.Column("verified_findings", JSONB, nullable=False, server_default=_EMPTY))
    op.add_column("research_results", sa.Column("sentences_removed", sa.Integer, nullable=False, server_default="0"))
    op.add_column("research_results", sa.Column("offline_parts", JSONB, nullable=False, server_default=_EMPTY))
    op.add_column("research_results", sa.Column("council", JSONB, nullable=False, server_default=_EMPTY))


def downgrade() -> None:
    for column in ("council", "offline_parts", "sentences_removed", "verified_findings"):
        op.drop_column("research_results", column)
