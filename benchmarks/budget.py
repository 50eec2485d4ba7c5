"""What a budget check costs on the request path: admit + settle, memory store vs. Redis.

    python benchmarks/budget.py [--redis-url redis://127.0.0.1:56379/0] [--calls 5000]
                                [--concurrency 32] [--loop uvloop|asyncio]

Each pair is one admit (reserve the worst case) and one settle, with budgets and rpm/tpm/
concurrency limits on every scope, set high enough that nothing is refused: the cost of the
check, not of a refusal. 1 scope is the tenant; 3 scopes add an API key and a tag. Latency is
timed per pair, sequentially, after a warm-up; throughput runs `--concurrency` closed-loop
workers. Redis is whatever --redis-url points at (loopback for the figures in RESULTS.md);
the benchmark writes only keys of its own tenant and deletes them afterwards.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import statistics
import time
import uuid
from collections.abc import Awaitable, Callable, Coroutine
from pathlib import Path
from typing import Any

from machine import describe_machine
from tables import render_text

from gateway.budget.leasing import LeasingBudgetStore
from gateway.budget.limits import AdmitRequest, BudgetLimits, RateLimits, ScopeLimits, periods
from gateway.budget.memory_store import MemoryBudgetStore
from gateway.budget.redis_keys import PREFIX
from gateway.budget.redis_store import RedisBudgetStore, make_client
from gateway.budget.store import BudgetStore

HIGH = 10**12  # limits that are checked but never reached
WARM_UP_PAIRS = 500
Pair = Callable[[], Awaitable[None]]
RUN = uuid.uuid4().hex[:12]  # names this run's tenants, so cleanup touches nothing else


def scopes(count: int) -> tuple[ScopeLimits, ...]:
    budget = BudgetLimits(HIGH, HIGH, HIGH, HIGH)
    rate = RateLimits(rpm=HIGH, tpm=HIGH, concurrent=1_000_000)
    names = ("tenant", "key:k-bench", "tag:batch")[:count]
    return tuple(ScopeLimits(name, budget, rate) for name in names)


class Pairs:
    """Makes admit+settle pairs with fresh request ids against one store."""

    def __init__(self, store: BudgetStore, tenant: str, scope_count: int) -> None:
        self._store, self._tenant = store, tenant
        self._scopes = scopes(scope_count)
        self._day, self._month = periods(time.time())
        self._next = 0

    async def one(self) -> None:
        self._next += 1
        request = AdmitRequest(f"b{self._next}", self._tenant, self._scopes, 1500, 700,
                               self._day, self._month)
        admission = await self._store.admit(request)
        if admission.reservation is None:
            raise RuntimeError(f"benchmark request refused: {admission.reason}")
        await self._store.settle(admission.reservation, 1200, 650)


async def latency_us(pair: Pair, calls: int) -> list[float]:
    for _ in range(WARM_UP_PAIRS):
        await pair()
    out = []
    gc.disable()
    try:
        for _ in range(calls):
            start = time.perf_counter_ns()
            await pair()
            out.append((time.perf_counter_ns() - start) / 1000)
    finally:
        gc.enable()
    return sorted(out)


async def pairs_per_s(pair: Pair, calls: int, concurrency: int) -> float:
    remaining = calls

    async def worker() -> None:
        nonlocal remaining
        while remaining > 0:
            remaining -= 1
            await pair()

    start = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(concurrency)))
    return calls / (time.perf_counter() - start)


async def measure(
    label: str, make: Callable[[], BudgetStore], args: argparse.Namespace
) -> list[list[str]]:
    rows = []
    for count in (1, 3):
        store = make()
        pairs = Pairs(store, f"bench-{RUN}-{label}-{count}", count)
        rows.append(await row(f"{label}, {count} scope{'s' if count > 1 else ''}",
                              pairs.one, args, store))
        await store.close()
    return rows


def _shared_calls(store: BudgetStore | None) -> int | None:
    """Calls that reached Redis: two per pair without leases, per lease with them."""
    if isinstance(store, LeasingBudgetStore):
        return store.stats.leases + store.stats.settles
    return None


async def row(
    label: str, pair: Pair, args: argparse.Namespace, store: BudgetStore | None = None
) -> list[str]:
    before = _shared_calls(store)
    samples = await latency_us(pair, args.calls)
    throughput = await pairs_per_s(pair, args.calls, args.concurrency)
    if isinstance(store, LeasingBudgetStore):
        await store.flush(everything=True)
    after = _shared_calls(store)
    if before is not None and after is not None:
        calls = f"{(after - before) / (2 * args.calls + WARM_UP_PAIRS):.3f}"
    else:  # one admit and one settle script per pair, or none at all in the memory store
        calls = "0" if label.startswith("memory") else "2"
    return [label, f"{statistics.median(samples):.0f}",
            f"{samples[int(len(samples) * 0.99)]:.0f}", f"{samples[-1]:.0f}",
            f"{throughput:,.0f}", calls]


async def round_trip_floor(url: str, args: argparse.Namespace) -> list[str]:
    """Two PINGs per pair: what two round trips cost before any script runs."""
    client = make_client(url, timeout_s=5.0)

    async def two_pings() -> None:
        await client.ping()
        await client.ping()

    out = await row("redis, 2 PINGs (floor)", two_pings, args)
    await client.aclose()
    return out


async def delete_bench_keys(url: str) -> None:
    client = make_client(url, timeout_s=5.0)
    stale = [key async for key in client.scan_iter(match=f"{PREFIX}:{{bench-{RUN}-*}}:*")]
    for start in range(0, len(stale), 500):
        await client.delete(*stale[start:start + 500])
    await client.aclose()


async def run(args: argparse.Namespace) -> None:
    rows = await measure("memory", MemoryBudgetStore, args)
    if args.redis_url:
        url = args.redis_url

        def make_redis() -> BudgetStore:
            # A loaded machine must slow the figures down, not abort the run.
            return RedisBudgetStore.from_url(url, timeout_s=5.0)

        def make_leased() -> BudgetStore:
            return LeasingBudgetStore(RedisBudgetStore.from_url(url, timeout_s=5.0))

        try:
            rows.append(await round_trip_floor(url, args))
            rows += await measure("redis", make_redis, args)
            rows += await measure("redis, leased", make_leased, args)
        finally:
            await delete_bench_keys(url)
    print(render_text(
        ["store, scopes", "p50 µs", "p99 µs", "max µs", f"pairs/s @{args.concurrency}",
         "Redis calls per pair"], rows))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--redis-url", default=None, help="omit to measure the memory store only")
    parser.add_argument("--calls", type=int, default=5000, help="pairs per measurement")
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--loop", choices=["uvloop", "asyncio"], default="uvloop",
                        help="the gateway serves on uvloop")
    args = parser.parse_args()
    print(f"admit + settle, {args.calls} pairs per row, loop={args.loop}")
    machine = describe_machine(Path(__file__).resolve().parent.parent)
    print(f"{machine.summary()}, load average {machine.load_avg_1m:.1f}\n")
    coroutine: Coroutine[Any, Any, None] = run(args)
    if args.loop == "uvloop":
        import uvloop

        with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
            runner.run(coroutine)
    else:
        asyncio.run(coroutine)


if __name__ == "__main__":
    main()
