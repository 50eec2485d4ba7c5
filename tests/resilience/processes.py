"""Real `gateway sim` and `gateway serve` processes for tests that signal, kill or measure
them (a thread cannot be SIGKILLed, nor its memory told apart from the test's)."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.e2e.conftest import create_key
from tests.support.processes import Process
from tests.support.servers import free_port

REPO = Path(__file__).resolve().parents[2]


def gateway_process(name: str, args: list[str], log_dir: Path, env: dict[str, str],
                    port: int) -> Process:
    """`python -m gateway ARGS` from this checkout, with the test's environment and `env`."""
    return Process(name, [sys.executable, "-m", "gateway", *args], log_dir,
                   {**os.environ, "PYTHONPATH": str(REPO), **env}, port)


def start_sim(log_dir: Path, name: str, model: str = "sim-model", **knobs: float | int) -> Process:
    port = free_port()
    args = ["sim", "--port", str(port), "--model", model, "--max-model-len", "1024"]
    for knob, value in knobs.items():
        args += [f"--{knob.replace('_', '-')}", str(value)]
    return gateway_process(name, args, log_dir, {}, port)


def start_gateway(log_dir: Path, policy_path: Path, db_url: str, **env: str) -> Process:
    port = free_port()
    settings = {"GATEWAY_DATABASE_URL": db_url, "GATEWAY_LOG_LEVEL": "warning",
                "GATEWAY_POLICY_POLL_INTERVAL_S": "0.2", "OTEL_SDK_DISABLED": "true",
                **{f"GATEWAY_{k.upper()}": v for k, v in env.items()}}
    args = ["serve", "--port", str(port), "--policy", str(policy_path), "--no-sim"]
    return gateway_process("gateway", args, log_dir, settings, port)


def sims_policy(ports: dict[str, int], *, extra: str = "") -> str:
    """One pool `auto` over the given sims (least-loaded spreads the load across them)."""
    backends = "".join(
        f"  - name: {name}\n    provider: vllm\n    base_url: http://127.0.0.1:{port}/v1\n"
        "    model: sim-model\n    context_window: 1024\n    quality_tier: 2\n"
        "    price_per_mtok_usd: {input: 1.0, output: 2.0}\n"
        for name, port in ports.items()
    )
    return (f"version: 1\nbackends:\n{backends}"
            f"models:\n  auto: [{', '.join(ports)}]\n{extra}")


@contextmanager
def gateway_before_one_sim(tmp: Path, **env: str) -> Iterator[tuple[Process, str]]:
    """A `gateway serve` process (settings from `env`) in front of one fast simulated engine,
    with a key of tenant "acme"; both stopped on exit."""
    sim = start_sim(tmp, "sim", time_scale=0.05)
    db_url = f"sqlite+aiosqlite:///{tmp}/gw.db"
    key = create_key(db_url, "acme")
    policy = tmp / "policy.yaml"
    gw: Process | None = None
    try:
        sim.wait_healthy()
        policy.write_text(sims_policy({"sim": sim.port}))
        gw = start_gateway(tmp, policy, db_url, **env)
        yield gw.wait_healthy(timeout_s=60), key
    finally:
        if gw is not None:
            gw.stop()
        sim.stop()
