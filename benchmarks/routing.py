"""Telemetry-aware routing against round-robin and least-in-flight, on a simulated fleet.

Three simulated vLLM backends of different KV sizes and speeds plus an external API (fixed
added latency, priced per token) behind one gateway. Bursty open-loop streaming load at a
share of the self-hosted capacity (measured first, directly on the simulators), with short
prompts, long prompts that stress the KV cache and shared-prefix groups. Per strategy and
load: TTFT p50/p99 at the client, throughput, errors, engine preemptions, spill-over share
and cost per 1,000 requests.

One gateway serves the whole benchmark; every run gets fresh simulators and a policy with
fresh backend names (hot-reloaded), so no run inherits caches, queues or learned state.
"""

from __future__ import annotations

import argparse
import asyncio
import math
import os
import shlex
import signal
import sys
import tempfile
import time
from collections.abc import Sequence
from contextlib import ExitStack
from dataclasses import asdict, dataclass
from pathlib import Path
from types import FrameType

import orjson
import uvloop
from machine import Machine, describe_machine
from process_cpu import machine_busy_s, tree_cpu_s
from routing_audit import AuditTail, diagnose
from routing_client import Client, Outcome, Scheduled, run_open_loop
from routing_fleet import (
    EXTERNAL,
    FLEET,
    SELF_HOSTED,
    SELF_HOSTED_MODEL,
    STRATEGIES,
    VIRTUAL_MODEL,
    RunningFleet,
    policy_yaml,
    start_fleet,
)
from routing_report import (
    DIAGNOSIS_HEADERS,
    MAIN_HEADERS,
    FleetSamples,
    RunSummary,
    detail_headers,
    detail_rows,
    diagnosis_rows,
    main_rows,
    summarize,
)
from routing_targets import targets
from routing_workload import Bursts, Mix, Workload, arrival_times, poisson_times
from services import BENCH_DIR, GatewaySetup, free_port
from tables import render_markdown, render_text

ADMIN_KEY = "routing-benchmark-admin"
REQUEST_TIMEOUT_S = 120.0
FIRST_TOKEN_TIMEOUT_S = 30.0  # an interactive client gives up after this
RELOAD_TIMEOUT_S = 30.0
SAMPLE_EVERY_S = 1.0
OTHER_LOAD_WARN_CORES = 0.3
WARMUP_INDEX = 1_000_000  # warm-up and calibration requests come from other parts of the
CALIBRATION_INDEX = 2_000_000  # workload stream than the measured ones
DEFAULT_STRATEGIES = (
    "load_aware", "load_aware_slo", "load_aware_nospill", "least_in_flight", "round_robin",
)


@dataclass(frozen=True, slots=True)
class Options:
    loads: tuple[int, ...]
    strategies: tuple[str, ...]
    duration_s: float
    warmup_s: float
    capacity: float | None
    calibrate_s: float
    time_scale: float
    seed: int
    json_path: Path | None
    markdown: bool
    keep: bool
    retry_busy: int


def parse_args(argv: list[str]) -> Options:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--loads", type=int, nargs="+", default=[50, 80, 95],
                        help="offered load, percent of the measured self-hosted capacity")
    parser.add_argument(
        "--strategies", nargs="+", default=list(DEFAULT_STRATEGIES), choices=sorted(STRATEGIES),
        metavar="NAME",
        help=f"default: {' '.join(DEFAULT_STRATEGIES)} (load_aware_slo: slo.ttft_ms 500 on "
        "the rule); diagnostic variants of load_aware: load_aware_noaffinity, "
        "load_aware_nospill_noaffinity (affinity off), load_aware_maxwait "
        "(telemetry.max_waiting 4)",
    )
    parser.add_argument("--duration", type=float, default=15.0, help="measured seconds per run")
    parser.add_argument("--warmup", type=float, default=5.0,
                        help="seconds of steady (non-bursty) load before each measured window")
    parser.add_argument("--capacity", type=float, default=None,
                        help="self-hosted capacity in req/s (skips the calibration)")
    parser.add_argument("--calibrate", type=float, default=15.0,
                        help="measured seconds of the capacity calibration")
    parser.add_argument("--time-scale", type=float, default=1.0,
                        help="simulator time scale (2 = every engine step takes twice as long)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", type=Path, help="also write every figure to this JSON file")
    parser.add_argument("--markdown", action="store_true",
                        help="print Markdown tables (for benchmarks/RESULTS.md)")
    parser.add_argument("--keep", action="store_true",
                        help="keep the work directory (logs, policies, the gateway's audit "
                        "records) instead of deleting it")
    parser.add_argument("--retry-busy", type=int, default=0, metavar="N",
                        help=f"repeat a run up to N times while other work on the machine "
                        f"takes more than {OTHER_LOAD_WARN_CORES:g} cores during it")
    args = parser.parse_args(argv)
    options = Options(
        loads=tuple(dict.fromkeys(args.loads)),
        strategies=tuple(dict.fromkeys(args.strategies)),
        duration_s=args.duration,
        warmup_s=args.warmup,
        capacity=args.capacity,
        calibrate_s=args.calibrate,
        time_scale=args.time_scale,
        seed=args.seed,
        json_path=args.json,
        markdown=args.markdown,
        keep=args.keep,
        retry_busy=args.retry_busy,
    )
    if any(not 5 <= load <= 150 for load in options.loads):
        parser.error("--loads must be 5–150 (percent)")
    if not 5 <= options.duration_s <= 600 or not 0 <= options.warmup_s <= 60:
        parser.error("--duration must be 5–600 s and --warmup 0–60 s")
    if not 0.25 <= options.time_scale <= 10 or not 3 <= options.calibrate_s <= 120:
        parser.error("--time-scale must be 0.25–10 and --calibrate 3–120 s")
    if not 0 <= options.retry_busy <= 5:
        parser.error("--retry-busy must be 0–5")
    if options.capacity is not None and not 0.1 <= options.capacity <= 1000:
        parser.error("--capacity must be 0.1–1000 req/s")
    return options


def _progress(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


# ---- capacity calibration --------------------------------------------------------------------

async def calibrate(fleet: RunningFleet, workload: Workload, options: Options) -> dict[str, float]:
    """Each self-hosted simulator alone, fed directly (no gateway) by a closed loop of
    1.5 × max_num_seqs clients: its completed requests per second is its capacity for this
    mix. The pool's capacity is their sum, what a perfect router could sustain."""
    counter = iter(range(CALIBRATION_INDEX, CALIBRATION_INDEX + 10_000_000))
    warmup_s = 3.0
    start = time.monotonic()
    window = (start + warmup_s, start + warmup_s + options.calibrate_s)

    async def worker(client: Client, done: list[Outcome]) -> None:
        while time.monotonic() < window[1]:
            index = next(counter)
            spec = workload.request(index)
            outcome = Outcome(index, spec.kind, time.monotonic())
            await client.stream_chat(outcome, spec.body(SELF_HOSTED_MODEL))
            if outcome.done_s is not None and window[0] <= outcome.done_s <= window[1]:
                done.append(outcome)

    results: dict[str, list[Outcome]] = {b.name: [] for b in SELF_HOSTED}
    clients = {b.name: Client(fleet.ports[b.name], None, REQUEST_TIMEOUT_S) for b in SELF_HOSTED}
    tasks = []
    for b in SELF_HOSTED:
        clients_n = math.ceil(1.5 * int(b.sim["max_num_seqs"]))
        tasks += [worker(clients[b.name], results[b.name]) for _ in range(clients_n)]
    await asyncio.gather(*tasks)
    for client in clients.values():
        client.close()
    failed = sum(1 for outs in results.values() for o in outs if not o.ok)
    if failed:
        raise RuntimeError(f"{failed} calibration requests failed; see the simulator logs")
    return {name: len(outs) / options.calibrate_s for name, outs in results.items()}


# ---- one measured run ------------------------------------------------------------------------

@dataclass
class Rig:
    """The gateway every run goes through, and the policy file it watches."""

    work_dir: Path
    policy_path: Path
    port: int
    key: str
    gateway_pid: int
    audit: AuditTail
    runs: int = 0

    def write_policy(self, text: str) -> None:
        # Write then rename, so the watcher never reads half a file.
        staging = self.policy_path.with_suffix(".tmp")
        staging.write_text(text)
        os.replace(staging, self.policy_path)


async def wait_for_policy(admin: Client, names: dict[str, str]) -> None:
    """Until the gateway routes with the new backends and has two scrapes of each engine."""
    deadline = time.monotonic() + RELOAD_TIMEOUT_S
    wanted = {names[b.name] for b in FLEET}
    scraped = {names[b.name] for b in SELF_HOSTED}
    while time.monotonic() < deadline:
        view = await admin.get_json("/admin/fleet", {"authorization": f"Bearer {ADMIN_KEY}"})
        backends = view.get("backends", {}) if isinstance(view, dict) else {}
        if wanted <= set(backends) and all(
            backends[n].get("prompt_tokens_per_s") is not None for n in scraped
        ):
            return
        await asyncio.sleep(0.25)
    raise RuntimeError("the gateway did not pick up the new policy in time (see its log)")


async def sample_fleet(
    admin: Client, names: dict[str, str], until_s: float
) -> list[dict[str, dict[str, object]]]:
    samples = []
    while time.monotonic() < until_s:
        view = await admin.get_json("/admin/fleet", {"authorization": f"Bearer {ADMIN_KEY}"})
        backends = view.get("backends", {}) if isinstance(view, dict) else {}
        samples.append({
            b.name: {k: backends.get(names[b.name], {}).get(k) for k in (
                "running", "waiting", "kv_usage", "in_flight", "waiting_blended",
                "kv_free_tokens", "circuit",
            )}
            for b in FLEET
        })
        await asyncio.sleep(SAMPLE_EVERY_S)
    return samples


def fleet_summary(samples: list[dict[str, dict[str, object]]]) -> FleetSamples:
    def values(name: str, key: str) -> list[float]:
        return [float(v) for s in samples if isinstance(v := s[name][key], int | float)]

    names = [b.name for b in SELF_HOSTED]
    return FleetSamples(
        max_waiting={n: int(max(values(n, "waiting"), default=0)) for n in names},
        mean_waiting={n: sum(v) / len(v) if (v := values(n, "waiting")) else 0.0 for n in names},
        max_kv_usage={n: max(values(n, "kv_usage"), default=0.0) for n in names},
    )


async def measure(
    rig: Rig, strategy_key: str, load_pct: int, rate: float, workload: Workload,
    bursts: Bursts, options: Options,
) -> tuple[RunSummary, list[dict[str, dict[str, object]]]]:
    rig.runs += 1
    strategy = STRATEGIES[strategy_key]
    names = {b.name: f"{b.name}.r{rig.runs}" for b in FLEET}
    base_name = {v: k for k, v in names.items()}
    with ExitStack() as stack:
        fleet = start_fleet(stack, rig.work_dir, options.time_scale)
        rig.write_policy(policy_yaml(strategy, fleet.ports, names))
        admin = Client(rig.port, None, 10.0)
        await wait_for_policy(admin, names)

        warm = poisson_times(rate, options.warmup_s, options.seed) if options.warmup_s else []
        due = arrival_times(rate, options.duration_s, bursts, options.seed)
        schedule = [
            Scheduled(t, WARMUP_INDEX + i, (spec := workload.request(WARMUP_INDEX + i)).kind,
                      spec.body(VIRTUAL_MODEL))
            for i, t in enumerate(warm)
        ] + [
            Scheduled(options.warmup_s + t, i, (spec := workload.request(i)).kind,
                      spec.body(VIRTUAL_MODEL))
            for i, t in enumerate(due)
        ]
        client = Client(rig.port, rig.key, REQUEST_TIMEOUT_S, FIRST_TOKEN_TIMEOUT_S)
        start = time.monotonic() + 0.2
        window_start = start + options.warmup_s
        window_end = window_start + options.duration_s

        cpu_before: list[tuple[float, ...]] = []

        def cpu_now() -> tuple[float, ...]:
            return (time.monotonic(), tree_cpu_s(rig.gateway_pid), tree_cpu_s(os.getpid()),
                    machine_busy_s())

        async def watch() -> tuple[dict[str, int], list[dict[str, dict[str, object]]]]:
            await asyncio.sleep(max(0.0, window_start - time.monotonic()))
            cpu_before.append(cpu_now())
            before = await asyncio.to_thread(fleet.preemptions)
            return before, await sample_fleet(admin, names, window_end)

        watcher = asyncio.create_task(watch())
        outcomes = await run_open_loop(client, schedule, start)
        before, samples = await watcher
        cpu_after = cpu_now()
        after = await asyncio.to_thread(fleet.preemptions)
        client.close()
        admin.close()
        await asyncio.sleep(0.6)  # the gateway writes its audit records every 0.2 s
    measured = outcomes[len(warm):]
    preemptions = {n: after[n] - before[n] for n in after}
    elapsed, gateway_s, ours_s, busy_s = (b - a for a, b in zip(cpu_before[0], cpu_after,
                                                                 strict=True))
    cpu = (gateway_s / elapsed, ours_s / elapsed, max(0.0, busy_s - ours_s) / elapsed)
    ids = {o.request_id for o in measured if o.request_id}
    diagnosis = diagnose(rig.audit.read(), ids, {b.name for b in SELF_HOSTED}, base_name)
    summary = summarize(
        strategy.label, load_pct, rate, measured, preemptions, base_name, EXTERNAL.name,
        fleet_summary(samples), diagnosis, cpu,
    )
    return summary, samples


# ---- the whole benchmark ---------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class Calibration:
    per_backend: dict[str, float]
    measured: bool

    @property
    def capacity(self) -> float:
        return sum(self.per_backend.values())


async def run(options: Options) -> tuple[Calibration, list[RunSummary], dict[str, object]]:
    mix, bursts = Mix(), Bursts()
    workload = Workload(mix, options.seed)
    runs: list[RunSummary] = []
    raw: dict[str, object] = {}
    with ExitStack() as stack:
        if options.keep:
            work_dir = Path(tempfile.mkdtemp(prefix="gw-routing-"))
        else:
            work_dir = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="gw-routing-")))
        env = dict(os.environ)
        env.update(
            GATEWAY_DATABASE_URL=f"sqlite+aiosqlite:///{work_dir / 'gw.db'}",
            GATEWAY_ADMIN_KEY=ADMIN_KEY,
            GATEWAY_LOG_LEVEL="warning",
            GATEWAY_AUDIT_LOG_PATH=str(work_dir / "audit.jsonl"),
            GATEWAY_START_SIMULATORS="false",
            NO_PROXY="127.0.0.1,localhost",
            no_proxy="127.0.0.1,localhost",
        )
        policy_path = work_dir / "policy.yaml"
        # The gateway needs a valid policy to start; the calibration fleet's will do.
        calibration_fleet = start_fleet(stack, work_dir, options.time_scale)
        first = {b.name: f"{b.name}.r0" for b in FLEET}
        policy_path.write_text(
            policy_yaml(STRATEGIES[options.strategies[0]], calibration_fleet.ports, first)
        )
        setup = GatewaySetup(work_dir, policy_path, env)
        key = setup.create_key("bench")
        port = free_port()
        gateway = stack.enter_context(setup.start_gateway(port, 1))
        _progress(f"gateway on :{port} (1 worker); work dir {work_dir}")
        if options.capacity is None:
            _progress(f"calibrating capacity: {options.calibrate_s:g} s, each backend alone")
            calibration = Calibration(await calibrate(calibration_fleet, workload, options), True)
        else:
            share = {b.name: float(b.sim["max_num_seqs"]) for b in SELF_HOSTED}
            calibration = Calibration(
                {n: options.capacity * s / sum(share.values()) for n, s in share.items()}, False
            )
        for service in calibration_fleet.services.values():
            service.stop()
        _progress("capacity " + ", ".join(
            f"{n} {r:.2f}" for n, r in calibration.per_backend.items()
        ) + f" → {calibration.capacity:.2f} req/s")
        rig = Rig(work_dir, policy_path, port, key, gateway.pid,
                  AuditTail(work_dir / "audit.jsonl"))
        for load in options.loads:
            rate = calibration.capacity * load / 100.0
            for strategy in options.strategies:
                started = time.monotonic()
                for attempt in range(options.retry_busy + 1):
                    summary, samples = await measure(
                        rig, strategy, load, rate, workload, bursts, options
                    )
                    if summary.other_cores <= OTHER_LOAD_WARN_CORES:
                        break
                    if attempt < options.retry_busy:
                        _progress(f"  {load:3d} % {summary.strategy}: other work took "
                                  f"{summary.other_cores:.2f} cores; running it again")
                runs.append(summary)
                raw[f"{strategy}@{load}"] = samples
                _progress(
                    f"  {load:3d} % {summary.strategy:22s} {summary.requests:5d} req, "
                    f"TTFT p50 {summary.ttft_p50_s * 1000:7.0f} ms p99 "
                    f"{summary.ttft_p99_s * 1000:7.0f} ms, errors {summary.requests - summary.ok}"
                    f", preemptions {summary.total_preemptions}, spill "
                    f"{summary.spill_share * 100:.1f} % ({time.monotonic() - started:.0f} s)"
                )
    return calibration, runs, raw


def report(
    options: Options, command: str, machine: Machine, calibration: Calibration,
    runs: Sequence[RunSummary], elapsed_s: float,
) -> None:
    mix, bursts = Mix(), Bursts()
    render = render_markdown if options.markdown else render_text
    how = ("measured: each backend alone, closed loop of 1.5 × max_num_seqs clients, "
           f"{options.calibrate_s:g} s" if calibration.measured else "given with --capacity")
    print(f"\nRouting strategies under bursty load ({machine.date})\n")
    print(f"- Machine: {machine.summary()}; {machine.python}; code at `{machine.revision}`; "
          f"load average before the run {machine.load_avg_1m:.2f}")
    print(f"- Command: `{command}` ({elapsed_s / 60:.1f} min)")
    print(f"- Scale: simulator time_scale {options.time_scale:g} (engine times below are "
          "before scaling); all on 127.0.0.1; one gateway worker")
    print("- Fleet: " + "; ".join(b.describe() for b in FLEET))
    print(f"- Workload: {mix.describe()}; answers of 16–96 tokens, streamed")
    print(f"- Arrivals: open loop, {bursts.describe()}; {options.warmup_s:g} s of steady "
          f"Poisson warm-up, then {options.duration_s:g} s measured (seed {options.seed})")
    print(f"- Self-hosted capacity for this mix: {calibration.capacity:.2f} req/s ({how}: "
          + ", ".join(f"{n} {r:.2f}" for n, r in calibration.per_backend.items()) + ")")
    print("- TTFT: client side, from the scheduled send time to the first content token; a "
          "failed request counts as an infinite TTFT. Throughput: successful requests ÷ "
          "(first send → last completion). Preemptions: Δ "
          "vllm:num_preemptions_total over the measured window and its drain. Cost: "
          "x_gateway.cost_usd of each stream (self-hosted GPUs are a fixed cost, unpriced).\n")
    print(render(MAIN_HEADERS, main_rows(runs)))
    backends = [b.name for b in FLEET]
    print("\nPer request kind, where requests went, preemptions and the worst engine queue "
          "(scraped `waiting`, sampled each second):\n")
    print(render(detail_headers(backends), detail_rows(runs, backends)))
    print("\nWhy the router did what it did (from the gateway's audit records), and CPU "
          "(cores busy over the measured window and its drain):\n")
    print(render(DIAGNOSIS_HEADERS, diagnosis_rows(runs)))
    for r in runs:
        if r.errors:
            print(f"\nerrors, {r.strategy} at {r.load_pct} %: " + "; ".join(
                f"{count} × {kind}" for kind, count in sorted(r.errors.items())
            ))
    busy = [r for r in runs if r.other_cores > OTHER_LOAD_WARN_CORES]
    if busy:
        print("\nWARNING: other work on the machine used more than "
              f"{OTHER_LOAD_WARN_CORES:g} cores during: " + ", ".join(
                  f"{r.strategy} at {r.load_pct} % ({r.other_cores:.2f})" for r in busy
              ) + "; those rows may be skewed.")
    print("\n" + "\n".join(targets(runs)))


def _terminate(signum: int, frame: FrameType | None) -> None:
    raise SystemExit(128 + signum)


def main() -> int:
    options = parse_args(sys.argv[1:])
    command = shlex.join(["python", "benchmarks/routing.py", *sys.argv[1:]])
    signal.signal(signal.SIGTERM, _terminate)
    started = time.monotonic()
    machine = describe_machine(BENCH_DIR.parent)
    try:
        calibration, runs, raw = uvloop.run(run(options))
    except KeyboardInterrupt:
        _progress("interrupted; subprocesses stopped")
        return 130
    except (RuntimeError, TimeoutError, OSError) as exc:
        _progress(f"routing benchmark failed: {exc}")
        return 1
    elapsed = time.monotonic() - started
    report(options, command, machine, calibration, runs, elapsed)
    if options.json_path:
        options.json_path.write_bytes(orjson.dumps({
            "command": command,
            "machine": asdict(machine),
            "options": {k: str(v) if isinstance(v, Path) else v
                        for k, v in asdict(options).items()},
            "capacity_req_s": calibration.per_backend,
            "runs": [asdict(r) for r in runs],
            "fleet_samples": raw,
        }, option=orjson.OPT_INDENT_2 | orjson.OPT_SERIALIZE_NUMPY))
        _progress(f"JSON written to {options.json_path}")
    _progress(f"total time {elapsed:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
