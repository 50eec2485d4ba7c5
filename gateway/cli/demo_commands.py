"""`gateway demo traffic`: send the demo's mixed workload through a running gateway, with a
progress bar, then a burst that spills over, and print where each kind of request went."""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING

import click
import orjson

from gateway.cli.database import print_table
from gateway.cli.demo_workload import DemoRequest, burst, workload

if TYPE_CHECKING:
    import httpx


@dataclass(frozen=True, slots=True)
class Outcome:
    kind: str
    status: int
    backend: str
    rule: str
    spilled: bool
    seconds: float
    cost_usd: float


@click.group()
def demo() -> None:
    """Drive the demo gateway (`gateway serve` with no configuration)."""


@demo.command("traffic")
@click.option("--url", default="http://127.0.0.1:8080", show_default=True,
              help="the gateway's address")
@click.option("--key", envvar="GATEWAY_API_KEY", default=None,
              help="a tenant API key (default: $GATEWAY_API_KEY, else a new key of tenant "
              "'demo' made in the gateway's database)")
@click.option("--requests", "count", default=240, show_default=True, type=click.IntRange(1))
@click.option("--concurrency", default=8, show_default=True, type=click.IntRange(1, 256))
@click.option("--burst", "burst_size", default=96, show_default=True,
              type=click.IntRange(0, 1000),
              help="requests sent at once at the end, to show spill-over (0: none)")
@click.option("--seed", default=0, show_default=True, type=int)
def traffic(url: str, key: str | None, count: int, concurrency: int, burst_size: int,
            seed: int) -> None:
    """Send a realistic mixed workload (small talk, questions, hard problems, personal data,
    secrets, long documents, streams), then a burst, and summarise the routes taken."""
    key = key or _demo_key()
    plan = workload(count, seed)
    outcomes = asyncio.run(_run(url.rstrip("/"), key, plan, concurrency, burst(burst_size)))
    _summary(outcomes)


def _demo_key() -> str:
    from gateway.cli.database import Database, run_with_database

    async def make(db: Database) -> str:
        tenant = await db.tenants.get_tenant("demo")
        if tenant is None:
            raise click.ClickException(
                "no tenant 'demo' in the database (GATEWAY_DATABASE_URL): start the demo "
                "with `gateway serve` in this directory first, or pass --key")
        key, _ = await db.tenants.create_key(tenant, "demo traffic")
        return key

    return run_with_database(make)


async def _run(url: str, key: str, plan: list[DemoRequest], concurrency: int,
               spike: list[DemoRequest]) -> list[Outcome]:
    import httpx

    headers = {"authorization": f"Bearer {key}"}
    limits = httpx.Limits(max_connections=max(concurrency, len(spike)) + 4)
    timeout = httpx.Timeout(120.0, connect=5.0)
    async with httpx.AsyncClient(base_url=url, headers=headers, limits=limits,
                                 timeout=timeout) as client:
        await _check(client, url)
        outcomes: list[Outcome] = []
        with click.progressbar(length=len(plan) + len(spike), label="sending requests",
                               file=click.get_text_stream("stderr")) as bar:
            queue: asyncio.Queue[DemoRequest] = asyncio.Queue()
            for item in plan:
                queue.put_nowait(item)

            async def worker() -> None:
                while not queue.empty():
                    outcomes.append(await _send(client, queue.get_nowait()))
                    bar.update(1)

            await asyncio.gather(*(worker() for _ in range(concurrency)))
            if spike:
                async def one(item: DemoRequest) -> None:
                    outcomes.append(await _send(client, item))
                    bar.update(1)

                await asyncio.gather(*(one(item) for item in spike))
    return outcomes


async def _check(client: httpx.AsyncClient, url: str) -> None:
    import httpx

    try:
        reply = await client.get("/v1/models")
    except httpx.HTTPError as exc:
        raise click.ClickException(
            f"no gateway answers at {url} ({type(exc).__name__}): start it with "
            "`gateway serve`, or pass --url") from None
    if reply.status_code == 401:
        raise click.ClickException("the gateway refused the API key (--key / $GATEWAY_API_KEY)")


async def _send(client: httpx.AsyncClient, item: DemoRequest) -> Outcome:
    import httpx

    started = time.perf_counter()
    body = orjson.dumps(item.body())
    headers = {"content-type": "application/json"}
    try:
        if item.stream:
            async with client.stream("POST", "/v1/chat/completions", content=body,
                                     headers=headers) as reply:
                async for _ in reply.aiter_bytes():
                    pass
        else:
            reply = await client.post("/v1/chat/completions", content=body, headers=headers)
    except httpx.HTTPError:
        return Outcome(item.kind, 0, "-", "-", False, time.perf_counter() - started, 0.0)
    got = reply.headers
    return Outcome(item.kind, reply.status_code, got.get("x-gateway-backend", "-"),
                   got.get("x-gateway-rule", "-"), got.get("x-gateway-spill-over") == "true",
                   time.perf_counter() - started, float(got.get("x-gateway-cost-usd", 0)))


def _summary(outcomes: list[Outcome]) -> None:
    ok = [o for o in outcomes if o.status == 200]
    click.echo(f"\n{len(ok)} of {len(outcomes)} answered; "
               f"{sum(o.spilled for o in outcomes)} spilled over to an API; "
               f"errors: {dict(Counter(o.status for o in outcomes if o.status != 200)) or 0}")
    routes = Counter((o.kind, o.rule, o.backend) for o in ok)
    rows = [(kind, rule, backend, str(n)) for (kind, rule, backend), n in sorted(routes.items())]
    print_table(("KIND", "RULE", "BACKEND", "REQUESTS"), rows)
    click.echo("\nNext: `gateway report cost --since 1h`, `gateway report savings --since 1h`, "
               "or the report page (`gateway serve` printed its address).")
