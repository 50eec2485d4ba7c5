"""Policy hot reload under load: no request may fail while the policy file is rewritten.

    python benchmarks/policy_reload.py [--rewrites 100] [--concurrency 16] [--interval 0.1]

A mock upstream and one gateway worker watching its policy file every 50 ms; a closed-loop
load runs while the file is rewritten `--rewrites` times, valid and invalid alternately (an
invalid version is truncated YAML half of the time and a dangling backend reference the other
half). Prints requests served, failed requests, and the reloads the gateway counted.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import threading
import time
from pathlib import Path

from load_result import LoadResult
from loadgen import LoadPlan, Target, run_load
from services import ADMIN_KEY, LOOPBACK, GatewaySetup, free_port, http_call, start_mock


def valid(mock_port: int, generation: int) -> str:
    return (
        "version: 1\nbackends:\n  - name: mock\n    provider: vllm\n"
        f"    base_url: http://{LOOPBACK}:{mock_port}/v1\n    model: mock-model\n"
        f"    context_window: {32768 + generation}\n    quality_tier: 2\n"
        "models:\n  bench: [mock]\n"
    )


def invalid(mock_port: int, generation: int) -> str:
    if generation % 4 == 1:
        text = valid(mock_port, generation)
        return text[: text.index("base_url") + 12]  # cut mid-line: broken YAML
    return valid(mock_port, generation).replace("bench: [mock]", "bench: [missing]")


def reload_counts(port: int) -> dict[str, int]:
    counts: dict[str, int] = {}
    reply = http_call(port, "/metrics", None, {"authorization": f"Bearer {ADMIN_KEY}"})
    if reply.status != 200:
        raise RuntimeError(f"/metrics on :{port} answered {reply.status}")
    for line in reply.body.decode().splitlines():
        if line.startswith("gateway_policy_reloads_total{"):
            result = line.split('result="')[1].split('"')[0]
            counts[result] = int(float(line.rsplit(" ", 1)[1]))
    return counts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rewrites", type=int, default=100)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--interval", type=float, default=0.1, help="seconds between rewrites")
    args = parser.parse_args()
    if not 1 <= args.rewrites <= 1000 or not 0.06 <= args.interval <= 5:
        parser.error("rewrites must be 1..1000 and interval 0.06..5 s")

    with tempfile.TemporaryDirectory(prefix="gw-reload-") as tmp:
        work = Path(tmp)
        mock_port, gw_port = free_port(), free_port()
        with start_mock(mock_port, work, stream_tokens=8, stream_interval_ms=1.0):
            setup = GatewaySetup.create(work, work / "policy.yaml", mock_port)
            setup.policy_path.write_text(valid(mock_port, 0))
            setup.env["GATEWAY_POLICY_POLL_INTERVAL_S"] = "0.05"
            key = setup.create_key("bench")
            with setup.start_gateway(gw_port, workers=1):
                duration = args.rewrites * args.interval + 1.0
                plan = LoadPlan(Target.chat(LOOPBACK, gw_port, "bench", False, key),
                                args.concurrency, duration, warmup_s=0.5)
                holder: dict[str, object] = {}
                load = threading.Thread(target=lambda: holder.update(result=run_load(plan)))
                load.start()
                time.sleep(1.5)  # into the measured window
                for i in range(args.rewrites):
                    text = valid(mock_port, i) if i % 2 == 0 else invalid(mock_port, i)
                    tmp_path = setup.policy_path.with_suffix(".tmp")
                    tmp_path.write_text(text)
                    os.replace(tmp_path, setup.policy_path)
                    time.sleep(args.interval)
                load.join()
                time.sleep(0.2)
                counts = reload_counts(gw_port)
    result = holder["result"]
    assert isinstance(result, LoadResult)
    print(f"policy rewritten {args.rewrites} times ({args.interval}s apart), valid and invalid "
          f"alternately, under closed-loop load at c={args.concurrency}\n")
    print(f"{'requests ok':>12} {'failed':>7} {'req/s':>7} {'p99 ms':>7} "
          f"{'reloads ok':>11} {'rejected':>9}")
    p99 = result.latency.p99_ms if result.latency else float("nan")
    print(f"{result.ok:>12,} {result.errors:>7} {result.rps:>7,.0f} {p99:>7.2f} "
          f"{counts.get('ok', 0):>11} {counts.get('rejected', 0):>9}")
    if result.errors:
        print("error kinds:", result.error_kinds)


if __name__ == "__main__":
    main()
