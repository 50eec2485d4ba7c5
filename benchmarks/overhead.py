"""What the gateway adds over calling the upstream directly: req/s, added p50/p99 latency, gateway
CPU per request and added streaming time to first token, measured on 127.0.0.1 only.

The headline configuration (`--policy realistic`, the default) is what a deployment runs:
benchmarks/policies/realistic.yaml (three rules on sensitivity and complexity, prices, a
baseline, a tenant budget and rate limits, so every request is classified, reserved and
settled), audit on. Beside it, interleaved per load level in the same run, the thinnest Python
pass-through proxy (benchmarks/bare_proxy.py) is measured as the reference, and issue 18's
targets are read as ratios to it (`--no-bare` leaves it out).

`--policy minimal` is the one-backend policy of earlier runs, where `--budgets` gives the
benchmark tenant a budget and rpm/tpm limits it never reaches, so every request is reserved
and settled against them; compare its req/s with a run without. `--redis-url` keeps budgets in
Redis, as replicas share them (either policy), and `--database-url` audits into Postgres: with
both, the run is what a deployment runs (the output says which audit database and budget store
ran; without them, SQLite in the gateway's process and budgets in memory). `--anthropic` and
`--responses` add, at concurrency 1, the price of the Anthropic upstream path and of the
Responses API front door against the plain chat path through the same gateway.
"""

from __future__ import annotations

import argparse
import shlex
import signal
import sys
import tempfile
import time
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from types import FrameType

import anthropic_path
import orjson
import responses_path
from bare_report import bare_tables
from load_result import LoadResult, describe
from loadgen import LoadPlan, Probe, Target, run_load
from machine import Machine, describe_machine
from overhead_report import (
    SUMMARY_HEADERS,
    Level,
    Outcome,
    Pair,
    RunInfo,
    detail_tables,
    error_notes,
    markdown_section,
    summary_rows,
)
from path_pairs import PathRun
from process_cpu import rig_cpu_probe
from services import (
    BENCH_DIR,
    LOOPBACK,
    Budgets,
    GatewaySetup,
    HttpReply,
    forget_budget_keys,
    free_port,
    http_call,
    start_bare_proxy,
    start_mock,
)
from tables import render_markdown, render_text

POLICY_PATH = BENCH_DIR / "overhead-policy.yaml"
REALISTIC_POLICY = BENCH_DIR / "policies" / "realistic.yaml"
STREAM_TOKENS = 32
STREAM_INTERVAL_MS = 10.0
PER_RUN_SETUP_S = 0.5  # spawning the load generator and connecting, for the time estimate
MAX_PLANNED_S = 3600.0


@dataclass(frozen=True, slots=True)
class Options:
    """The validated command line."""

    duration_s: float
    warmup_s: float
    workers: tuple[int, ...]
    repeats: int
    levels: tuple[Level, ...]
    processes: int
    markdown: bool
    markdown_out: Path | None
    anthropic: bool = False
    responses: bool = False
    budgets: Budgets | None = None
    realistic: bool = True
    bare: bool = True
    database_url: str | None = None  # None: SQLite in the gateway's own process

    @property
    def budgets_label(self) -> str:
        policy = "realistic policy" if self.realistic else "minimal policy"
        audit = "audit to Postgres" if self.database_url else "audit to SQLite (in process)"
        if self.budgets is None:
            return f"{policy}, budgets off, {audit}"
        return f"{policy}, budgets on ({self.budgets.store} store), {audit}"

    @property
    def planned_s(self) -> float:
        sides = 3 if self.bare else 2
        runs = sides * self.repeats * len(self.levels) * len(self.workers)
        if self.anthropic:
            runs += 2 * self.repeats * len(anthropic_path.LEVELS) * len(self.workers)
        if self.responses:
            runs += 2 * self.repeats * len(responses_path.LEVELS) * len(self.workers)
        return runs * (self.warmup_s + self.duration_s + PER_RUN_SETUP_S)


def parse_args(argv: list[str]) -> Options:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--duration", type=float, default=5.0, help="measured seconds per run")
    parser.add_argument("--warmup", type=float, default=1.0, help="seconds before each window")
    parser.add_argument(
        "--workers", type=int, nargs="+", default=[2, 1], help="gateway uvicorn workers to test"
    )
    parser.add_argument("--repeats", type=int, default=1, help="direct/gateway pairs per level")
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 16, 64])
    parser.add_argument("--stream-concurrency", type=int, nargs="*", default=[1, 16])
    parser.add_argument("--processes", type=int, default=1, help="load generator processes")
    parser.add_argument(
        "--markdown", action="store_true", help="also print a section for benchmarks/RESULTS.md"
    )
    parser.add_argument("--markdown-out", type=Path, help="write that section to this file")
    parser.add_argument(
        "--anthropic", action="store_true",
        help="also measure the Anthropic path (mock Messages upstream) against the "
        "OpenAI-compatible path through the same gateway, at concurrency 1",
    )
    parser.add_argument(
        "--responses", action="store_true",
        help="also measure the Responses API path (/v1/responses, translated to chat) against "
        "the chat path through the same gateway and mock, at concurrency 1",
    )
    parser.add_argument(
        "--policy", choices=("realistic", "minimal"), default="realistic",
        help="realistic (default): benchmarks/policies/realistic.yaml, rules, prices, baseline, "
        "budgets and limits; minimal: one backend, no rules, budgets only with --budgets",
    )
    parser.add_argument(
        "--no-bare", action="store_true",
        help="do not measure the bare pass-through proxy (benchmarks/bare_proxy.py) beside "
        "the gateway",
    )
    parser.add_argument(
        "--budgets", action="store_true",
        help="with --policy minimal: give the tenant a budget and rpm/tpm limits high enough "
        "never to refuse: every request is then admitted against them and settled",
    )
    parser.add_argument(
        "--redis-url", default=None,
        help="with --budgets: keep them in this Redis (GATEWAY_REDIS_URL) instead of the "
        "gateway process; the benchmark tenant's keys are deleted afterwards",
    )
    parser.add_argument(
        "--budget-lease-s", type=float, default=None,
        help="with --redis-url: GATEWAY_BUDGET_LEASE_S for the gateway (0: one Redis call per "
        "admit and per settle; default: the gateway's leases)",
    )
    parser.add_argument(
        "--database-url", default=None,
        help="audit into this Postgres (GATEWAY_DATABASE_URL, postgresql+asyncpg://...), "
        "migrated first, as a deployment does; default: a fresh SQLite file, whose engine "
        "runs in the gateway's own process",
    )
    args = parser.parse_args(argv)
    if args.database_url and not args.database_url.startswith("postgresql"):
        parser.error("--database-url takes a postgresql+asyncpg:// URL")
    realistic = args.policy == "realistic"
    if args.budgets and realistic:
        parser.error("--budgets is for --policy minimal (the realistic policy has its own)")
    if args.redis_url and not (args.budgets or realistic):
        parser.error("--redis-url needs --budgets or the realistic policy")
    if args.anthropic and realistic:
        parser.error("--anthropic needs --policy minimal (its mock Anthropic backend)")
    if args.budget_lease_s is not None and not args.redis_url:
        parser.error("--budget-lease-s needs --redis-url")
    levels = [Level(False, c) for c in dict.fromkeys(args.concurrency)]
    levels += [Level(True, c) for c in dict.fromkeys(args.stream_concurrency)]
    options = Options(
        duration_s=args.duration,
        warmup_s=args.warmup,
        workers=tuple(dict.fromkeys(args.workers)),
        repeats=args.repeats,
        levels=tuple(levels),
        processes=args.processes,
        markdown=args.markdown,
        markdown_out=args.markdown_out,
        anthropic=args.anthropic,
        responses=args.responses,
        budgets=Budgets(args.redis_url, args.budget_lease_s)
        if args.budgets or realistic else None,
        realistic=realistic,
        bare=not args.no_bare,
        database_url=args.database_url,
    )
    problem = _out_of_bounds(options)
    if problem:
        parser.error(problem)
    return options


def _out_of_bounds(o: Options) -> str | None:
    # Everything is bounded so that a typo cannot start an hour-long or machine-filling run.
    if not 0.5 <= o.duration_s <= 120 or not 0 <= o.warmup_s <= 60:
        return "--duration must be 0.5–120 s and --warmup 0–60 s"
    if not 1 <= o.repeats <= 10 or not 1 <= o.processes <= 8:
        return "--repeats must be 1–10 and --processes 1–8"
    if len(o.workers) > 4 or any(not 1 <= w <= 16 for w in o.workers):
        return "--workers takes up to 4 values, each 1–16"
    if any(not 1 <= level.concurrency <= 512 for level in o.levels):
        return "concurrency levels must be 1–512"
    if o.planned_s > MAX_PLANNED_S:
        return f"this plan would take over {MAX_PLANNED_S:.0f} s; shorten it"
    return None


def check_gateway(
    port: int, key: str, model: str = "bench", budgets: Budgets | None = None
) -> str:
    """One request through the gateway before measuring, so misconfiguration fails loudly."""
    body = orjson.dumps({"model": model, "messages": [{"role": "user", "content": "hi"}]})
    reply = http_call(port, "/v1/chat/completions", body, {"authorization": f"Bearer {key}"})
    if reply.status != 200:
        raise RuntimeError(
            f"gateway answered {reply.status} to a test request: {reply.body[:500]!r}"
        )
    if budgets is not None:
        check_budgets(port, reply, budgets)
    return reply.headers.get("x-gateway-backend", "(no x-gateway-backend header)")


def check_budgets(port: int, reply: HttpReply, budgets: Budgets) -> None:
    """A budget run that silently measured no budgets would compare nothing: the limits must
    be in force (OpenAI's rate headers), the request metered and, with Redis, Redis in use."""
    problems = []
    if "x-ratelimit-limit-requests" not in reply.headers:
        problems.append("no x-ratelimit-* headers: the tenant's limits are not applied")
    if reply.headers.get("x-gateway-unmetered") == "true":
        problems.append("the request was served unmetered: the budget store did not answer")
    if budgets.redis_url:
        ready = http_call(port, "/ready")
        if b'"redis":"ok"' not in ready.body:
            problems.append(f"/ready does not report Redis ok: {ready.body[:300]!r}")
    if problems:
        raise RuntimeError("budgets are not in force: " + "; ".join(problems))


@dataclass(frozen=True, slots=True)
class Rig:
    """The running pieces one gateway configuration is measured with."""

    mock_port: int
    gateway_port: int
    key: str
    probe: Probe  # gateway, mock and machine CPU, read at the edges of each gateway window
    bare_port: int | None = None
    bare_probe: Probe | None = None  # the same readings with the bare proxy in the first place


def measure_level(level: Level, options: Options, rig: Rig) -> tuple[Pair, ...]:
    direct = Target.chat(LOOPBACK, rig.mock_port, "mock-model", level.stream)
    via_gateway = Target.chat(LOOPBACK, rig.gateway_port, "bench", level.stream, api_key=rig.key)

    def plan(target: Target) -> LoadPlan:
        c, processes = level.concurrency, options.processes
        return LoadPlan(target, c, options.duration_s, options.warmup_s, processes)

    def bare() -> LoadResult | None:
        if rig.bare_port is None:
            return None
        # The same request and key as the gateway's: the proxy relays both to the mock.
        target = Target.chat(LOOPBACK, rig.bare_port, "mock-model", level.stream,
                             api_key=rig.key)
        return run_load(plan(target), rig.bare_probe)

    pairs = []
    for repeat in range(options.repeats):
        # Alternate the order so slow drift in the machine favours no side.
        if repeat % 2 == 0:
            d = run_load(plan(direct))
            b = bare()
            g = run_load(plan(via_gateway), rig.probe)
        else:
            g = run_load(plan(via_gateway), rig.probe)
            b = bare()
            d = run_load(plan(direct))
        _progress(f"  {level.mode} direct   {describe(d)}")
        if b is not None:
            _progress(f"  {level.mode} bare     {describe(b)}")
        _progress(f"  {level.mode} gateway  {describe(g)}")
        pairs.append(Pair(direct=d, gateway=g, bare=b))
    return tuple(pairs)


def _progress(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


PathRuns = list[PathRun]


def run(options: Options) -> tuple[list[Outcome], PathRuns]:
    outcomes: list[Outcome] = []
    path_runs: PathRuns = []
    with ExitStack() as stack:
        work_dir = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="gw-overhead-")))
        mock_port = free_port()
        mock = stack.enter_context(
            start_mock(mock_port, work_dir, STREAM_TOKENS, STREAM_INTERVAL_MS)
        )
        if options.realistic:
            setup = GatewaySetup.create(work_dir, work_dir / "realistic.yaml", mock_port,
                                        options.budgets, template=REALISTIC_POLICY,
                                        database_url=options.database_url)
        else:
            setup = GatewaySetup.create(work_dir, POLICY_PATH, mock_port, options.budgets,
                                        database_url=options.database_url)
        bare_port = bare_probe = None
        if options.bare:
            bare_port = free_port()
            bare_proxy = stack.enter_context(start_bare_proxy(bare_port, mock_port, work_dir))
            bare_probe = rig_cpu_probe(bare_proxy.pid, mock.pid)
        key = setup.create_key("bench")
        budgets = options.budgets
        if budgets is not None and budgets.redis_url:
            tenant_id, redis_url = setup.tenant_id("bench"), budgets.redis_url
            # Registered now, run last: whatever happens, the shared Redis is left clean.
            stack.callback(lambda: _progress(
                f"deleted {forget_budget_keys(redis_url, tenant_id)} budget keys from Redis"
            ))
        _progress(
            f"mock upstream on :{mock_port}; "
            + (f"bare proxy on :{bare_port}; " if bare_port else "")
            + f"tenant key created; {options.budgets_label}; "
            f"plan ≈ {options.planned_s:.0f} s of measurement"
        )
        for w in options.workers:
            gateway_port = free_port()
            with setup.start_gateway(gateway_port, w) as gateway:
                backend = check_gateway(gateway_port, key, budgets=budgets)
                _progress(f"gateway ({w} workers) on :{gateway_port}, routes to {backend}")
                probe = rig_cpu_probe(gateway.pid, mock.pid)
                rig = Rig(mock_port, gateway_port, key, probe, bare_port, bare_probe)
                for level in options.levels:
                    outcomes.append(Outcome(w, level, measure_level(level, options, rig)))
                if options.anthropic:
                    check_gateway(gateway_port, key, anthropic_path.ANTHROPIC_MODEL)
                    path_runs += anthropic_path.measure_paths(
                        w, gateway_port, key, probe, duration_s=options.duration_s,
                        warmup_s=options.warmup_s, repeats=options.repeats,
                        processes=options.processes, progress=_progress,
                    )
                if options.responses:
                    path_runs += responses_path.measure_paths(
                        w, gateway_port, key, probe, duration_s=options.duration_s,
                        warmup_s=options.warmup_s, repeats=options.repeats,
                        processes=options.processes, progress=_progress,
                    )
    return outcomes, path_runs


def report(
    options: Options,
    command: str,
    machine: Machine,
    outcomes: list[Outcome],
    path_runs: PathRuns,
) -> None:
    workers = options.workers
    print(
        f"\nGateway overhead: {options.duration_s:g} s per run after {options.warmup_s:g} s "
        f"warm-up, median of {options.repeats} repeat(s), {options.budgets_label}\n"
        f"{machine.summary()}; "
        f"load average before the run {machine.load_avg_1m:.2f}\n"
    )
    print(render_text(SUMMARY_HEADERS, summary_rows(outcomes, workers)))
    for w in workers:
        for title, headers, rows in detail_tables(outcomes, w):
            print(f"\n{title}:\n")
            print(render_text(headers, rows))
    for note in error_notes(outcomes):
        print(f"gateway errors: {note}")
    bare = bare_tables(outcomes, options.workers) if options.bare else []
    for title, headers, rows in bare:
        print(f"\n{title}:\n")
        print(render_text(headers, rows))
    claude = [r for r in path_runs if r.comparison == "anthropic"]
    responses = [r for r in path_runs if r.comparison == "responses"]
    if claude:
        print(anthropic_path.report_text(claude))
    if responses:
        print(responses_path.report_text(responses))
    if options.markdown or options.markdown_out:
        info = RunInfo(
            machine=machine,
            command=command,
            duration_s=options.duration_s,
            warmup_s=options.warmup_s,
            repeats=options.repeats,
            loadgen_processes=options.processes,
            stream_tokens=STREAM_TOKENS,
            stream_interval_ms=STREAM_INTERVAL_MS,
        )
        section = markdown_section(info, outcomes, workers)
        for title, headers, rows in bare:
            section += f"\n### {title}\n\n{render_markdown(headers, rows)}\n"
        if claude:
            section += "\n\n" + anthropic_path.report_markdown(claude)
        if responses:
            section += "\n\n" + responses_path.report_markdown(responses)
        if options.markdown:
            print("\n" + section)
        if options.markdown_out:
            options.markdown_out.write_text(section + "\n")
            print(f"\nmarkdown section written to {options.markdown_out}")


def _terminate(signum: int, frame: FrameType | None) -> None:
    # Turn SIGTERM into an exception so that every `with` block stops its subprocess.
    raise SystemExit(128 + signum)


def main() -> int:
    options = parse_args(sys.argv[1:])
    command = shlex.join(["python", "benchmarks/overhead.py", *sys.argv[1:]])
    signal.signal(signal.SIGTERM, _terminate)
    started = time.monotonic()
    machine = describe_machine(BENCH_DIR.parent)  # before our own load raises the load average
    try:
        outcomes, path_runs = run(options)
    except KeyboardInterrupt:
        _progress("interrupted; subprocesses stopped")
        return 130
    except SystemExit:
        _progress("terminated; subprocesses stopped")
        raise
    except (RuntimeError, TimeoutError, OSError) as exc:
        _progress(f"overhead benchmark failed: {exc}")
        return 1
    report(options, command, machine, outcomes, path_runs)
    _progress(f"total time {time.monotonic() - started:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
