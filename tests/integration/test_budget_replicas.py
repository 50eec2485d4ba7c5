"""One budget, three replicas: real `gateway serve` processes sharing one Redis and one
database in front of a simulated vLLM (its own process), driven by the official openai SDK.

The acceptance tests of budgets across replicas: concurrent clients on every replica cannot
overspend the tenant's budget by more than one worst-case request per replica, and a replica
killed with SIGKILL while holding reservations leaves nothing behind once the reservation TTL
has passed. Needs GATEWAY_TEST_REDIS_URL; uses a fresh database on GATEWAY_TEST_POSTGRES_URL's
server when set (else one SQLite file shared by the replicas).
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest
from sqlalchemy import text
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import create_async_engine

from gateway.budget.redis_keys import PREFIX
from gateway.budget.redis_store import make_client
from gateway.db.engine import create_engine
from gateway.db.migrate import upgrade
from gateway.tenancy.repository import TenantRepository
from tests.support.servers import free_port

pytestmark = pytest.mark.redis

REPO = Path(__file__).resolve().parents[2]
ADMIN_KEY = "replicas-admin-key"
ADMIN = {"authorization": f"Bearer {ADMIN_KEY}"}
REPLICAS = 3
CLIENTS = 64
START_TIMEOUT_S = 40.0  # three gateways booting at once on a small, busy CI machine
# $1000 per million tokens = 1000 micro-USD a token, so a handful of requests is real money.
PRICE_MICRO_PER_TOKEN = 1000
SPEND_BUDGET_USD = Decimal("4")  # ~130 requests of ~31 tokens: a few per client
SPEND_MAX_TOKENS = 16
# The clients stop once no request was admitted for this long and nothing is in flight.
QUIET_S = 1.0
RETRY_PAUSE_S = 0.05
# The crash test: HELD requests of up to HELD_MAX_TOKENS each fill the crash tenant's budget,
# so one more is refused until their reservations expire. A worst case of ~0.215 USD each:
# 4 fit in 1.00, 5 do not (true for any prompt estimate of 1 to 50 tokens).
HELD = 4
HELD_MAX_TOKENS = 200
CRASH_BUDGET_USD = Decimal("1.00")
# The killed replica's reservations live this long. The other replicas keep a longer TTL:
# a loaded machine must never expire a reservation of the spend test while it is in flight
# (the TTL is the admitting replica's, so the crash test is not weakened by it).
CRASH_TTL_S = 3.0
CLUSTER_TTL_S = 30.0
HELLO = [{"role": "user", "content": "Spend the shared budget."}]


def micro(usd: str | Decimal) -> int:
    return int(Decimal(usd) * 1_000_000)


@dataclass
class Replica:
    """One `gateway serve` process in its own session: killing the group kills the replica
    and its token-counting worker processes together, as a crashed container would."""

    port: int
    proc: subprocess.Popen[bytes]
    log_path: Path

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def client(self, key: str, timeout_s: float = 10.0) -> openai.AsyncOpenAI:
        return openai.AsyncOpenAI(base_url=f"{self.url}/v1", api_key=key, max_retries=0,
                                  timeout=timeout_s)

    def wait_ready(self, deadline_s: float) -> None:
        while time.monotonic() < deadline_s:
            if self.proc.poll() is not None:
                raise RuntimeError(f"replica on :{self.port} exited:\n{self.log_tail()}")
            try:
                if httpx.get(f"{self.url}/health", timeout=1).status_code == 200:
                    return
            except httpx.HTTPError:
                pass  # not listening yet
            time.sleep(0.1)
        raise RuntimeError(f"replica on :{self.port} did not start:\n{self.log_tail()}")

    def kill(self) -> None:
        """SIGKILL to the whole group: no shutdown hook, no settle, nothing flushed."""
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.proc.wait(timeout=10)

    def log_tail(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-3000:]
        except FileNotFoundError:
            return ""


@dataclass
class Cluster:
    sim_url: str
    replicas: list[Replica]
    spend_tenant: str
    crash_tenant: str
    keys: dict[str, str]  # tenant name → API key
    start_replica: Callable[[float], Replica]  # reservation TTL → a started extra replica


def spawn(argv: list[str], env: dict[str, str], log_path: Path) -> subprocess.Popen[bytes]:
    with log_path.open("wb") as log:
        return subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log,
                                stderr=subprocess.STDOUT, env=env, cwd=REPO,
                                start_new_session=True)


def stop(proc: subprocess.Popen[bytes]) -> None:
    # SIGKILL at once: these processes hold nothing worth a graceful shutdown, and a slow
    # teardown would only slow the suite.
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    proc.wait(timeout=10)


def policy_yaml(sim_port: int, spend: str, crash: str) -> str:
    price = PRICE_MICRO_PER_TOKEN  # micro-USD a token == USD a million tokens
    return (
        "version: 1\nbackends:\n  - name: sim\n    provider: vllm\n"
        f"    base_url: http://127.0.0.1:{sim_port}/v1\n    model: sim-model\n"
        "    context_window: 2048\n    quality_tier: 2\n"
        f"    price_per_mtok_usd: {{input: {price}, output: {price}}}\n"
        "models:\n  auto: [sim]\n"
        f"tenants:\n  {spend}:\n    budget: {{daily_usd: {SPEND_BUDGET_USD}}}\n"
        f"  {crash}:\n    budget: {{daily_usd: {CRASH_BUDGET_USD}}}\n"
    )


async def create_database(base_url: str, name: str) -> str:
    admin = create_async_engine(base_url, isolation_level="AUTOCOMMIT")
    try:
        async with admin.connect() as conn:
            await conn.execute(text(f'CREATE DATABASE "{name}"'))
    finally:
        await admin.dispose()
    return make_url(base_url).set(database=name).render_as_string(hide_password=False)


async def drop_database(base_url: str, name: str) -> None:
    admin = create_async_engine(base_url, isolation_level="AUTOCOMMIT")
    try:
        async with admin.connect() as conn:
            await conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
    finally:
        await admin.dispose()


async def prepare(db_url: str, tenants: tuple[str, ...]) -> tuple[dict[str, str], list[str]]:
    """Migrate (as `gateway migrate` would: replicas never migrate Postgres themselves) and
    create a key per tenant. Returns the keys and the tenants' ids (the Redis hash tags)."""
    engine = create_engine(db_url)
    try:
        await upgrade(engine)
        repo = TenantRepository(engine)
        keys, ids = {}, []
        for name in tenants:
            row = await repo.ensure_tenant(name)
            keys[name], _ = await repo.create_key(row)
            ids.append(row.id)
        return keys, ids
    finally:
        await engine.dispose()


async def forget_tenants(redis_url: str, tenant_ids: list[str]) -> None:
    client = make_client(redis_url, timeout_s=5.0)
    try:
        for tenant_id in tenant_ids:
            stale = [k async for k in client.scan_iter(match=f"{PREFIX}:{{{tenant_id}}}:*")]
            if stale:
                await client.delete(*stale)
    finally:
        await client.aclose()


@pytest.fixture(scope="module")
def database(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A database of this module's own: other suites reset the shared test database's schema
    while they run, which must not pull the tables out from under live replicas."""
    base = os.environ.get("GATEWAY_TEST_POSTGRES_URL")
    if not base:
        yield f"sqlite+aiosqlite:///{tmp_path_factory.mktemp('replicas-db')}/gw.db"
        return
    name = f"gw_replicas_{uuid.uuid4().hex[:12]}"
    url = asyncio.run(create_database(base, name))
    try:
        yield url
    finally:
        asyncio.run(drop_database(base, name))


@pytest.fixture(scope="module")
def cluster(
    redis_url: str, database: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Cluster]:
    tmp = tmp_path_factory.mktemp("replicas")
    run = uuid.uuid4().hex[:8]
    spend, crash = f"spend-{run}", f"crash-{run}"
    keys, tenant_ids = asyncio.run(prepare(database, (spend, crash)))
    sim_port = free_port()
    policy_path = tmp / "policy.yaml"
    policy_path.write_text(policy_yaml(sim_port, spend, crash))
    base_env = {k: v for k, v in os.environ.items() if not k.startswith("GATEWAY_")}
    base_env.update(NO_PROXY="127.0.0.1,localhost", no_proxy="127.0.0.1,localhost")
    procs: list[subprocess.Popen[bytes]] = []

    def start_replica(ttl_s: float) -> Replica:
        port = free_port()
        env = {
            **base_env,
            "GATEWAY_DATABASE_URL": database,
            "GATEWAY_REDIS_URL": redis_url,
            # Generous: a busy machine must not turn a slow Redis reply into an unmetered
            # (fail-open) request, which would let spend past the budget.
            "GATEWAY_REDIS_TIMEOUT_S": "2.0",
            "GATEWAY_BUDGET_RESERVATION_TTL_S": str(ttl_s),
            "GATEWAY_ADMIN_KEY": ADMIN_KEY,
            "GATEWAY_START_SIMULATORS": "false",
            "GATEWAY_LOG_LEVEL": "warning",
            "GATEWAY_AUDIT_LOG_PATH": str(tmp / f"audit-{port}.jsonl"),
            "GATEWAY_UPSTREAM_READ_TIMEOUT_S": "60",
        }
        argv = [sys.executable, "-m", "gateway", "serve", "--host", "127.0.0.1",
                "--port", str(port), "--policy", str(policy_path), "--no-sim"]
        proc = spawn(argv, env, tmp / f"gateway-{port}.log")
        procs.append(proc)
        return Replica(port, proc, tmp / f"gateway-{port}.log")

    try:
        # Fast engine: ~0.1 s per request even with a full batch; a batch as wide as the
        # client count so that no request waits in the sim's queue.
        procs.append(spawn(
            [sys.executable, "-m", "gateway", "sim", "--host", "127.0.0.1", "--port",
             str(sim_port), "--model", "sim-model", "--time-scale", "0.2",
             "--max-num-seqs", str(CLIENTS)],
            base_env, tmp / "sim.log",
        ))
        replicas = [start_replica(CLUSTER_TTL_S) for _ in range(REPLICAS)]  # boot in parallel
        deadline = time.monotonic() + START_TIMEOUT_S
        sim_health = f"http://127.0.0.1:{sim_port}/health"
        while True:
            try:
                if httpx.get(sim_health, timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                if time.monotonic() > deadline:
                    raise RuntimeError("the simulated vLLM did not start") from None
            time.sleep(0.1)
        for replica in replicas:
            replica.wait_ready(deadline)
        yield Cluster(f"http://127.0.0.1:{sim_port}", replicas, spend, crash, keys,
                      lambda ttl_s: _started(start_replica(ttl_s)))
    finally:
        for proc in procs:
            stop(proc)
        asyncio.run(forget_tenants(redis_url, tenant_ids))


def _started(replica: Replica) -> Replica:
    replica.wait_ready(time.monotonic() + START_TIMEOUT_S)
    return replica


async def tenant_usage(replica: Replica, tenant: str) -> dict[str, Any]:
    """The tenant scope of GET /admin/tenants/{name}/usage, read through one replica."""
    async with httpx.AsyncClient(timeout=5) as http:
        resp = await http.get(f"{replica.url}/admin/tenants/{tenant}/usage", headers=ADMIN)
    assert resp.status_code == 200, resp.text
    scope: dict[str, Any] = next(s for s in resp.json()["scopes"] if s["scope"] == "tenant")
    return scope


@dataclass
class SpendRun:
    """What the clients saw; shared by the client tasks (one event loop: no locks)."""

    admitted: list[tuple[int, int, int]] = field(default_factory=list)  # replica, cost, prompt
    refusals: list[tuple[int, str | None, str | None, str | None]] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    last_admitted_s: float = field(default_factory=time.monotonic)
    stopped: bool = False


async def spend(client: openai.AsyncOpenAI, replica: int, run: SpendRun) -> None:
    """Send requests until told to stop; a refusal pauses briefly and tries again, because a
    refusal while others are in flight is not yet the hard stop (they may settle for less)."""
    while not run.stopped:
        try:
            raw = await client.chat.completions.with_raw_response.create(
                model="auto", messages=HELLO, max_tokens=SPEND_MAX_TOKENS  # type: ignore[arg-type]
            )
        except openai.RateLimitError as exc:
            run.refusals.append((exc.status_code, exc.code, exc.type,
                                 exc.response.headers.get("x-should-retry")))
            await asyncio.sleep(RETRY_PAUSE_S)
            continue
        except openai.APIError as exc:  # anything but a budget refusal is a failure
            run.errors.append(f"replica {replica}: {exc!r}")
            await asyncio.sleep(RETRY_PAUSE_S)
            continue
        completion = raw.parse()
        assert completion.usage is not None
        run.admitted.append(
            (replica, micro(raw.headers["x-gateway-cost-usd"]), completion.usage.prompt_tokens)
        )
        run.last_admitted_s = time.monotonic()


async def watch(cluster: Cluster, run: SpendRun) -> None:
    """Stop the clients at the hard stop: refusals only, for QUIET_S, with nothing in flight
    (so no settle is still to come that could make room again)."""
    while True:
        await asyncio.sleep(0.2)
        if not run.refusals or time.monotonic() - run.last_admitted_s < QUIET_S:
            continue
        if (await tenant_usage(cluster.replicas[0], cluster.spend_tenant))["in_flight"] == 0:
            run.stopped = True
            return


async def test_replicas_share_one_budget_and_stop_together(cluster: Cluster) -> None:
    started = time.monotonic()
    tenant = cluster.spend_tenant
    clients = [r.client(cluster.keys[tenant]) for r in cluster.replicas]
    run = SpendRun()
    try:
        async with asyncio.timeout(25):
            await asyncio.gather(
                watch(cluster, run),
                *(spend(clients[i % REPLICAS], i % REPLICAS, run) for i in range(CLIENTS)),
            )
        assert not run.errors, run.errors[:5]
        budget = micro(SPEND_BUDGET_USD)
        # The dearest admitted request had this worst case (its actual prompt + every output
        # token allowed): what one replica may overshoot by at most.
        worst = max((prompt + SPEND_MAX_TOKENS) * PRICE_MICRO_PER_TOKEN
                    for _, _, prompt in run.admitted)
        assert len(run.admitted) >= budget // worst - REPLICAS, "the budget was not spent"
        assert {replica for replica, _, _ in run.admitted} == set(range(REPLICAS))

        # Every replica reads the same store: the same spend, nothing held any more.
        views = [await tenant_usage(r, tenant) for r in cluster.replicas]
        assert len({v["spent_today_usd"] for v in views}) == 1, views
        usage = views[0]
        spent = micro(usage["spent_today_usd"])
        assert usage["reserved_usd"] == "0.000000" and usage["in_flight"] == 0
        # Each admitted request was settled once, at the cost its response reported.
        assert spent == sum(cost for _, cost, _ in run.admitted)
        assert spent <= budget + REPLICAS * worst, (spent, budget, worst)
        # The stop was a real one: what is left cannot pay for another such request.
        assert budget - spent < 2 * worst, (spent, budget, worst)

        # Refusals are budget refusals, final for the period: 429 insufficient_quota, and the
        # SDK is told not to retry them.
        assert run.refusals
        assert all(r == (429, "insufficient_quota", "insufficient_quota", "false")
                   for r in run.refusals), set(run.refusals)

        # After the stop nothing is admitted, on any replica, however many ask at once.
        after = SpendRun()
        await asyncio.gather(*(
            once(clients[i % REPLICAS], i % REPLICAS, after) for i in range(CLIENTS)
        ))
        assert not after.admitted and not after.errors, (after.admitted, after.errors[:5])
        assert len(after.refusals) == CLIENTS
        assert all(r[:3] == (429, "insufficient_quota", "insufficient_quota")
                   for r in after.refusals)
        assert micro((await tenant_usage(cluster.replicas[1], tenant))["spent_today_usd"]) \
            == spent
    finally:
        for client in clients:
            await client.close()
    assert time.monotonic() - started < 30


async def once(client: openai.AsyncOpenAI, replica: int, run: SpendRun) -> None:
    try:
        raw = await client.chat.completions.with_raw_response.create(
            model="auto", messages=HELLO, max_tokens=SPEND_MAX_TOKENS  # type: ignore[arg-type]
        )
    except openai.RateLimitError as exc:
        run.refusals.append((exc.status_code, exc.code, exc.type,
                             exc.response.headers.get("x-should-retry")))
        return
    except openai.APIError as exc:
        run.errors.append(f"replica {replica}: {exc!r}")
        return
    run.admitted.append((replica, micro(raw.headers["x-gateway-cost-usd"]), 0))


async def held_stream(client: openai.AsyncOpenAI) -> None:
    """A stream the sim holds back: it is admitted and reserved, then waits for headers."""
    stream = await client.chat.completions.create(
        model="auto", messages=HELLO, max_tokens=HELD_MAX_TOKENS, stream=True  # type: ignore[arg-type]
    )
    async for _ in stream:
        pass


async def wait_for(
    replica: Replica, tenant: str, done: Callable[[dict[str, Any]], bool], timeout_s: float
) -> dict[str, Any]:
    deadline = time.monotonic() + timeout_s
    while True:
        usage = await tenant_usage(replica, tenant)
        if done(usage):
            return usage
        assert time.monotonic() < deadline, f"usage did not change as expected: {usage}"
        await asyncio.sleep(0.1)


async def test_a_killed_replicas_reservations_expire_and_the_budget_is_whole_again(
    cluster: Cluster,
) -> None:
    started = time.monotonic()
    tenant, key = cluster.crash_tenant, cluster.keys[cluster.crash_tenant]
    doomed = await asyncio.to_thread(cluster.start_replica, CRASH_TTL_S)  # waits for /health
    survivor = cluster.replicas[0]
    doomed_client, survivor_client = doomed.client(key, 30), survivor.client(key)
    # The sim sits on the next HELD requests for longer than this test: in flight until killed.
    async with httpx.AsyncClient(timeout=5) as http:
        faults = await http.post(f"{cluster.sim_url}/sim/faults",
                                 json={"delay_s": 60, "count": HELD})
        faults.raise_for_status()
    held = [asyncio.create_task(held_stream(doomed_client)) for _ in range(HELD)]
    try:
        async with asyncio.timeout(25):
            await wait_for(survivor, tenant, lambda u: u["in_flight"] == HELD, 10)
            reserved_at = time.monotonic()
            # The reservations of one replica count on every other: the budget is held.
            with pytest.raises(openai.RateLimitError) as refused:
                await survivor_client.chat.completions.create(
                    model="auto", messages=HELLO, max_tokens=HELD_MAX_TOKENS  # type: ignore[arg-type]
                )
            assert refused.value.code == "insufficient_quota"

            doomed.kill()
            outcomes = await asyncio.gather(*held, return_exceptions=True)
            assert all(isinstance(o, openai.APIConnectionError) for o in outcomes), outcomes
            # Nobody settles for a dead replica: its holds are still there...
            usage = await tenant_usage(survivor, tenant)
            assert usage["in_flight"] == HELD and micro(usage["reserved_usd"]) > 0, usage
            # ...until their TTL passes, when any replica's next look drops them.
            usage = await wait_for(
                survivor, tenant, lambda u: u["in_flight"] == 0, CRASH_TTL_S + 5
            )
            released_after_s = time.monotonic() - reserved_at
            assert usage["reserved_usd"] == "0.000000" and usage["reserved_tokens"] == 0
            assert micro(usage["spent_today_usd"]) == 0  # killed requests never settled
            assert released_after_s >= CRASH_TTL_S - 1.0, released_after_s

            # The budget is whole again: the request refused above is served now.
            raw = await survivor_client.chat.completions.with_raw_response.create(
                model="auto", messages=HELLO, max_tokens=HELD_MAX_TOKENS  # type: ignore[arg-type]
            )
            assert micro(raw.headers["x-gateway-cost-usd"]) > 0
    finally:
        for task in held:
            task.cancel()
        await asyncio.gather(*held, return_exceptions=True)
        doomed.kill()
        async with httpx.AsyncClient(timeout=5) as http:
            await http.delete(f"{cluster.sim_url}/sim/faults")
        await doomed_client.close()
        await survivor_client.close()
    assert time.monotonic() - started < 30
