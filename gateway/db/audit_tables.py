"""Audit tables (Core): one lean row per request, the hash-chain heads, the daily rollups the
reports read, administrative actions, and opted-in redacted content.

Migration 0003 is the DDL truth. In Postgres `audit_log` is range-partitioned by month on
`ts` (so retention drops whole partitions); its primary key therefore includes `ts`.
"""

from __future__ import annotations

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    Column,
    Date,
    DateTime,
    Float,
    Index,
    Integer,
    SmallInteger,
    String,
    Table,
    Text,
)

from gateway.db.tables import metadata

audit_log = Table(
    "audit_log",
    metadata,
    Column("chain_id", String(48), primary_key=True),
    Column("seq", BigInteger, primary_key=True, autoincrement=False),
    Column("ts", DateTime(timezone=True), primary_key=True),
    Column("prev_hash", String(64), nullable=False),
    Column("row_hash", String(64), nullable=False),
    Column("request_id", String(64), nullable=False),
    Column("tenant_id", String(32), nullable=False),
    Column("tenant", String(128), nullable=False),
    Column("key_id", String(32), nullable=False),
    Column("endpoint", String(40), nullable=False),
    Column("requested_model", String(128), nullable=False),
    Column("backend", String(64)),
    Column("upstream_model", String(160)),
    Column("zone", String(32)),
    Column("rule", String(64)),
    Column("status", SmallInteger, nullable=False),
    Column("outcome", String(24), nullable=False),
    Column("error_type", String(64)),
    Column("stream", Boolean, nullable=False),
    Column("prompt_tokens", Integer, nullable=False),
    Column("completion_tokens", Integer, nullable=False),
    Column("cached_tokens", Integer, nullable=False),
    Column("max_output_tokens", Integer),
    Column("prompt_tokens_exact", Boolean, nullable=False),
    Column("complexity", String(8)),
    Column("p_strong", Float),
    Column("sensitivity", String(200), nullable=False),  # categories, comma-separated
    Column("redacted", Boolean, nullable=False),
    Column("tags", String(400), nullable=False),  # comma-separated
    Column("cost_micro_usd", BigInteger, nullable=False),
    Column("baseline_cost_micro_usd", BigInteger),
    Column("predicted_cost_micro_usd", BigInteger),
    Column("duration_s", Float, nullable=False),
    Column("ttft_s", Float),
    Column("predicted_ttft_s", Float),
    Column("attempts", SmallInteger, nullable=False),
    Column("spill_over", Boolean, nullable=False),
    Column("affinity", String(8)),
    Column("unmetered", Boolean, nullable=False),
    Column("over_soft_limit", Boolean, nullable=False),
    # The decision trace: rejected candidates with reasons, backends tried, the chosen
    # backend's telemetry, detector types. Small, and different for every request.
    Column("trace", JSON),
)

# (ts, chain position): the order pages are read in, by reports and replay alike.
Index("ix_audit_log_ts", audit_log.c.ts, audit_log.c.chain_id, audit_log.c.seq)
Index("ix_audit_log_tenant_ts", audit_log.c.tenant_id, audit_log.c.ts)
Index("ix_audit_log_request_id", audit_log.c.request_id)

# The last link of every chain: verification also notices rows cut off a chain's end.
audit_chains = Table(
    "audit_chains",
    metadata,
    Column("chain_id", String(48), primary_key=True),
    Column("seq", BigInteger, nullable=False),
    Column("row_hash", String(64), nullable=False),
    Column("updated_at", DateTime(timezone=True), nullable=False),
)

# One row per (UTC day, tenant, requested model, backend, rule): what reports over months
# read instead of scanning the log. Kept by the writer in the same transaction as the rows.
audit_daily = Table(
    "audit_daily",
    metadata,
    Column("day", Date, primary_key=True),
    Column("tenant_id", String(32), primary_key=True),
    Column("requested_model", String(128), primary_key=True),
    Column("backend", String(64), primary_key=True),  # "" when nothing was chosen
    Column("rule", String(64), primary_key=True),  # "" when no rule fired
    Column("tenant", String(128), nullable=False),
    Column("zone", String(32), nullable=False),
    Column("requests", BigInteger, nullable=False),
    Column("errors", BigInteger, nullable=False),
    Column("prompt_tokens", BigInteger, nullable=False),
    Column("completion_tokens", BigInteger, nullable=False),
    Column("cached_tokens", BigInteger, nullable=False),
    Column("cost_micro_usd", BigInteger, nullable=False),
    Column("baseline_cost_micro_usd", BigInteger, nullable=False),
    Column("sensitive", BigInteger, nullable=False),
    Column("sensitive_external", BigInteger, nullable=False),  # left self_hosted (redacted)
    # Of those, sent unredacted under a backend's approval (policy `approved_for`; 0009).
    Column("sensitive_approved", BigInteger, nullable=False, server_default="0"),
    Column("redacted", BigInteger, nullable=False),
    Column("spill_overs", BigInteger, nullable=False),
    Column("duration_s_sum", Float, nullable=False),
    Column("ttft_s_sum", Float, nullable=False),
    Column("ttft_count", BigInteger, nullable=False),
    Column("decode_s_sum", Float, nullable=False),  # after the first token, for tokens/s
    # Completion tokens less the first of the requests decode_s_sum measured (migration 0005).
    Column("decode_tokens", BigInteger, nullable=False, server_default="0"),
    Column("kv_hit_sum", Float, nullable=False),
    Column("kv_hit_count", BigInteger, nullable=False),
)

# Latency histograms per day, tenant and backend on log-spaced buckets (10 % wide), so
# percentiles over any range are a sum of counts, on SQLite as on Postgres.
audit_latency = Table(
    "audit_latency",
    metadata,
    Column("day", Date, primary_key=True),
    Column("tenant_id", String(32), primary_key=True),
    Column("backend", String(64), primary_key=True),
    Column("metric", String(8), primary_key=True),  # "total" | "ttft"
    Column("bucket", SmallInteger, primary_key=True, autoincrement=False),
    Column("count", BigInteger, nullable=False),
)

# Minutes in which a backend served at least one request: its busy share of the time paid for.
backend_busy_minutes = Table(
    "backend_busy_minutes",
    metadata,
    Column("backend", String(64), primary_key=True),
    Column("minute", DateTime(timezone=True), primary_key=True),
)

admin_audit = Table(
    "admin_audit",
    metadata,
    Column("chain_id", String(48), primary_key=True),
    Column("seq", BigInteger, primary_key=True, autoincrement=False),
    Column("ts", DateTime(timezone=True), nullable=False),
    Column("prev_hash", String(64), nullable=False),
    Column("row_hash", String(64), nullable=False),
    Column("actor", String(64), nullable=False),
    Column("action", String(64), nullable=False),
    Column("target", String(200), nullable=False),
    Column("details", JSON),
)

Index("ix_admin_audit_ts", admin_audit.c.ts)

# Prompts and responses, for tenants that opted in, with sensitive spans already replaced.
audit_content = Table(
    "audit_content",
    metadata,
    Column("request_id", String(64), primary_key=True),
    Column("ts", DateTime(timezone=True), nullable=False),
    Column("tenant_id", String(32), nullable=False),
    Column("prompt", Text, nullable=False),
    Column("response", Text, nullable=False),
)

Index("ix_audit_content_tenant_ts", audit_content.c.tenant_id, audit_content.c.ts)
