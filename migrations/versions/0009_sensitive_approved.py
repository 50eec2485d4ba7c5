"""Daily rollups count sensitive requests sent unredacted to an external backend under its
approval (policy `approved_for` / `approval`), apart from those kept at home.

Revision ID: 0009
Revises: 0006
Create Date: 2026-11-28
"""

import sqlalchemy as sa
from alembic import op

revision = "0009"
down_revision = "0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("audit_daily", sa.Column("sensitive_approved", sa.BigInteger,
                                           nullable=False, server_default="0"))


def downgrade() -> None:
    op.drop_column("audit_daily", "sensitive_approved")
