"""GPU deployments as the policy declared them (what self-hosted capacity was paid for, and
since when), and the completion tokens of requests whose decode time the rollups keep

Revision ID: 0005
Revises: 0003
Create Date: 2026-11-25
"""

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "gpu_deployments",
        sa.Column("backend", sa.String(64), primary_key=True),
        sa.Column("since", sa.DateTime(timezone=True), primary_key=True),
        sa.Column("until", sa.DateTime(timezone=True), nullable=True),
        sa.Column("hourly_micro_usd", sa.BigInteger, nullable=False),
        sa.Column("gpu_count", sa.Integer, nullable=False),
    )
    # Tokens/s after the first token divides these by decode_s_sum: only the completion
    # tokens of requests that measured a decode time, never every request's.
    op.add_column("audit_daily", sa.Column("decode_tokens", sa.BigInteger, nullable=False,
                                           server_default="0"))


def downgrade() -> None:
    op.drop_column("audit_daily", "decode_tokens")
    op.drop_table("gpu_deployments")
