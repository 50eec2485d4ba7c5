"""Spend written into the shared budget store from outside a reservation: a tenant's period
rebuilt from the audit log when Redis lost it, and what was served unmetered while Redis was
away, charged once it answers again."""

from __future__ import annotations

from redis.asyncio import Redis

from gateway.budget import redis_keys as keys
from gateway.budget.redis_pipeline import ScriptPipeline
from gateway.budget.redis_store import DAY_KEY_TTL_S, MONTH_KEY_TTL_S

# KEYS: marker   Reply: {when the period was last rebuilt or '', the server's time now}
_CHECK = """
local t = redis.call('TIME')
return {redis.call('GET', KEYS[1]) or '', t[1] .. '.' .. string.format('%06d', tonumber(t[2]))}
"""

# KEYS: day spend, month spend, marker   ARGV: day usd, month usd, day ttl s, month ttl s,
# the time the audit was read from
# Raised to at least the audited amount, never lowered: two replicas rebuilding at once, or a
# settle racing a rebuild, count nothing twice.
_RAISE = """
redis.call('SET', KEYS[3], ARGV[5], 'EX', ARGV[3])
for i = 1, 2 do
  local have = tonumber(redis.call('HGET', KEYS[i], 'u') or '0')
  local want = tonumber(ARGV[i])
  if want > have then
    redis.call('HINCRBY', KEYS[i], 'u', string.format('%d', want - have))
  end
  redis.call('EXPIRE', KEYS[i], ARGV[i + 2])
end
return 1
"""

# KEYS: per scope: day spend, month spend   ARGV: usd, tokens, day ttl s, month ttl s
_CHARGE = """
for i = 1, #KEYS do
  redis.call('HINCRBY', KEYS[i], 'u', ARGV[1])
  redis.call('HINCRBY', KEYS[i], 't', ARGV[2])
  redis.call('EXPIRE', KEYS[i], (i % 2 == 1) and ARGV[3] or ARGV[4])
end
return 1
"""


class SpendLedger:
    """Every call raises BudgetUnavailable when Redis fails, like the budget store's own."""

    def __init__(self, client: Redis, op_timeout_s: float = 0.5,
                 key_prefix: str = keys.PREFIX) -> None:
        self._prefix = key_prefix
        self._check = client.register_script(_CHECK)
        self._raise = client.register_script(_RAISE)
        self._charge = client.register_script(_CHARGE)
        self._pipeline = ScriptPipeline(client, op_timeout_s)

    def _marker(self, tenant_id: str, day: str) -> str:
        return f"{self._prefix}:{{{tenant_id}}}:rebuilt:{day}"

    async def rebuilt_at(self, tenant_id: str, day: str) -> tuple[float | None, float]:
        """(when the tenant's spend of the day was last rebuilt, None if never since Redis
        last lost its data; the server's clock now)."""
        reply = await self._pipeline.call(self._check, [self._marker(tenant_id, day)], [])
        was, now = (v.decode() if isinstance(v, bytes) else str(v) for v in reply)
        return (float(was) if was else None), float(now)

    async def raise_to(self, tenant_id: str, scope: str, day: str, month: str,
                       day_micro_usd: int, month_micro_usd: int, read_at: float) -> None:
        """Spend at least the audited amounts; marks the day rebuilt as of `read_at`."""
        script_keys = [keys.day_key(tenant_id, day, scope, self._prefix),
                       keys.month_key(tenant_id, month, scope, self._prefix),
                       self._marker(tenant_id, day)]
        await self._pipeline.call(self._raise, script_keys,
                                  [day_micro_usd, month_micro_usd, DAY_KEY_TTL_S,
                                   MONTH_KEY_TTL_S, repr(read_at)])

    async def charge(self, tenant_id: str, scopes: tuple[str, ...], day: str, month: str,
                     micro_usd: int, tokens: int) -> None:
        script_keys: list[str] = []
        for scope in scopes:
            script_keys += [keys.day_key(tenant_id, day, scope, self._prefix),
                            keys.month_key(tenant_id, month, scope, self._prefix)]
        await self._pipeline.call(self._charge, script_keys,
                                  [max(0, micro_usd), max(0, tokens), DAY_KEY_TTL_S,
                                   MONTH_KEY_TTL_S])
