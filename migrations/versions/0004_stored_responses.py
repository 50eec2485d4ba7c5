"""stored Responses API responses (conversation state for previous_response_id)

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-25
"""

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "stored_responses",
        sa.Column("id", sa.String(64), primary_key=True),
        sa.Column("tenant_id", sa.String(32),
                  sa.ForeignKey("tenants.id", ondelete="CASCADE"), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        # created_at + GATEWAY_RESPONSES_RETENTION_DAYS: unreadable after, then purged.
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
        # The input items the response was given (stored conversation + this turn's input).
        sa.Column("context", sa.JSON, nullable=False),
        sa.Column("response", sa.JSON, nullable=False),
    )
    op.create_index("ix_stored_responses_expires_at", "stored_responses", ["expires_at"])


def downgrade() -> None:
    op.drop_index("ix_stored_responses_expires_at", table_name="stored_responses")
    op.drop_table("stored_responses")
