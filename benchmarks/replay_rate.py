"""Policy replay's rate: audit rows re-decided per second under the demo policy, over demo-like
traffic whose bursts saturate the self-hosted pool (so rows carry recorded load state).

Rows are built once as templates with the gateway's own decide() and audit row code
(`--write-templates FILE`), then streamed to the replay as copies with fresh ids and times, so
an older checkout of the gateway can replay the very same rows (`--templates FILE`). Only the
replay is timed, not building the rows.

    python -m benchmarks.replay_rate --write-templates /tmp/rows.json
    python -m benchmarks.replay_rate --templates /tmp/rows.json --rows 1000000
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson

from benchmarks.tables import render_text
from gateway.offline.replay.replay import Replayer
from gateway.package_data import demo_policy_path
from gateway.policy.loader import PolicySet, load_policy

CHUNK = 10_000
TS0_US = 1_795_000_000_000_000


def write_templates(policy: PolicySet, path: Path, count: int) -> None:
    # Imported here: an older checkout replays the file without these names existing.
    from tests.support.demo_burst_rows import demo_burst_rows

    path.write_bytes(orjson.dumps(demo_burst_rows(policy, count, seed=11)))


def stream(templates: list[dict[str, Any]], count: int) -> Iterator[list[dict[str, Any]]]:
    for start in range(0, count, CHUNK):
        yield [{**templates[i % len(templates)], "request_id": f"r{i}", "ts": TS0_US + i * 1000}
               for i in range(start, min(count, start + CHUNK))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--templates", type=Path, help="rows written by --write-templates")
    parser.add_argument("--write-templates", type=Path)
    parser.add_argument("--template-count", type=int, default=2_000)
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--label", default="this checkout")
    args = parser.parse_args()
    policy = load_policy(demo_policy_path())
    if args.write_templates:
        write_templates(policy, args.write_templates, args.template_count)
        return
    templates = orjson.loads(args.templates.read_bytes())
    replayer = Replayer(policy)
    spent = 0.0
    for chunk in stream(templates, args.rows):
        started = time.perf_counter()
        replayer.add(chunk)
        spent += time.perf_counter() - started
    report = replayer.report("default.yaml", "", "")
    cost = report.cost
    drift = (cost.new_micro_usd - cost.recorded_micro_usd) / max(1, cost.recorded_micro_usd)
    print(render_text(
        ["run", "rows", "replay s", "rows/s", "changed", "cost drift", "decisions"],
        [[args.label, f"{report.rows_read:,}", f"{spent:.2f}", f"{report.rows_read / spent:,.0f}",
          f"{report.changed_share:.2%}", f"{drift:+.2%}", f"{report.decisions:,}"]]))


if __name__ == "__main__":
    main()
