"""research_results: rejected claims

Revision ID: 0005
Revises: 0004
"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # Claims proposed by the model (or the offline engine) that the deterministic check
    # refused, each with its reason; results stored before this column have none.
    op.add_column("research_results",
                  sa.Column("rejected_claims", JSONB, nullable=False, server_default=sa.text("'[]'::jsonb")))


def downgrade() -> None:
    op.drop_column("research_results", "rejected_claims")
