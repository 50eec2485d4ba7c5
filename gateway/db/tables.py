"""SQLAlchemy table definitions (Core). Alembic migrations in migrations/ are the DDL truth;
these mirror them for queries, and `metadata.create_all` only ever runs on a fresh SQLite file."""

from __future__ import annotations

from sqlalchemy import (
    JSON,
    Boolean,
    Column,
    DateTime,
    ForeignKey,
    Index,
    MetaData,
    String,
    Table,
    func,
    true,
)

metadata = MetaData()

tenants = Table(
    "tenants",
    metadata,
    Column("id", String(32), primary_key=True),
    Column("name", String(128), nullable=False, unique=True),
    Column("enabled", Boolean, nullable=False, server_default=true()),
    Column("created_at", DateTime(timezone=True), nullable=False, server_default=func.now()),
)

api_keys = Table(
    "api_keys",
    metadata,
    Column("id", String(32), primary_key=True),
    Column("tenant_id", String(32), ForeignKey("tenants.id", ondelete="CASCADE"), nullable=False),
    # hex SHA-256 (or HMAC-SHA-256 with the pepper) of the whole key; the key itself is never
    # stored, and `prefix` is only there so people can tell their keys apart.
    Column("key_hash", String(64), nullable=False, unique=True),
    Column("prefix", String(16), nullable=False),
    Column("name", String(128), nullable=True),
    Column("created_at", DateTime(timezone=True), nullable=False, server_default=func.now()),
    Column("revoked_at", DateTime(timezone=True), nullable=True),
)

Index("ix_api_keys_tenant_id", api_keys.c.tenant_id)

# Budgets and limits set through the admin API; a row replaces the policy file's setting for
# that scope. Values are the policy schema's BudgetSpec / LimitsSpec as JSON.
budget_limits = Table(
    "budget_limits",
    metadata,
    Column("tenant_id", String(32), ForeignKey("tenants.id", ondelete="CASCADE"),
           primary_key=True),
    Column("scope", String(160), primary_key=True),
    Column("budget", JSON, nullable=True),
    Column("limits", JSON, nullable=True),
    Column("updated_at", DateTime(timezone=True), nullable=False, server_default=func.now()),
)

# Responses API conversation state (`store: true`): the items a response was given and the
# response itself, so `previous_response_id` can continue it. Kept until `expires_at`.
stored_responses = Table(
    "stored_responses",
    metadata,
    Column("id", String(64), primary_key=True),
    Column("tenant_id", String(32), ForeignKey("tenants.id", ondelete="CASCADE"),
           nullable=False),
    Column("created_at", DateTime(timezone=True), nullable=False),
    Column("expires_at", DateTime(timezone=True), nullable=False),
    Column("context", JSON, nullable=False),
    Column("response", JSON, nullable=False),
)

Index("ix_stored_responses_expires_at", stored_responses.c.expires_at)
