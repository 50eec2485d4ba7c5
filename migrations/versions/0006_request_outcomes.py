"""Judged outcomes of requests: a tenant's own feedback (POST /v1/feedback) and shadow
judgements (the strong backend's answer and the served one's, scored by a judge backend).
Kept beside the audit log, joined on request_id: audit rows are hash-chained and never
updated, and feedback may arrive before its request's row has been written.

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-25
"""

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "request_outcomes",
        sa.Column("request_id", sa.String(64), primary_key=True),
        sa.Column("source", sa.String(16), primary_key=True),  # "feedback" | "shadow"
        sa.Column("tenant_id", sa.String(32), nullable=False),
        sa.Column("ts", sa.DateTime(timezone=True), nullable=False),
        sa.Column("score", sa.Float, nullable=True),  # feedback, 0-1 ("good" 1, "bad" 0)
        sa.Column("label", sa.String(8), nullable=True),  # feedback given as a label
        sa.Column("served_backend", sa.String(64), nullable=True),  # shadow: answered the client
        sa.Column("strong_backend", sa.String(64), nullable=True),
        sa.Column("judge_backend", sa.String(64), nullable=True),
        sa.Column("weak_score", sa.Float, nullable=True),  # shadow, 0-1
        sa.Column("strong_score", sa.Float, nullable=True),
        sa.Column("cost_micro_usd", sa.BigInteger, nullable=False, server_default="0"),
    )
    op.create_index("ix_request_outcomes_tenant_ts", "request_outcomes", ["tenant_id", "ts"])
    # The shadow budget sums today's shadow spend before every judgement.
    op.create_index("ix_request_outcomes_source_ts", "request_outcomes", ["source", "ts"])


def downgrade() -> None:
    op.drop_index("ix_request_outcomes_source_ts", "request_outcomes")
    op.drop_index("ix_request_outcomes_tenant_ts", "request_outcomes")
    op.drop_table("request_outcomes")
