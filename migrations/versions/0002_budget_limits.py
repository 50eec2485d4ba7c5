"""budgets and rate limits set through the admin API (override the policy file per scope)

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-22
"""

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "budget_limits",
        sa.Column("tenant_id", sa.String(32),
                  sa.ForeignKey("tenants.id", ondelete="CASCADE"), primary_key=True),
        # "tenant", "key:<key id>" or "tag:<tag>"
        sa.Column("scope", sa.String(160), primary_key=True),
        # The policy schema's BudgetSpec / LimitsSpec as JSON; NULL: that part is unlimited.
        sa.Column("budget", sa.JSON, nullable=True),
        sa.Column("limits", sa.JSON, nullable=True),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False,
                  server_default=sa.func.now()),
    )


def downgrade() -> None:
    op.drop_table("budget_limits")
