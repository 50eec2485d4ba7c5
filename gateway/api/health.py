"""Liveness (/healthz, alias /health) and readiness (/readyz, alias /ready: database, Redis,
policy, engine telemetry, audit writer), plus the Prometheus scrape endpoint (behind the
metrics key)."""

from __future__ import annotations

import orjson
from fastapi import APIRouter
from starlette.requests import Request
from starlette.responses import Response

from gateway.api.auth import require_metrics_reader
from gateway.api.parts import Parts
from gateway.audit.writer import AuditWriter
from gateway.policy.loader import PolicySet
from gateway.policy.tenants import BudgetStoreFailure

router = APIRouter()
AUDIT_BACKLOG_LIMIT = 100_000
AUDIT_MIN_FREE_BYTES = 256 * 1024  # less, and the next spooled batch or journal file may fail


@router.get("/healthz")
@router.get("/health", include_in_schema=False)
async def health() -> Response:
    """Alive: the event loop answers. Nothing else is checked, so a restart is only ever
    triggered by a wedged process, never by a dependency being away."""
    return Response(b'{"status":"ok"}', media_type="application/json")


@router.get("/readyz")
@router.get("/ready", include_in_schema=False)
async def ready(parts: Parts) -> Response:
    """Ready to take traffic. A check starting with "error" makes it a 503; "degraded" is
    reported but keeps the gateway in rotation."""
    checks: dict[str, str] = {}
    try:
        await parts.database.ping()
        checks["database"] = "ok"
    except Exception as exc:  # readiness reports any failure rather than raising
        checks["database"] = database_down(type(exc).__name__, parts.authenticator.known_keys)
    policy = parts.policy.current
    if parts.redis is not None:
        try:
            await parts.redis.ping()
            checks["redis"] = "ok"
        except Exception as exc:
            checks["redis"] = redis_down(type(exc).__name__, policy)
    checks["policy"] = f"ok ({len(policy.backends)} backends)"
    checks["telemetry"] = telemetry_check(parts.fleet.details(), policy)
    checks["audit"] = audit_check(parts.audit)
    if parts.key_changes is not None:
        checks["key_changes"] = ("ok" if parts.key_changes.connected else
                                 f"degraded: channel down; revocations apply within "
                                 f"{parts.edge.key_cache_ttl_s:g} s")
    healthy = not any(v.startswith("error") for v in checks.values())
    for name, verdict in checks.items():
        parts.metrics.readiness_check.labels(check=name).set(check_level(verdict))
    body = orjson.dumps({"status": "ready" if healthy else "not_ready", "checks": checks})
    return Response(body, status_code=200 if healthy else 503, media_type="application/json")


def database_down(error: str, known_keys: int) -> str:
    """Without the database no new key can be verified: out of rotation, unless this replica
    holds keys verified earlier (this run, or a persisted earlier one), which it serves."""
    if known_keys:
        return f"degraded: unreachable ({error}); serving {known_keys} keys verified earlier"
    return f"error: unreachable ({error}); no key can be verified"


def redis_down(error: str, policy: PolicySet) -> str:
    """Without Redis, fail_open tenants are still served (unmetered, within their share of
    what is left of their budget) and only fail_closed ones are refused: the replica stays in
    rotation unless every tenant it could meet fails closed (a probe would otherwise take
    every replica out at once, fail_open tenants with them)."""
    open_named = sorted(name for name, t in policy.tenants.items()
                        if t.on_budget_store_error is BudgetStoreFailure.FAIL_OPEN)
    others_open = policy.default_tenant.on_budget_store_error is BudgetStoreFailure.FAIL_OPEN
    if not open_named and not others_open:
        return f"error: unreachable ({error}); every tenant fails closed"
    served = open_named + (["tenants the policy does not name"] if others_open else [])
    return f"degraded: unreachable ({error}); serving fail_open tenants: {', '.join(served)}"


def check_level(verdict: str) -> int:
    """A check's verdict as the readiness gauge's number: 1 ok, 0 degraded, -1 error."""
    if verdict.startswith("error"):
        return -1
    return 0 if verdict.startswith("degraded") else 1


def telemetry_check(details: dict[str, dict[str, object]], policy: PolicySet) -> str:
    """Every scraped engine's metrics younger than the policy's stale_after_s.

    Stale telemetry only degrades readiness: the router already tries such a backend last
    (or never, under on_stale: fail_closed), and every replica sees the same dead engine, so
    taking this gateway out of rotation would only move the traffic, not route around it."""
    limit_s = policy.telemetry.stale_after_s
    stale: list[str] = []
    for name in sorted(policy.metrics_targets()):
        age = details.get(name, {}).get("scrape_age_s")
        if not isinstance(age, float | int):
            stale.append(f"{name} (never scraped)")
        elif age > limit_s:
            stale.append(f"{name} ({age:.1f} s old)")
    if stale:
        return f"degraded: stale metrics from {', '.join(stale)}"
    return "ok"


def audit_check(audit: AuditWriter) -> str:
    """Spooling while the database is away is fine (rows are on disk); rows held only in
    memory because even the spool fails, or a backlog that will not drain, are not."""
    if audit.problem is not None:
        return f"error: {audit.problem}"
    free = audit.disk_free_bytes()
    if free is not None and free < AUDIT_MIN_FREE_BYTES:
        # Read from the disk at every probe, not from the last write's fate: a full volume
        # stays "not ready" while idle, and is ready again once it has room.
        return f"error: the audit spool's volume is full ({free} bytes free)"
    if audit.backlog >= AUDIT_BACKLOG_LIMIT:
        return f"error: backlog {audit.backlog}"
    spooled = audit.numbers()["spool_rows"]
    return f"ok ({spooled} rows spooled, awaiting the database)" if spooled else "ok"


@router.get("/metrics", include_in_schema=False)
async def metrics(request: Request, parts: Parts) -> Response:
    """Prometheus text. Needs the metrics key or the admin key: the counters are labelled
    with tenant names, which no tenant may read of another."""
    require_metrics_reader(request, parts.secrets.metrics_key, parts.secrets.admin_key)
    parts.metrics.audit_backlog.set(parts.audit.backlog)
    return Response(parts.metrics.render(), media_type="text/plain; version=0.0.4")
