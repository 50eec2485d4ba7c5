"""The GPU deployments the policy declared over time, and the load rollups capacity planning
reads (migration 0005 is the DDL truth). gpu_deployments: one row per span in which a
self-hosted backend existed at one price; `until` is NULL while the policy in force still
declares it. Reports charge GPU-hours from these spans only."""

from __future__ import annotations

from sqlalchemy import (
    BigInteger,
    Column,
    Date,
    DateTime,
    Float,
    Integer,
    SmallInteger,
    String,
    Table,
)

from gateway.db.tables import metadata

gpu_deployments = Table(
    "gpu_deployments",
    metadata,
    Column("backend", String(64), primary_key=True),
    Column("since", DateTime(timezone=True), primary_key=True),
    Column("until", DateTime(timezone=True), nullable=True),
    Column("hourly_micro_usd", BigInteger, nullable=False),  # every GPU of it, per hour
    Column("gpu_count", Integer, nullable=False),
)

# Per backend and UTC minute, for capacity planning: requests that started in it, the
# request-seconds spent inside it (÷ 60: the mean number in flight), and completion tokens of
# requests that finished in it (the throughput the deployment showed).
backend_load_minutes = Table(
    "backend_load_minutes",
    metadata,
    Column("backend", String(64), primary_key=True),
    Column("minute", DateTime(timezone=True), primary_key=True),
    Column("requests", BigInteger, nullable=False),
    Column("request_s", Float, nullable=False),
    Column("completion_tokens", BigInteger, nullable=False),
)

# Prompt and output sizes of successful requests per day and backend, on the latency
# histograms' 10 %-wide log buckets: percentiles of request size without reading rows.
audit_token_sizes = Table(
    "audit_token_sizes",
    metadata,
    Column("day", Date, primary_key=True),
    Column("backend", String(64), primary_key=True),
    Column("metric", String(8), primary_key=True),  # "prompt" | "output"
    Column("bucket", SmallInteger, primary_key=True, autoincrement=False),
    Column("count", BigInteger, nullable=False),
)

# Per deployment and UTC minute, from its DCGM exporter: utilisation samples (0..1, mean over
# its GPUs) summed with their count, and the most framebuffer memory used (bytes, all GPUs).
backend_gpu_minutes = Table(
    "backend_gpu_minutes",
    metadata,
    Column("backend", String(64), primary_key=True),
    Column("minute", DateTime(timezone=True), primary_key=True),
    Column("util_sum", Float, nullable=False),
    Column("samples", BigInteger, nullable=False),
    Column("memory_used_max", BigInteger, nullable=False),
)
