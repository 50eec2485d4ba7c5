"""Whether the budget store's Redis answers, for readiness: one PING on the shared client."""

from __future__ import annotations

from redis.asyncio import Redis


class RedisProbe:
    def __init__(self, client: Redis) -> None:
        self._client = client

    async def ping(self) -> None:
        """Returns when Redis answered; raises whatever the client raised when not."""
        await self._client.ping()
