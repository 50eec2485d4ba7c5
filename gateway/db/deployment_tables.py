"""The GPU deployments the policy declared over time (migration 0005 is the DDL truth): one
row per span in which a self-hosted backend existed at one price; `until` is NULL while the
policy in force still declares it. Reports charge GPU-hours from these spans only."""

from __future__ import annotations

from sqlalchemy import BigInteger, Column, DateTime, Integer, String, Table

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
