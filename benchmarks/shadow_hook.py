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
import time
from collections.abc import Callable
from datetime import datetime

from gateway.outcomes.repository import Judgement
from gateway.policy.loader import PolicySet, parse_policy
from gateway.routing.shadow import ShadowJudge
from gateway.routing.trace import Arrival, Attempts, Finished, Route
from gateway.scraper.fleet import FleetState
from gateway.types import (
    Endpoint,
    FleetSnapshot,
    Profile,
    RouteDecision,
    RouteRequest,
    TenantContext,
    Usage,
)

POLICY = """version: 1
backends:
  - {name: small, provider: vllm, base_url: "http://s:1/v1", model: m, context_window: 100}
  - {name: big, provider: vllm, base_url: "http://b:1/v1", model: m, context_window: 100,
     quality_tier: 4}
models: {auto: [small, big]}
"""
SHADOW = "shadow: {sample: SAMPLE, strong: big, judge: big, daily_usd: 1}\n"
ROUND = 200  # calls between queue drains


class NoOutcomes:
    async def shadow_spend_micro_usd(self, since: datetime) -> int:
        return 0

    async def save_judgement(self, judgement: Judgement) -> None:
        return None


TENANT, PROFILE = TenantContext("t", "acme", "k"), Profile(10, None)


def finished(policy: PolicySet, request_id: str) -> Finished:
    """What the request path hands the hook when a request ends on the small backend."""
    small = policy.backends["small"]
    request = RouteRequest(request_id, Endpoint.CHAT, "auto", {"messages": []})
    arrival = Arrival(TENANT, request, policy.for_request(TENANT, request), 0.0)
    route = Route(RouteDecision(small, (), "default"), FleetSnapshot())
    return Finished(arrival, PROFILE, route, None, Attempts(backend=small), Usage(),
                    body=b"{}")


def case(policy_text: str) -> tuple[ShadowJudge, Callable[[str], None]]:
    policy: PolicySet = parse_policy(policy_text)
    shadow = ShadowJudge({}, FleetState(), NoOutcomes(), queue_size=ROUND)

    def call(request_id: str) -> None:
        shadow.offer(finished(policy, request_id))

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

    plain = parse_policy(POLICY)

    def floor(request_id: str) -> None:
        finished(plain, request_id)

    rows.append(("building the finished request only (floor)", per_call_ns(floor, None, calls)))
    for name, text in (
        ("no shadow: in the policy", POLICY),
        ("shadow, not sampled (sample 1e-9)", POLICY + SHADOW.replace("SAMPLE", "1e-9")),
        ("shadow, sampled and queued (sample 1)", POLICY + SHADOW.replace("SAMPLE", "1.0")),
    ):
        shadow, call = case(text)
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
