"""research_outbox (messages announced by the relay) and idempotent submissions

Revision ID: 0004
Revises: 0003
"""

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "research_outbox",
        sa.Column("id", sa.BigInteger, sa.Identity(), primary_key=True),
        sa.Column("subject", sa.Text, nullable=False),
        sa.Column("msg_id", sa.Text, nullable=False),
        sa.Column("payload", sa.Text, nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.add_column("research_jobs", sa.Column("idempotency_key", sa.String(200), nullable=True))
    op.add_column("research_jobs", sa.Column("request_hash", sa.String(64), nullable=True))
    # One job per (user, key); rows without a key are not constrained.
    op.create_index(
        "ux_research_jobs_user_idempotency", "research_jobs", ["user_id", "idempotency_key"],
        unique=True, postgresql_where=sa.text("idempotency_key IS NOT NULL"),
    )


def downgrade() -> None:
    op.drop_index("ux_research_jobs_user_idempotency", table_name="research_jobs")
    op.drop_column("research_jobs", "request_hash")
    op.drop_column("research_jobs", "idempotency_key")
    op.drop_table("research_outbox")
