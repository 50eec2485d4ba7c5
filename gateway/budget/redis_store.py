"""The BudgetStore every replica shares: each check-and-update is one Lua script in Redis,
timed by the server's clock; any Redis failure surfaces as BudgetUnavailable, quickly."""

from __future__ import annotations

from collections.abc import Sequence
from importlib.resources import files
from typing import Any

from redis.asyncio import BlockingConnectionPool, Redis
from redis.backoff import NoBackoff
from redis.commands.core import AsyncScript
from redis.retry import Retry

from gateway.budget import redis_keys as keys
from gateway.budget.evaluation import CONCURRENT_RETRY_AFTER_S
from gateway.budget.limits import (
    Admission,
    AdmitRequest,
    LimitReason,
    RateState,
    Reservation,
    ScopeLimits,
    ScopeUsage,
    check_tenant_id,
    period_end_unix_s,
    reservation_of,
    unused_requests,
)
from gateway.budget.redis_pipeline import ScriptPipeline

DAY_KEY_TTL_S = 3 * 86_400  # spend of a day outlives it long enough for reports and retries
MONTH_KEY_TTL_S = 40 * 86_400
HEALTH_CHECK_INTERVAL_S = 15


def make_client(url: str, timeout_s: float = 0.25, max_connections: int = 64) -> Redis:
    """A client that gives up fast: no retries (the caller fails open or closed instead of
    waiting), a PING before reusing a connection idle for a while, and a bounded pool where a
    burst waits up to `timeout_s` for a free connection instead of opening one per request."""
    pool = BlockingConnectionPool.from_url(
        url,
        max_connections=max_connections,
        timeout=timeout_s,
        socket_timeout=timeout_s,
        socket_connect_timeout=timeout_s,
        health_check_interval=HEALTH_CHECK_INTERVAL_S,
        retry=Retry(NoBackoff(), 0),
        retry_on_timeout=False,
    )
    return Redis.from_pool(pool)


def _script_source(name: str) -> str:
    lua = files("gateway.budget") / "lua"
    return (lua / "common.lua").read_text() + "\n" + (lua / f"{name}.lua").read_text()


def _limit(value: int | None) -> str:
    return "" if value is None else str(value)


def _scope_args(limits: ScopeLimits) -> list[str]:
    budget, rate = limits.budget, limits.rate
    return [
        limits.scope,
        _limit(budget.daily_micro_usd if budget else None),
        _limit(budget.monthly_micro_usd if budget else None),
        _limit(budget.daily_tokens if budget else None),
        _limit(budget.monthly_tokens if budget else None),
        repr(budget.soft_fraction if budget else 1.0),
        _limit(rate.rpm if rate else None),
        _limit(rate.tpm if rate else None),
        _limit(rate.concurrent if rate else None),
    ]


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def _float(value: Any) -> float | None:
    return None if value is None else float(_text(value))


def _int(value: Any) -> int | None:
    return None if value is None else int(value)


def _admission(request: AdmitRequest, reply: Sequence[Any]) -> Admission:
    code = int(reply[0])
    if code == 2:  # a retried admit: the reservation made the first time still holds
        return Admission(True, reservation=reservation_of(request))
    rate = None
    if reply[7] is not None or reply[10] is not None:
        rate = RateState(_int(reply[7]), _int(reply[8]), _float(reply[9]),
                         _int(reply[10]), _int(reply[11]), _float(reply[12]))
    if code == 1:
        return Admission(True, soft_limit=bool(int(reply[4])), rate=rate,
                         reservation=reservation_of(request))
    reason = LimitReason(_text(reply[1]))
    retry_s = _float(reply[3])
    if int(reply[5]):  # the hard stop lasts until the period of the refused cap ends
        period = request.day if reason.daily else request.month
        now_s = float(_text(reply[6]))
        retry_s = max(0.0, period_end_unix_s(period) - now_s)
    return Admission(False, reason, _text(reply[2]), retry_s, rate=rate)


class RedisBudgetStore:
    """Takes a client built by the caller (see make_client), who also closes it; or use
    from_url(), and close() closes the client it made."""

    def __init__(
        self,
        client: Redis,
        *,
        reservation_ttl_s: float = 900.0,
        settled_memory_s: float = 900.0,
        op_timeout_s: float = 0.5,
        key_prefix: str = keys.PREFIX,
    ) -> None:
        self._client = client
        self._owns_client = False
        self._ttl_ms = max(1, round(reservation_ttl_s * 1000))
        # A settle retried within this window is a no-op (one small key per settled request).
        self._settled_ms = max(1, round(settled_memory_s * 1000))
        # A guard for clients built without socket timeouts: no call may hang the request.
        self._op_timeout_s = op_timeout_s
        self._prefix = key_prefix
        self._admit_script = client.register_script(_script_source("admit"))
        self._settle_script = client.register_script(_script_source("settle"))
        self._usage_script = client.register_script(_script_source("usage"))
        self._pipeline = ScriptPipeline(client, op_timeout_s)

    @classmethod
    def from_url(
        cls, url: str, *, timeout_s: float = 0.25, reservation_ttl_s: float = 900.0
    ) -> RedisBudgetStore:
        store = cls(make_client(url, timeout_s), reservation_ttl_s=reservation_ttl_s,
                    op_timeout_s=2 * timeout_s)
        store._owns_client = True
        return store

    async def admit(self, request: AdmitRequest) -> Admission:
        tenant, prefix = request.tenant_id, self._prefix
        tk = keys.tenant_keys(tenant, prefix)
        script_keys = [tk.held, tk.reservations, tk.expiry]
        args: list[str | int] = [
            request.request_id, request.cost_micro_usd, request.tokens, self._ttl_ms,
            repr(CONCURRENT_RETRY_AFTER_S), len(request.scopes), request.requests,
            request.slots,
        ]
        for limits in request.scopes:
            script_keys += [
                keys.day_key(tenant, request.day, limits.scope, prefix),
                keys.month_key(tenant, request.month, limits.scope, prefix),
                keys.bucket_key(tenant, limits.scope, prefix),
            ]
            args += _scope_args(limits)
        reply = await self._run(self._admit_script, script_keys, args)
        return _admission(request, reply)

    async def settle(
        self,
        reservation: Reservation,
        actual_micro_usd: int,
        actual_tokens: int,
        requests_used: int | None = None,
    ) -> None:
        tenant, prefix = reservation.tenant_id, self._prefix
        tk = keys.tenant_keys(tenant, prefix)
        script_keys = [tk.held, tk.reservations, tk.expiry,
                       keys.settled_key(tenant, reservation.request_id, prefix)]
        for scope in reservation.scopes:
            script_keys += [
                keys.day_key(tenant, reservation.day, scope, prefix),
                keys.month_key(tenant, reservation.month, scope, prefix),
                keys.bucket_key(tenant, scope, prefix),
            ]
        args: list[str | int] = [
            reservation.request_id, max(0, actual_micro_usd), max(0, actual_tokens),
            reservation.tokens, self._ttl_ms, self._settled_ms, DAY_KEY_TTL_S, MONTH_KEY_TTL_S,
            len(reservation.scopes), unused_requests(reservation, requests_used),
        ]
        await self._run(self._settle_script, script_keys, args)

    async def usage(self, tenant_id: str, scope: str, day: str, month: str) -> ScopeUsage:
        check_tenant_id(tenant_id)
        tk = keys.tenant_keys(tenant_id, self._prefix)
        script_keys = [tk.held, tk.reservations, tk.expiry,
                       keys.day_key(tenant_id, day, scope, self._prefix),
                       keys.month_key(tenant_id, month, scope, self._prefix)]
        reply = await self._run(self._usage_script, script_keys, [scope])
        return ScopeUsage(scope, *(int(v) for v in reply))

    async def close(self) -> None:
        if self._owns_client:  # a client handed in belongs to whoever built it
            await self._client.aclose()

    async def _run(self, script: AsyncScript, script_keys: list[str], args: list[Any]) -> Any:
        return await self._pipeline.call(script, script_keys, args)
