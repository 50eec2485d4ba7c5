"""aiohttp connection pools, one per upstream base URL, and transport failures as DispatchErrors.

Shared by every provider so that each upstream (vLLM, OpenAI, Azure, Anthropic) gets the same
deliberate limits and timeouts, created on first use and closed by the lifespan.
"""

from __future__ import annotations

import asyncio

import aiohttp

from gateway.errors import UpstreamFailed, UpstreamTimeout
from gateway.providers.base import DispatchError
from gateway.types import Backend

USER_AGENT = "llm-routing-gateway/0.1"
TRANSPORT_ERRORS = (TimeoutError, aiohttp.ClientError, OSError)


class SessionPool:
    def __init__(
        self,
        *,
        connect_timeout_s: float = 5.0,
        read_timeout_s: float = 300.0,
        max_connections: int = 512,
    ) -> None:
        self._connect_timeout_s = connect_timeout_s
        self._read_timeout_s = read_timeout_s
        self._max_connections = max_connections
        self._sessions: dict[str, aiohttp.ClientSession] = {}

    def session(self, backend: Backend) -> aiohttp.ClientSession:
        session = self._sessions.get(backend.base_url)
        if session is None or session.closed:
            connector = aiohttp.TCPConnector(
                limit=min(backend.max_connections, self._max_connections),
                limit_per_host=0,
                ttl_dns_cache=300,
                keepalive_timeout=30,
            )
            timeout = aiohttp.ClientTimeout(
                total=None,  # streams may legitimately run for minutes
                connect=min(backend.connect_timeout_s, self._connect_timeout_s),
                sock_read=min(backend.read_timeout_s, self._read_timeout_s),
            )
            session = aiohttp.ClientSession(
                connector=connector,
                timeout=timeout,
                skip_auto_headers=("User-Agent",),
                raise_for_status=False,
            )
            self._sessions[backend.base_url] = session
        return session

    async def aclose(self) -> None:
        sessions, self._sessions = list(self._sessions.values()), {}
        await asyncio.gather(*(s.close() for s in sessions), return_exceptions=True)


def transport_error(
    backend: Backend, exc: BaseException, *, mid_stream: bool = False
) -> DispatchError:
    what = "stream broke" if mid_stream else "is unreachable"
    if isinstance(exc, TimeoutError):
        err: UpstreamFailed = UpstreamTimeout(f"backend {backend.name} timed out")
    else:
        err = UpstreamFailed(f"backend {backend.name} {what} ({type(exc).__name__})")
    return DispatchError(err, retryable=not mid_stream)
