"""Judged outcomes of requests (migration 0006 is the DDL truth): a tenant's feedback and
shadow judgements, one row per (request, source), joined to audit_log on request_id."""

from __future__ import annotations

from sqlalchemy import BigInteger, Column, DateTime, Float, Index, String, Table

from gateway.db.tables import metadata

FEEDBACK = "feedback"
SHADOW = "shadow"

request_outcomes = Table(
    "request_outcomes",
    metadata,
    Column("request_id", String(64), primary_key=True),
    Column("source", String(16), primary_key=True),  # FEEDBACK | SHADOW
    Column("tenant_id", String(32), nullable=False),
    Column("ts", DateTime(timezone=True), nullable=False),
    Column("score", Float),  # feedback, 0-1 ("good" is 1, "bad" 0)
    Column("label", String(8)),  # feedback given as a label
    Column("served_backend", String(64)),  # shadow: the backend that answered the client
    Column("strong_backend", String(64)),
    Column("judge_backend", String(64)),
    Column("weak_score", Float),  # shadow: the served answer's score, 0-1
    Column("strong_score", Float),  # shadow: the strong backend's answer's score, 0-1
    Column("cost_micro_usd", BigInteger, nullable=False, server_default="0"),
)

Index("ix_request_outcomes_tenant_ts", request_outcomes.c.tenant_id, request_outcomes.c.ts)
Index("ix_request_outcomes_source_ts", request_outcomes.c.source, request_outcomes.c.ts)
