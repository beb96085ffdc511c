"""research_results: the verification summary (sentences and claims by check level)

Revision ID: 0010
Revises: 0009
"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # What the checks did to the report and its claims (shared/research/events.py,
    # VerificationSummary): kept sentences and claims by level (quoted, entailed,
    # supported), removed sentences and refused claims by reason, and whether the
    # entailment judge ran. NULL for results stored before this revision: their levels
    # were never recorded, and nothing is made up for them. Claims are stored as JSON,
    # so each claim's ``level`` needs no column.
    op.add_column("research_results", sa.Column("verification", JSONB, nullable=True))


def downgrade() -> None:
    op.drop_column("research_results", "verification")
