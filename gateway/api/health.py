"""Liveness (/health) and readiness (/ready: database, Redis, policy, audit writer)."""

from __future__ import annotations

import orjson
from fastapi import APIRouter
from sqlalchemy import text
from starlette.requests import Request
from starlette.responses import Response

from gateway.audit.writer import AuditWriter
from gateway.components import Components

router = APIRouter()
AUDIT_BACKLOG_LIMIT = 100_000


@router.get("/health")
async def health() -> Response:
    return Response(b'{"status":"ok"}', media_type="application/json")


@router.get("/ready")
async def ready(request: Request) -> Response:
    parts: Components = request.app.state.components
    checks: dict[str, str] = {}
    try:
        async with parts.engine.connect() as conn:
            await conn.execute(text("SELECT 1"))
        checks["database"] = "ok"
    except Exception as exc:  # readiness reports any failure rather than raising
        checks["database"] = f"error: {type(exc).__name__}"
    if parts.redis is not None:
        try:
            await parts.redis.ping()
            checks["redis"] = "ok"
        except Exception as exc:
            checks["redis"] = f"error: {type(exc).__name__}"
    checks["policy"] = f"ok ({len(parts.policy.current.backends)} backends)"
    checks["audit"] = audit_check(parts.audit)
    healthy = all(v.startswith("ok") for v in checks.values())
    body = orjson.dumps({"status": "ready" if healthy else "not_ready", "checks": checks})
    return Response(body, status_code=200 if healthy else 503, media_type="application/json")


def audit_check(audit: AuditWriter) -> str:
    """Spooling while the database is away is fine (rows are on disk); rows held only in
    memory because even the spool fails, or a backlog that will not drain, are not."""
    if audit.problem is not None:
        return f"error: {audit.problem}"
    if audit.backlog >= AUDIT_BACKLOG_LIMIT:
        return f"error: backlog {audit.backlog}"
    spooled = audit.numbers()["spool_rows"]
    return f"ok ({spooled} rows spooled, awaiting the database)" if spooled else "ok"


@router.get("/metrics", include_in_schema=False)
async def metrics(request: Request) -> Response:
    parts: Components = request.app.state.components
    parts.metrics.audit_backlog.set(parts.audit.backlog)
    return Response(parts.metrics.render(), media_type="text/plain; version=0.0.4")
