"""MetricsPoller: scrapes every engine's /metrics concurrently on a fixed period and hands each
backend's BackendLoad (or a short error) to a LoadSink."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Protocol

import httpx

from gateway.scraper.engine_metrics import (
    EngineSample,
    MetricsParseError,
    derive_load,
    parse_metrics,
)
from gateway.scraper.page_fetch import PageError, fetch_page
from gateway.types import BackendLoad

logger = logging.getLogger(__name__)

# A metrics page is tens of KB; anything near this is not one, and must not fill memory.
MAX_BODY_BYTES = 8 * 1024 * 1024
# Parsing reads only the ~20 lines the name table wants, ~0.8 ms for a 50 KB vLLM page; a
# page far bigger than that (many LoRA adapters or label sets) is parsed off the event loop.
INLINE_PARSE_MAX_CHARS = 256 * 1024
_STALE_CONNECTION = (httpx.RemoteProtocolError, httpx.ReadError, httpx.WriteError)


class LoadSink(Protocol):
    def record_load(self, backend: str, load: BackendLoad) -> None: ...

    def record_scrape_error(self, backend: str, error: str) -> None: ...


class ScrapeError(Exception):
    """One target's scrape failed; the message is short enough to show an operator."""


@dataclass(frozen=True, slots=True)
class _Baseline:
    url: str
    sample: EngineSample
    at_s: float


class MetricsPoller:
    def __init__(
        self,
        client: httpx.AsyncClient,
        sink: LoadSink,
        *,
        interval_s: float = 1.0,
        timeout_s: float = 0.5,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if interval_s <= 0 or timeout_s <= 0:
            raise ValueError("interval_s and timeout_s must be > 0")
        self._client = client
        self._sink = sink
        self._interval_s = interval_s
        self._timeout_s = timeout_s
        self._clock = clock
        self._targets: dict[str, str] = {}
        self._baselines: dict[str, _Baseline] = {}
        self._stopping = asyncio.Event()

    def set_targets(self, targets: Mapping[str, str]) -> None:
        """Backend name → metrics URL. Unchanged targets keep their last sample, so their
        rates continue; a removed or re-pointed backend starts over."""
        self._targets = dict(targets)
        self._baselines = {
            name: baseline
            for name, baseline in self._baselines.items()
            if self._targets.get(name) == baseline.url
        }

    async def scrape_once(self) -> None:
        targets = list(self._targets.items())
        results = await asyncio.gather(
            *(self._scrape(name, url) for name, url in targets), return_exceptions=True
        )
        for (name, url), result in zip(targets, results, strict=True):
            if isinstance(result, Exception) and self._targets.get(name) == url:
                # A bug, not a bad target: logged in full, reported briefly, the others go on.
                logger.error("scraping %s at %s failed", name, url, exc_info=result)
                self._sink.record_scrape_error(name, f"internal error: {type(result).__name__}")

    def stop(self) -> None:
        """Let run() return after the scrape in progress (no cancellation mid-request)."""
        self._stopping.set()

    async def run(self) -> None:
        """Scrape every interval_s until stop() (or cancellation); the period includes the
        scrape itself."""
        loop = asyncio.get_running_loop()
        next_at = loop.time()
        while not self._stopping.is_set():
            await self.scrape_once()
            next_at += self._interval_s
            now = loop.time()
            if next_at < now:  # overran: skip the missed ticks instead of scraping in a burst
                next_at += math.ceil((now - next_at) / self._interval_s) * self._interval_s
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._stopping.wait(), next_at - now)

    async def _scrape(self, name: str, url: str) -> None:
        try:
            text = await self._fetch(url)
            scraped_at_s = self._clock()
            if len(text) <= INLINE_PARSE_MAX_CHARS:
                sample = parse_metrics(text)
            else:
                sample = await asyncio.to_thread(parse_metrics, text)
        except (ScrapeError, MetricsParseError) as exc:
            self._report_error(name, url, str(exc))
            return
        if self._targets.get(name) != url:
            return  # removed or re-pointed while this scrape was in flight
        baseline = self._baselines.get(name)
        load = derive_load(
            baseline.sample if baseline else None,
            sample,
            scraped_at_s,
            baseline.at_s if baseline else None,
        )
        self._baselines[name] = _Baseline(url, sample, scraped_at_s)
        self._sink.record_load(name, load)

    async def _fetch(self, url: str) -> str:
        # httpx's per-phase timeouts end a slow scrape cleanly. The cancelling backstop
        # around them only fires for what those cannot see (a drip-fed body, a transport
        # without sockets), at three times the timeout: cancelling httpcore mid-connect can
        # leave a socket to the garbage collector, so it must not be the usual way out.
        try:
            async with asyncio.timeout(3 * self._timeout_s):
                try:
                    return await self._get(url)
                except _STALE_CONNECTION:
                    # A pooled keep-alive connection the engine closed just as it was reused
                    # (uvicorn drops idle ones after 5 s): a GET is safe to send again, once.
                    return await self._get(url)
        except (TimeoutError, httpx.TimeoutException) as exc:
            raise ScrapeError(f"timed out after {self._timeout_s:g} s") from exc
        except httpx.HTTPError as exc:
            raise ScrapeError(f"{type(exc).__name__}: {exc}"[:200]) from exc

    async def _get(self, url: str) -> str:
        try:
            return await fetch_page(self._client, url, timeout_s=self._timeout_s,
                                    max_bytes=MAX_BODY_BYTES)
        except PageError as exc:
            raise ScrapeError(str(exc)) from exc

    def _report_error(self, name: str, url: str, error: str) -> None:
        if self._targets.get(name) != url:
            return
        # The baseline stays: the next good scrape still yields rates, over the longer interval.
        self._sink.record_scrape_error(name, error)
