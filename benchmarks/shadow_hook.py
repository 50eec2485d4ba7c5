"""What shadow judging's request-path hook costs: `ShadowJudge.offer()` per finished request,
with no `shadow:` in the policy, with one but the request not sampled, and sampled (queued,
the queue emptied between rounds so it never fills), beside a call to a method that does
nothing as the floor (building the request's values, as the request path has them anyway).

    python benchmarks/shadow_hook.py [--calls 200000]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.append(str(Path(__file__).resolve().parents[1]))  # tests/ helpers

from gateway.policy.loader import PolicySet
from gateway.routing.shadow import ShadowJudge
from tests.support.shadow_requests import finished, shadow_judge, shadow_policy

ROUND = 200  # calls between queue drains


def case(policy: PolicySet) -> tuple[ShadowJudge, Callable[[str], None]]:
    shadow = shadow_judge(queue_size=ROUND)

    def call(request_id: str) -> None:
        shadow.offer(finished(policy, "small", request_id))

    return shadow, call


def per_call_ns(call: Callable[[str], None], shadow: ShadowJudge | None, calls: int) -> float:
    ids = [f"req_{n:024x}" for n in range(calls)]
    samples = []
    for start in range(0, calls, ROUND):
        chunk = ids[start:start + ROUND]
        began = time.perf_counter_ns()
        for request_id in chunk:
            call(request_id)
        samples.append((time.perf_counter_ns() - began) / len(chunk))
        if shadow is not None:
            while not shadow._queue.empty():  # keep it from filling: measure queueing
                shadow._queue.get_nowait()
    return statistics.median(samples)


async def main(calls: int) -> None:
    rows = []

    plain = shadow_policy(None)

    def floor(request_id: str) -> None:
        finished(plain, "small", request_id)

    rows.append(("building the finished request only (floor)", per_call_ns(floor, None, calls)))
    for name, sample in (
        ("no shadow: in the policy", None),
        ("shadow, not sampled (sample 1e-9)", "1e-9"),
        ("shadow, sampled and queued (sample 1)", "1.0"),
    ):
        shadow, call = case(shadow_policy(sample))
        rows.append((name, per_call_ns(call, shadow, calls)))
    base = rows[0][1]
    print(f"| case | ns per call (median of rounds of {ROUND}) | hook alone (ns) |")
    print("|---|---:|---:|")
    for name, ns in rows:
        print(f"| {name} | {ns:,.0f} | {ns - base:,.0f} |")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--calls", type=int, default=200_000)
    asyncio.run(main(parser.parse_args().calls))
