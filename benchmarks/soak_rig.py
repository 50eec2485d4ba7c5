"""The soak benchmark's rig: two simulated vLLM backends (scraped for telemetry), the policy that
routes to them with a priced baseline and a tenant whose budgets never refuse, the gateway's
environment (Postgres audit, Redis budgets), and readings of the gateway's process tree.
"""

from __future__ import annotations

import os
import sys
from collections import Counter
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path

import orjson
from process_cpu import descendants
from services import ADMIN_KEY, BENCH_DIR, LOOPBACK, GatewaySetup, Service, free_port

VIRTUAL_MODEL = "soak"
TENANT = "soak"
MAX_TOKENS = 32
SIM_NAMES = ("sim-a", "sim-b")
# Real-time engines (time_scale 1): ~10 ms decode steps, answers of 16–32 tokens, room for 64
# sequences each, so the engines are never what saturates first.
SIM_CONFIG = {
    "model_name": "sim-llama-8b",
    "max_model_len": 4096,
    "max_num_seqs": 64,
    "num_gpu_blocks": 4096,
    "output_tokens_min": 16,
    "output_tokens_max": MAX_TOKENS,
    "time_scale": 1.0,
    "seed": 0,
}


def start_sims(stack: ExitStack, log_dir: Path) -> dict[str, int]:
    """Start both simulators (through benchmarks/routing_sim.py) and wait for /health."""
    ports = {name: free_port() for name in SIM_NAMES}
    services: dict[str, Service] = {}
    for name, port in ports.items():
        argv = [sys.executable, str(BENCH_DIR / "routing_sim.py"), "--port", str(port),
                "--config", orjson.dumps({**SIM_CONFIG, "seed": len(services)}).decode()]
        service = Service(f"sim {name}", argv, log_dir / f"{name}.log", dict(os.environ))
        services[name] = stack.enter_context(service)
    for name, port in ports.items():
        services[name].wait_ready(port, "/health", timeout_s=60.0)
    return ports


def policy_yaml(ports: dict[str, int]) -> str:
    lines = ["# Written by benchmarks/soak.py for one run.", "version: 1", "backends:"]
    for name, port in ports.items():
        lines += [
            f"  - name: {name}",
            "    provider: vllm",
            f"    base_url: http://{LOOPBACK}:{port}/v1",
            f"    model: {SIM_CONFIG['model_name']}",
            "    zone: self_hosted",
            f"    context_window: {SIM_CONFIG['max_model_len']}",
            "    quality_tier: 2",
            f"    max_num_seqs: {SIM_CONFIG['max_num_seqs']}",
            # A price, so that every request spends against the tenant's budget.
            "    price_per_mtok_usd: {input: 1.0, output: 2.0}",
        ]
    lines += [
        "models:",
        f"  {VIRTUAL_MODEL}:",
        f"    backends: [{', '.join(ports)}]",
        "    strategy: load_aware",
        "rules:",
        "  - name: sensitive-stays-home",
        "    when: {sensitivity: [pii, secret, phi]}",
        "    allow_zones: [self_hosted]",
        "  - name: default",
        "    objective: cheapest",
        # Savings against a frontier price are computed for every audit row.
        "baseline: {name: frontier, price_per_mtok_usd: {input: 2.5, output: 10.0}}",
        "telemetry: {scrape_interval_s: 1.0}",
        # Budgets and limits a day at any rate this machine reaches stays far below.
        "tenants:",
        f"  {TENANT}:",
        "    budget: {daily_usd: 1000000, monthly_usd: 10000000}",
        "    limits: {rpm: 100000000, tpm: 100000000000}",
    ]
    return "\n".join(lines) + "\n"


def gateway_setup(work_dir: Path, ports: dict[str, int], database_url: str,
                  redis_url: str) -> GatewaySetup:
    policy_path = work_dir / "policy.yaml"
    policy_path.write_text(policy_yaml(ports))
    # Only the settings chosen here (see GatewaySetup.create).
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GATEWAY_", "OTEL_"))}
    env.update(
        GATEWAY_DATABASE_URL=database_url,
        GATEWAY_REDIS_URL=redis_url,
        GATEWAY_ADMIN_KEY=ADMIN_KEY,
        GATEWAY_LOG_LEVEL="warning",
        GATEWAY_AUDIT_SPOOL_DIR=str(work_dir / "spool"),
        GATEWAY_START_SIMULATORS="false",
        NO_PROXY="127.0.0.1,localhost",
        no_proxy="127.0.0.1,localhost",
    )
    return GatewaySetup(work_dir, policy_path, env)


@dataclass(frozen=True, slots=True)
class TreeReading:
    """The gateway's process tree at one instant (uvicorn supervisor plus its workers)."""

    processes: int
    rss_kib: int  # the whole tree
    leader_rss_kib: int  # the serving process itself (1 worker: the one that serves)
    fds: int


def read_tree(pid: int) -> TreeReading:
    rss_kib = fds = count = leader_kib = 0
    for member in descendants(pid):
        try:
            status = Path(f"/proc/{member}/status").read_text()
            fd_count = len(os.listdir(f"/proc/{member}/fd"))
        except (FileNotFoundError, ProcessLookupError, PermissionError):
            continue  # exited between listing and reading
        for line in status.splitlines():
            if line.startswith("VmRSS:"):
                kib = int(line.split()[1])
                rss_kib += kib
                leader_kib = kib if member == pid else leader_kib
                break
        fds += fd_count
        count += 1
    return TreeReading(count, rss_kib, leader_kib, fds)


def fd_kinds(pid: int) -> str:
    """The tree's open fds by kind (socket, pipe, anon_inode, file), to tell connection pools
    filling up from files left open."""
    kinds: Counter[str] = Counter()
    for member in descendants(pid):
        try:
            names = os.listdir(f"/proc/{member}/fd")
        except (FileNotFoundError, ProcessLookupError, PermissionError):
            continue
        for name in names:
            try:
                target = os.readlink(f"/proc/{member}/fd/{name}")
            except OSError:
                continue  # closed since the listing
            kind = target.split(":", 1)[0] if ":" in target and "/" not in target[:1] else "file"
            kinds[kind] += 1
    return ", ".join(f"{k} {n}" for k, n in sorted(kinds.items()))


def spooled_files(work_dir: Path) -> int:
    """Segments left in the audit spool (each slot also keeps a `lock` file): rows that never
    reached Postgres."""
    spool = work_dir / "spool"
    return sum(1 for _ in spool.rglob("*.jsonl")) if spool.exists() else 0
