"""GPU deployments as the policy declared them (what self-hosted capacity was paid for, and
since when), the completion tokens of requests whose decode time the rollups keep, and the
load rollups capacity planning reads (per backend and minute; token-size histograms), and GPU
telemetry per deployment and minute (DCGM)

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-25
"""

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
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

    op.create_table(
        "backend_load_minutes",
        sa.Column("backend", sa.String(64), primary_key=True),
        sa.Column("minute", sa.DateTime(timezone=True), primary_key=True),
        sa.Column("requests", sa.BigInteger, nullable=False),  # started in this minute
        sa.Column("request_s", sa.Float, nullable=False),  # request-seconds inside it
        sa.Column("completion_tokens", sa.BigInteger, nullable=False),  # finished in it
    )
    op.create_table(
        "audit_token_sizes",
        sa.Column("day", sa.Date, primary_key=True),
        sa.Column("backend", sa.String(64), primary_key=True),
        sa.Column("metric", sa.String(8), primary_key=True),  # "prompt" | "output"
        sa.Column("bucket", sa.SmallInteger, primary_key=True, autoincrement=False),
        sa.Column("count", sa.BigInteger, nullable=False),
    )

    op.create_table(
        "backend_gpu_minutes",
        sa.Column("backend", sa.String(64), primary_key=True),
        sa.Column("minute", sa.DateTime(timezone=True), primary_key=True),
        sa.Column("util_sum", sa.Float, nullable=False),
        sa.Column("samples", sa.BigInteger, nullable=False),
        sa.Column("memory_used_max", sa.BigInteger, nullable=False),
    )


def downgrade() -> None:
    op.drop_table("backend_gpu_minutes")
    op.drop_table("audit_token_sizes")
    op.drop_table("backend_load_minutes")
    op.drop_column("audit_daily", "decode_tokens")
    op.drop_table("gpu_deployments")
