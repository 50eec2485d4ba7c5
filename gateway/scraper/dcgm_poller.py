"""Scrapes each deployment's DCGM exporter on a fixed period, beside the engines' metrics, and
hands every sample to a GpuSink (which keeps per-minute rollups for the reports)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Mapping
from typing import Protocol

import httpx

from gateway.scraper.dcgm import DcgmParseError, GpuSample, parse_dcgm
from gateway.scraper.page_fetch import PageError, fetch_page

logger = logging.getLogger(__name__)
MAX_BODY_BYTES = 4 * 1024 * 1024  # a DCGM page is a few KB per GPU


class GpuSink(Protocol):
    def record_gpu(self, backend: str, sample: GpuSample, at_unix_s: float) -> None: ...


class DcgmPoller:
    def __init__(self, client: httpx.AsyncClient, sink: GpuSink, *, interval_s: float = 10.0,
                 timeout_s: float = 2.0) -> None:
        if interval_s <= 0 or timeout_s <= 0:
            raise ValueError("interval_s and timeout_s must be > 0")
        self._client = client
        self._sink = sink
        self._interval_s = interval_s
        self._timeout_s = timeout_s
        self._targets: dict[str, str] = {}
        self._stopping = asyncio.Event()
        self.errors: dict[str, str] = {}  # backend → the last scrape's problem, for operators

    def set_targets(self, targets: Mapping[str, str]) -> None:
        self._targets = dict(targets)
        self.errors = {k: v for k, v in self.errors.items() if k in self._targets}

    async def scrape_once(self) -> None:
        targets = list(self._targets.items())
        await asyncio.gather(*(self._scrape(name, url) for name, url in targets))

    def stop(self) -> None:
        self._stopping.set()

    async def run(self) -> None:
        while not self._stopping.is_set():
            started = time.monotonic()
            await self.scrape_once()
            left = max(0.0, self._interval_s - (time.monotonic() - started))
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._stopping.wait(), left)

    async def _scrape(self, name: str, url: str) -> None:
        try:
            page = await fetch_page(self._client, url, timeout_s=self._timeout_s,
                                    max_bytes=MAX_BODY_BYTES)
            sample = parse_dcgm(page)
        except (httpx.HTTPError, PageError, DcgmParseError) as exc:
            # GPU telemetry is optional: a report without it, never a failed gateway.
            problem = f"{type(exc).__name__}: {exc}"[:200]
            if self.errors.get(name) != problem:
                logger.warning("DCGM scrape of %s at %s failed: %s", name, url, problem)
            self.errors[name] = problem
            return
        self.errors.pop(name, None)
        if self._targets.get(name) == url:
            self._sink.record_gpu(name, sample, time.time())
