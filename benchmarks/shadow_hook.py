"""What shadow judging's request-path hook costs: `ShadowJudge.offer()` per finished request,
with no `shadow:` in the policy, with one but the request not sampled, and sampled (queued,
the queue emptied between rounds so it never fills), beside a call to a method that does
nothing as the floor.

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
from gateway.policy.store import PolicyStore
from gateway.routing.shadow import ShadowJudge
from gateway.routing.trace import RequestTrace
from gateway.types import Endpoint, Profile, RouteDecision, RouteRequest, TenantContext

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


def case(policy_text: str) -> tuple[ShadowJudge, Callable[[str], None]]:
    policy: PolicySet = parse_policy(policy_text)
    shadow = ShadowJudge(PolicyStore.fixed(policy), {}, NoOutcomes(), queue_size=ROUND)
    small = policy.backends["small"]
    trace = RequestTrace(0.0, decision=RouteDecision(small, (), "default"), backend=small)
    tenant, profile = TenantContext("t", "acme", "k"), Profile(10, None)

    def call(request_id: str) -> None:
        request = RouteRequest(request_id, Endpoint.CHAT, "auto", {"messages": []})
        shadow.offer(tenant, request, profile, trace, b"{}")

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

    def floor(request_id: str) -> None:
        RouteRequest(request_id, Endpoint.CHAT, "auto", {"messages": []})

    rows.append(("building the RouteRequest only (floor)", per_call_ns(floor, None, calls)))
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
