"""audit log (monthly partitions in Postgres), chain heads, daily rollups, admin actions,
opted-in content

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-22
"""

from datetime import UTC, date, datetime

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None

# Partitions made now: last month to three months ahead. The gateway keeps creating the
# coming months' partitions (gateway/audit/partition_repository.py); anything outside lands in the
# default partition rather than failing.
MONTHS_BEFORE, MONTHS_AHEAD = 1, 3


def _month(first: date, delta: int) -> date:
    index = first.year * 12 + first.month - 1 + delta
    return date(index // 12, index % 12 + 1, 1)


def upgrade() -> None:
    postgres = op.get_bind().dialect.name == "postgresql"
    op.create_table(
        "audit_log",
        sa.Column("chain_id", sa.String(48), nullable=False),
        sa.Column("seq", sa.BigInteger, nullable=False, autoincrement=False),
        sa.Column("ts", sa.DateTime(timezone=True), nullable=False),
        sa.Column("prev_hash", sa.String(64), nullable=False),
        sa.Column("row_hash", sa.String(64), nullable=False),
        sa.Column("request_id", sa.String(64), nullable=False),
        sa.Column("tenant_id", sa.String(32), nullable=False),
        sa.Column("tenant", sa.String(128), nullable=False),
        sa.Column("key_id", sa.String(32), nullable=False),
        sa.Column("endpoint", sa.String(40), nullable=False),
        sa.Column("requested_model", sa.String(128), nullable=False),
        sa.Column("backend", sa.String(64)),
        sa.Column("upstream_model", sa.String(160)),
        sa.Column("zone", sa.String(32)),
        sa.Column("rule", sa.String(64)),
        sa.Column("status", sa.SmallInteger, nullable=False),
        sa.Column("outcome", sa.String(24), nullable=False),
        sa.Column("error_type", sa.String(64)),
        sa.Column("stream", sa.Boolean, nullable=False),
        sa.Column("prompt_tokens", sa.Integer, nullable=False),
        sa.Column("completion_tokens", sa.Integer, nullable=False),
        sa.Column("cached_tokens", sa.Integer, nullable=False),
        sa.Column("max_output_tokens", sa.Integer),
        sa.Column("prompt_tokens_exact", sa.Boolean, nullable=False),
        sa.Column("complexity", sa.String(8)),
        sa.Column("p_strong", sa.Float),
        sa.Column("sensitivity", sa.String(200), nullable=False),
        sa.Column("redacted", sa.Boolean, nullable=False),
        sa.Column("tags", sa.String(400), nullable=False),
        sa.Column("cost_micro_usd", sa.BigInteger, nullable=False),
        sa.Column("baseline_cost_micro_usd", sa.BigInteger),
        sa.Column("predicted_cost_micro_usd", sa.BigInteger),
        sa.Column("duration_s", sa.Float, nullable=False),
        sa.Column("ttft_s", sa.Float),
        sa.Column("predicted_ttft_s", sa.Float),
        sa.Column("attempts", sa.SmallInteger, nullable=False),
        sa.Column("spill_over", sa.Boolean, nullable=False),
        sa.Column("affinity", sa.String(8)),
        sa.Column("unmetered", sa.Boolean, nullable=False),
        sa.Column("over_soft_limit", sa.Boolean, nullable=False),
        sa.Column("trace", sa.JSON),
        sa.PrimaryKeyConstraint("chain_id", "seq", "ts", name="pk_audit_log"),
        postgresql_partition_by="RANGE (ts)",
    )
    if postgres:
        this_month = datetime.now(UTC).date().replace(day=1)
        for delta in range(-MONTHS_BEFORE, MONTHS_AHEAD + 1):
            start, end = _month(this_month, delta), _month(this_month, delta + 1)
            op.execute(
                f"CREATE TABLE audit_log_y{start.year}m{start.month:02d} PARTITION OF audit_log"
                f" FOR VALUES FROM ('{start.isoformat()}') TO ('{end.isoformat()}')"
            )
        op.execute("CREATE TABLE audit_log_default PARTITION OF audit_log DEFAULT")
    op.create_index("ix_audit_log_ts", "audit_log", ["ts", "chain_id", "seq"])
    op.create_index("ix_audit_log_tenant_ts", "audit_log", ["tenant_id", "ts"])
    op.create_index("ix_audit_log_request_id", "audit_log", ["request_id"])

    op.create_table(
        "audit_chains",
        sa.Column("chain_id", sa.String(48), primary_key=True),
        sa.Column("seq", sa.BigInteger, nullable=False),
        sa.Column("row_hash", sa.String(64), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
    )
    counters = [
        sa.Column(name, sa.BigInteger, nullable=False)
        for name in ("requests", "errors", "prompt_tokens", "completion_tokens",
                     "cached_tokens", "cost_micro_usd", "baseline_cost_micro_usd",
                     "sensitive", "sensitive_external", "redacted", "spill_overs")
    ]
    op.create_table(
        "audit_daily",
        sa.Column("day", sa.Date, primary_key=True),
        sa.Column("tenant_id", sa.String(32), primary_key=True),
        sa.Column("requested_model", sa.String(128), primary_key=True),
        sa.Column("backend", sa.String(64), primary_key=True),
        sa.Column("rule", sa.String(64), primary_key=True),
        sa.Column("tenant", sa.String(128), nullable=False),
        sa.Column("zone", sa.String(32), nullable=False),
        *counters,
        sa.Column("duration_s_sum", sa.Float, nullable=False),
        sa.Column("ttft_s_sum", sa.Float, nullable=False),
        sa.Column("ttft_count", sa.BigInteger, nullable=False),
        sa.Column("decode_s_sum", sa.Float, nullable=False),
        sa.Column("kv_hit_sum", sa.Float, nullable=False),
        sa.Column("kv_hit_count", sa.BigInteger, nullable=False),
    )
    op.create_index("ix_audit_daily_tenant_day", "audit_daily", ["tenant_id", "day"])
    op.create_table(
        "audit_latency",
        sa.Column("day", sa.Date, primary_key=True),
        sa.Column("tenant_id", sa.String(32), primary_key=True),
        sa.Column("backend", sa.String(64), primary_key=True),
        sa.Column("metric", sa.String(8), primary_key=True),
        sa.Column("bucket", sa.SmallInteger, primary_key=True, autoincrement=False),
        sa.Column("count", sa.BigInteger, nullable=False),
    )
    op.create_table(
        "backend_busy_minutes",
        sa.Column("backend", sa.String(64), primary_key=True),
        sa.Column("minute", sa.DateTime(timezone=True), primary_key=True),
    )
    op.create_table(
        "admin_audit",
        sa.Column("chain_id", sa.String(48), primary_key=True),
        sa.Column("seq", sa.BigInteger, primary_key=True, autoincrement=False),
        sa.Column("ts", sa.DateTime(timezone=True), nullable=False),
        sa.Column("prev_hash", sa.String(64), nullable=False),
        sa.Column("row_hash", sa.String(64), nullable=False),
        sa.Column("actor", sa.String(64), nullable=False),
        sa.Column("action", sa.String(64), nullable=False),
        sa.Column("target", sa.String(200), nullable=False),
        sa.Column("details", sa.JSON),
    )
    op.create_index("ix_admin_audit_ts", "admin_audit", ["ts"])
    op.create_table(
        "audit_content",
        sa.Column("request_id", sa.String(64), primary_key=True),
        sa.Column("ts", sa.DateTime(timezone=True), nullable=False),
        sa.Column("tenant_id", sa.String(32), nullable=False),
        sa.Column("prompt", sa.Text, nullable=False),
        sa.Column("response", sa.Text, nullable=False),
    )
    op.create_index("ix_audit_content_tenant_ts", "audit_content", ["tenant_id", "ts"])


def downgrade() -> None:
    for table in ("audit_content", "admin_audit", "backend_busy_minutes", "audit_latency",
                  "audit_daily", "audit_chains"):
        op.drop_table(table)
    # Dropping the parent drops every partition with it.
    op.drop_table("audit_log")
