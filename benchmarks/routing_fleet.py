"""The routing benchmark's fleet: three simulated vLLM backends of different sizes and speeds
and an external API (a simulator behind a fixed added delay, with a price), how to start them,
read their preemption counters, and the policy file for each routing strategy.
"""

from __future__ import annotations

import os
import re
import sys
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path

import orjson
from services import BENCH_DIR, LOOPBACK, Service, free_port, http_call

SELF_HOSTED_MODEL = "sim-llama-8b"
EXTERNAL_MODEL = "ext-frontier"
CONTEXT_WINDOW = 4096
# Every simulator: the same answer lengths (drawn from the prompt, so a request gets the same
# answer wherever it goes) and a context that fits the smallest KV cache.
COMMON_SIM = {
    "max_model_len": CONTEXT_WINDOW,
    "output_tokens_min": 16,
    "output_tokens_max": 96,
    "seed": 0,
}


@dataclass(frozen=True, slots=True)
class SimBackend:
    name: str
    zone: str
    model: str
    sim: dict[str, float | int]  # SimConfig fields (times before time_scale)
    price_per_mtok_usd: tuple[float, float] | None = None  # (input, output), external only
    fixed_delay_s: float = 0.0  # added before every request (the external API's latency)

    @property
    def kv_tokens(self) -> int:
        return int(self.sim["num_gpu_blocks"]) * 16

    def describe(self) -> str:
        s = self.sim
        if self.zone != "self_hosted":
            price = self.price_per_mtok_usd or (0.0, 0.0)
            return (
                f"{self.name}: zone {self.zone}, +{self.fixed_delay_s * 1000:.0f} ms fixed "
                f"latency, {1 / float(s['decode_step_base_s']):.0f} tokens/s per stream, no "
                f"batch limit in practice; ${price[0]:g} / ${price[1]:g} per M input / output "
                "tokens"
            )
        return (
            f"{self.name}: KV {self.kv_tokens} tokens, max_num_seqs {s['max_num_seqs']}, "
            f"decode step {float(s['decode_step_base_s']) * 1000:g} ms + "
            f"{float(s['decode_step_per_seq_s']) * 1000:g} ms/seq, prefill "
            f"{float(s['prefill_tokens_per_s']):g} tokens/s"
        )


FLEET = (
    SimBackend("gpu-large", "self_hosted", SELF_HOSTED_MODEL, {
        "num_gpu_blocks": 2048, "max_num_seqs": 48, "decode_step_base_s": 0.012,
        "decode_step_per_seq_s": 0.0004, "prefill_tokens_per_s": 24000.0,
    }),
    SimBackend("gpu-medium", "self_hosted", SELF_HOSTED_MODEL, {
        "num_gpu_blocks": 1024, "max_num_seqs": 24, "decode_step_base_s": 0.016,
        "decode_step_per_seq_s": 0.0006, "prefill_tokens_per_s": 16000.0,
    }),
    SimBackend("gpu-small", "self_hosted", SELF_HOSTED_MODEL, {
        "num_gpu_blocks": 512, "max_num_seqs": 12, "decode_step_base_s": 0.024,
        "decode_step_per_seq_s": 0.0008, "prefill_tokens_per_s": 8000.0,
    }),
    SimBackend(
        "external-api", "external", EXTERNAL_MODEL,
        {"num_gpu_blocks": 65536, "max_num_seqs": 1024, "decode_step_base_s": 0.02,
         "decode_step_per_seq_s": 0.0, "prefill_tokens_per_s": 1e6},
        price_per_mtok_usd=(2.50, 10.00),
        fixed_delay_s=0.35,
    ),
)
SELF_HOSTED = tuple(b for b in FLEET if b.zone == "self_hosted")
EXTERNAL = next(b for b in FLEET if b.zone != "self_hosted")


@dataclass
class RunningFleet:
    ports: dict[str, int]
    services: dict[str, Service] = field(default_factory=dict)

    def preemptions(self) -> dict[str, int]:
        """vllm:num_preemptions_total of every self-hosted backend, now."""
        return {b.name: _counter(self.ports[b.name], "vllm:num_preemptions_total")
                for b in SELF_HOSTED}


def start_fleet(stack: ExitStack, log_dir: Path, time_scale: float) -> RunningFleet:
    """Start every simulator (in parallel) and wait until each answers /health."""
    fleet = RunningFleet({b.name: free_port() for b in FLEET})
    for backend in FLEET:
        config = {**COMMON_SIM, **backend.sim, "model_name": backend.model,
                  "time_scale": time_scale}
        argv = [sys.executable, str(BENCH_DIR / "routing_sim.py"),
                "--port", str(fleet.ports[backend.name]), "--config",
                orjson.dumps(config).decode()]
        service = Service(f"sim {backend.name}", argv, log_dir / f"sim-{backend.name}.log",
                          dict(os.environ))
        fleet.services[backend.name] = stack.enter_context(service)
    for backend in FLEET:
        port = fleet.ports[backend.name]
        fleet.services[backend.name].wait_ready(port, "/health", timeout_s=60.0)
        if backend.fixed_delay_s:
            delay = backend.fixed_delay_s * time_scale
            reply = http_call(port, "/sim/faults", orjson.dumps({"delay_s": delay}))
            if reply.status != 200:
                raise RuntimeError(f"could not set {backend.name}'s delay: {reply.body!r}")
    return fleet


_SAMPLE = re.compile(r"^([a-zA-Z_:][\w:]*)(\{[^}]*\})?\s+(\S+)", re.MULTILINE)


def _counter(port: int, name: str) -> int:
    reply = http_call(port, "/metrics")
    if reply.status != 200:
        raise RuntimeError(f"/metrics on :{port} answered {reply.status}")
    total = 0.0
    for match in _SAMPLE.finditer(reply.body.decode()):
        if match.group(1) == name:
            total += float(match.group(3))
    return int(total)


@dataclass(frozen=True, slots=True)
class Strategy:
    label: str  # as the table shows it
    pool_strategy: str  # ModelPoolSpec.strategy
    spill: bool  # the rule has spill_to: [external-api]
    affinity: bool = True  # telemetry.affinity.enabled (the default)
    slo_ttft_ms: int | None = None  # the default rule's slo.ttft_ms
    max_waiting: int | None = None  # telemetry.max_waiting (default 0)


SLO_TTFT_MS = 500  # the load_aware_slo variant's target
STRATEGIES = {
    "load_aware": Strategy("load_aware + spill", "load_aware", True),
    "load_aware_nospill": Strategy("load_aware, no spill", "load_aware", False),
    "round_robin": Strategy("round_robin", "round_robin", True),
    "least_in_flight": Strategy("least_in_flight", "least_in_flight", True),
    # Diagnostic variants, not run by default.
    "load_aware_noaffinity": Strategy("load_aware, no affinity", "load_aware", True, False),
    "load_aware_nospill_noaffinity": Strategy(
        "load_aware, no spill/aff.", "load_aware", False, False
    ),
    "load_aware_slo": Strategy("load_aware + spill, SLO", "load_aware", True,
                               slo_ttft_ms=SLO_TTFT_MS),
    "load_aware_maxwait": Strategy("load_aware + spill, wait≤4", "load_aware", True,
                                   max_waiting=4),
}
VIRTUAL_MODEL = "chat"


def policy_yaml(strategy: Strategy, ports: dict[str, int], names: dict[str, str]) -> str:
    """The policy of one run; `names` gives each backend its name in this run (a fresh name
    is a fresh backend to the gateway: no learned rates, latency or breaker state carried)."""
    lines = [
        f"# Written by benchmarks/routing.py: strategy {strategy.pool_strategy}, "
        f"spill_to {'on' if strategy.spill else 'off'}.",
        "version: 1",
        "backends:",
    ]
    for b in FLEET:
        lines += [
            f"  - name: {names[b.name]}",
            f"    provider: {'vllm' if b.zone == 'self_hosted' else 'openai_compat'}",
            f"    base_url: http://{LOOPBACK}:{ports[b.name]}/v1",
            f"    model: {b.model}",
            f"    zone: {b.zone}",
            f"    context_window: {CONTEXT_WINDOW}",
            "    quality_tier: 2",
        ]
        if b.zone == "self_hosted":
            lines.append(f"    max_num_seqs: {b.sim['max_num_seqs']}")
        else:
            price = b.price_per_mtok_usd or (0.0, 0.0)
            lines.append(f"    price_per_mtok_usd: {{input: {price[0]}, output: {price[1]}}}")
    pool = ", ".join(names[b.name] for b in SELF_HOSTED)
    lines += [
        "models:",
        f"  {VIRTUAL_MODEL}:",
        f"    backends: [{pool}]",
        f"    strategy: {strategy.pool_strategy}",
    ]
    # round_robin and least_in_flight ignore engine metrics, so they never find the pool
    # saturated: spill_to is in their policy too, and simply never fires.
    # Sensitive requests stay at home (the policy validator insists); none are generated.
    lines += [
        "rules:",
        "  - name: sensitive-stays-home",
        "    when: {sensitivity: [pii, secret, phi]}",
        "    allow_zones: [self_hosted]",
    ]
    if strategy.spill:
        lines += ["  - name: default", f"    spill_to: [{names[EXTERNAL.name]}]"]
        if strategy.slo_ttft_ms is not None:
            lines.append(f"    slo: {{ttft_ms: {strategy.slo_ttft_ms}}}")
    telemetry = []
    if not strategy.affinity:
        telemetry.append("  affinity: {enabled: false}")
    if strategy.max_waiting is not None:
        telemetry.append(f"  max_waiting: {strategy.max_waiting}")
    if telemetry:
        lines += ["telemetry:", *telemetry]
    return "\n".join(lines) + "\n"
