"""Starts, checks and stops the processes a benchmark drives: the mock upstream and the gateway.

Every process gets its own session so that stopping it also stops its children (uvicorn workers).
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType

BENCH_DIR = Path(__file__).resolve().parent
LOOPBACK = "127.0.0.1"
STOP_GRACE_S = 10.0
READY_TIMEOUT_S = 60.0
CLI_TIMEOUT_S = 120.0
ADMIN_KEY = "overhead-benchmark-admin"
MOCK_PORT = "@MOCK_PORT@"  # in a policy template: the mock upstream's port
LOG_TAIL_CHARS = 3000

# Loopback only: never let an inherited proxy setting send benchmark traffic anywhere else.
_NO_PROXY = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def free_port() -> int:
    # The port is released before the server binds it; on an idle loopback that race is harmless.
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((LOOPBACK, 0))
        return int(sock.getsockname()[1])


@dataclass(frozen=True, slots=True)
class HttpReply:
    status: int
    headers: dict[str, str]
    body: bytes


def http_call(
    port: int, path: str, body: bytes | None = None, headers: dict[str, str] | None = None
) -> HttpReply:
    """One request to 127.0.0.1:port; HTTP error statuses are returned, not raised."""
    request = urllib.request.Request(
        f"http://{LOOPBACK}:{port}{path}",
        data=body,
        headers={"content-type": "application/json", **(headers or {})},
        method="POST" if body is not None else "GET",
    )
    try:
        with _NO_PROXY.open(request, timeout=10.0) as response:
            lowered = {k.lower(): v for k, v in response.headers.items()}
            return HttpReply(response.status, lowered, response.read())
    except urllib.error.HTTPError as exc:
        lowered = {k.lower(): v for k, v in exc.headers.items()}
        return HttpReply(exc.code, lowered, exc.read())


class Service:
    """A subprocess in its own session, logging to a file, stopped with its whole group."""

    def __init__(self, name: str, argv: list[str], log_path: Path, env: dict[str, str]) -> None:
        self.name = name
        self.log_path = log_path
        with log_path.open("wb") as log:
            self._proc = subprocess.Popen(
                argv,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                env=env,
                cwd=BENCH_DIR.parent,
                start_new_session=True,
            )

    @property
    def pid(self) -> int:
        return self._proc.pid

    def log_tail(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-LOG_TAIL_CHARS:]
        except FileNotFoundError:
            return ""

    def wait_ready(self, port: int, path: str, timeout_s: float = READY_TIMEOUT_S) -> None:
        """Poll GET path until it answers 200, the process dies, or the timeout passes."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self._proc.poll() is not None:
                raise RuntimeError(
                    f"{self.name} exited with code {self._proc.returncode} before it was ready; "
                    f"its log ({self.log_path}) ends:\n{self.log_tail()}"
                )
            try:
                if http_call(port, path).status == 200:
                    return
            except OSError:
                pass  # not listening yet
            time.sleep(0.2)
        raise RuntimeError(
            f"{self.name} was not ready within {timeout_s:.0f} s; log ends:\n{self.log_tail()}"
        )

    def stop(self) -> None:
        """SIGTERM to the process group, then SIGKILL after a grace period."""
        if self._proc.poll() is None:
            self._signal_group(signal.SIGTERM)
            try:
                self._proc.wait(timeout=STOP_GRACE_S)
            except subprocess.TimeoutExpired:
                self._signal_group(signal.SIGKILL)
                self._proc.wait(timeout=STOP_GRACE_S)
        # Workers may outlive a leader that exited on its own; the group id is still ours.
        self._signal_group(signal.SIGKILL)

    def _signal_group(self, sig: signal.Signals) -> None:
        try:
            os.killpg(self._proc.pid, sig)
        except ProcessLookupError:
            pass

    def __enter__(self) -> Service:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()


def start_mock(port: int, log_dir: Path, stream_tokens: int, stream_interval_ms: float) -> Service:
    argv = [
        sys.executable,
        str(BENCH_DIR / "mock_upstream.py"),
        "--port",
        str(port),
        "--stream-tokens",
        str(stream_tokens),
        "--stream-interval-ms",
        str(stream_interval_ms),
    ]
    service = Service("mock upstream", argv, log_dir / "mock.log", dict(os.environ))
    try:
        service.wait_ready(port, "/v1/models", timeout_s=20.0)
    except BaseException:
        service.stop()
        raise
    return service


def start_bare_proxy(port: int, upstream_port: int, log_dir: Path) -> Service:
    """benchmarks/bare_proxy.py in front of the mock: the same-run reference."""
    argv = [sys.executable, str(BENCH_DIR / "bare_proxy.py"), "--port", str(port),
            "--upstream", f"http://{LOOPBACK}:{upstream_port}"]
    service = Service("bare proxy", argv, log_dir / "bare-proxy.log", dict(os.environ))
    try:
        service.wait_ready(port, "/health", timeout_s=20.0)
    except BaseException:
        service.stop()
        raise
    return service


@dataclass(frozen=True, slots=True)
class Budgets:
    """Budgets and rate limits for the benchmark tenant, sized never to refuse: what is
    measured is the cost of checking them (reserve before, settle after each request), on the
    in-process store or, with a Redis URL, on Redis as replicas share it."""

    redis_url: str | None = None
    lease_s: float | None = None  # None: the gateway's default (leases of 0.5 s with Redis)

    @property
    def store(self) -> str:
        if not self.redis_url:
            return "memory"
        return "Redis, per request" if self.lease_s == 0 else "Redis, leased"


@dataclass(frozen=True, slots=True)
class GatewaySetup:
    """Environment and files shared by every gateway started in one benchmark run."""

    work_dir: Path
    policy_path: Path
    env: dict[str, str]

    @classmethod
    def create(
        cls, work_dir: Path, policy_path: Path, mock_port: int, budgets: Budgets | None = None,
        template: Path | None = None, database_url: str | None = None,
    ) -> GatewaySetup:
        """`template`: a policy file naming the mock's port `@MOCK_PORT@` (its own tenants and
        budgets); without it, the minimal one-backend policy, with `budgets` if given.
        `database_url`: audit into that Postgres (migrated here) instead of a fresh SQLite
        file."""
        if template is not None:
            policy_path.write_text(template.read_text().replace(MOCK_PORT, str(mock_port)))
        else:
            policy_path.write_text(_policy_yaml(mock_port, budgets))
        # Only the settings chosen here: an exported GATEWAY_REDIS_URL (say) must not change
        # what a run measures without saying so.
        env = {k: v for k, v in os.environ.items() if not k.startswith("GATEWAY_")}
        env.update(
            GATEWAY_DATABASE_URL=database_url or f"sqlite+aiosqlite:///{work_dir / 'gw.db'}",
            GATEWAY_ADMIN_KEY=ADMIN_KEY,
            GATEWAY_LOG_LEVEL="warning",
            NO_PROXY="127.0.0.1,localhost",
            no_proxy="127.0.0.1,localhost",
            # The realistic policy's external backend (the mock again, on loopback) names its
            # key by env var, as a real one does; the mock ignores it.
            BENCH_FRONTIER_API_KEY="bench-not-a-secret",
        )
        # The gateway measured is this checkout's, whatever the interpreter has installed
        # (an editable install of another worktree would otherwise be imported instead).
        env["PYTHONPATH"] = os.pathsep.join(
            p for p in (str(BENCH_DIR.parent), os.environ.get("PYTHONPATH")) if p)
        if budgets is not None and budgets.redis_url:
            env["GATEWAY_REDIS_URL"] = budgets.redis_url
            if budgets.lease_s is not None:
                env["GATEWAY_BUDGET_LEASE_S"] = str(budgets.lease_s)
        setup = cls(work_dir, policy_path, env)
        if database_url:
            setup.run_cli("migrate")  # the app never migrates on start-up
        return setup

    def run_cli(self, *args: str) -> str:
        """One `gateway` command; its stdout, or RuntimeError with its output."""
        done = subprocess.run(self.cli(*args), env=self.env, cwd=BENCH_DIR.parent,
                              capture_output=True, text=True, timeout=CLI_TIMEOUT_S, check=False)
        if done.returncode != 0:
            raise RuntimeError(
                f"`gateway {' '.join(args)}` failed (exit {done.returncode}):\n"
                f"{done.stdout[-LOG_TAIL_CHARS:]}\n{done.stderr[-LOG_TAIL_CHARS:]}"
            )
        return done.stdout

    def cli(self, *args: str) -> list[str]:
        # Prefer the console script installed beside this interpreter (the project's venv).
        script = Path(sys.executable).parent / "gateway"
        if script.exists():
            return [str(script), *args]
        return [sys.executable, "-c", "from gateway.cli.main import main; main()", *args]

    def create_key(self, tenant: str) -> str:
        """`gateway keys create`; the key is the last line of its stdout."""
        done = subprocess.run(
            self.cli("keys", "create", "--tenant", tenant),
            env=self.env,
            cwd=BENCH_DIR.parent,
            capture_output=True,
            text=True,
            timeout=CLI_TIMEOUT_S,
            check=False,
        )
        lines = [line.strip() for line in done.stdout.splitlines() if line.strip()]
        if done.returncode != 0 or not lines:
            raise RuntimeError(
                f"`gateway keys create` failed (exit {done.returncode}):\n"
                f"{done.stdout[-LOG_TAIL_CHARS:]}\n{done.stderr[-LOG_TAIL_CHARS:]}"
            )
        return lines[-1]

    def tenant_id(self, tenant: str) -> str:
        """The tenant's id (its budget keys' hash tag in Redis), from `gateway tenants list`."""
        done = subprocess.run(
            self.cli("tenants", "list"), env=self.env, cwd=BENCH_DIR.parent,
            capture_output=True, text=True, timeout=CLI_TIMEOUT_S, check=False,
        )
        for line in done.stdout.splitlines():
            fields = line.split()
            if len(fields) >= 2 and fields[1] == tenant:
                return fields[0]
        raise RuntimeError(f"`gateway tenants list` does not list {tenant!r}:\n{done.stdout}")

    def start_gateway(self, port: int, workers: int) -> Service:
        argv = self.cli(
            "serve",
            "--host",
            LOOPBACK,
            "--port",
            str(port),
            "--policy",
            str(self.policy_path),
            "--workers",
            str(workers),
        )
        log_path = self.work_dir / f"gateway-{workers}w.log"
        service = Service(f"gateway ({workers} workers)", argv, log_path, self.env)
        try:
            service.wait_ready(port, "/health")
        except BaseException:
            service.stop()
            raise
        return service


def forget_budget_keys(redis_url: str, tenant_id: str) -> int:
    """Delete one benchmark tenant's budget keys (a settled-request marker per request lives
    15 minutes; day and month totals for days): a shared dev Redis keeps nothing of ours."""
    import redis  # only runs with --redis-url import it

    client = redis.Redis.from_url(redis_url, socket_timeout=10, socket_connect_timeout=10)
    try:
        deleted, batch = 0, []
        for key in client.scan_iter(match=f"gw:budget:{{{tenant_id}}}:*", count=1000):
            batch.append(key)
            if len(batch) >= 1000:
                deleted += int(client.delete(*batch))
                batch = []
        if batch:
            deleted += int(client.delete(*batch))
        return deleted
    except redis.RedisError as exc:
        raise RuntimeError(f"could not delete tenant {tenant_id}'s keys from Redis: {exc}") \
            from exc
    finally:
        client.close()


# Budgets that never refuse: a day of requests at any rate one machine reaches stays far below
# them (a benchmark request reserves ~0.0001 USD and ~45 tokens).
_BUDGET_TENANT = """\
tenants:
  bench:
    budget: {daily_usd: 1000000, monthly_usd: 10000000}
    limits: {rpm: 100000000, tpm: 100000000000}
"""
# A price, so that requests spend real money against the budget. The run without budgets keeps
# the policy RESULTS.md was measured with; pricing is a few multiplications either way.
_BUDGET_PRICE = "    price_per_mtok_usd: {input: 1.0, output: 2.0}\n"


def _policy_yaml(mock_port: int, budgets: Budgets | None = None) -> str:
    text = _base_policy_yaml(mock_port)
    if budgets is None:
        return text
    text = text.replace("    quality_tier: 2\n", "    quality_tier: 2\n" + _BUDGET_PRICE)
    return text + _BUDGET_TENANT


def _base_policy_yaml(mock_port: int) -> str:
    return f"""\
# Written by benchmarks/overhead.py for one run: one mock vLLM backend on loopback.
version: 1
backends:
  - name: mock
    provider: vllm
    base_url: http://{LOOPBACK}:{mock_port}/v1
    model: mock-model
    zone: self_hosted
    context_window: 32768
    quality_tier: 2
  # The same mock answering in Anthropic's Messages dialect (/v1/messages). Loopback, so it is
  # self_hosted like the backend above: both paths route identically, only translation differs.
  - name: mock-anthropic
    provider: anthropic
    base_url: http://{LOOPBACK}:{mock_port}
    model: mock-model
    zone: self_hosted
    context_window: 32768
    quality_tier: 2
models:
  bench: [mock]
  bench-anthropic: [mock-anthropic]
"""
