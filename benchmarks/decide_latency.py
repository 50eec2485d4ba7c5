"""How long decide() takes with 20 backends and 50 rules (target: p99 ≤ 50 µs).

    python benchmarks/decide_latency.py [--calls 20000]

Three request shapes: one caught by the first rule (sensitive data), one that walks all 50
rules to the catch-all and orders all 20 backends by cost, one that matches midway with an
SLO and fallbacks. Timed per call with perf_counter_ns after a warm-up.
"""

from __future__ import annotations

import argparse
import gc
import statistics
import time

from gateway.policy.engine import decide
from gateway.policy.loader import PolicySet, parse_policy
from gateway.types import (
    BackendLoad,
    BackendState,
    Complexity,
    Endpoint,
    FleetSnapshot,
    Profile,
    RouteRequest,
    SensitiveSpan,
    TenantContext,
)


def build_policy(backends: int = 20, rules: int = 50) -> PolicySet:
    lines = ["version: 1", "backends:"]
    names = []
    for i in range(backends):
        name = f"b{i:02d}"
        names.append(name)
        external = i % 4 == 3
        lines += [
            f"  - name: {name}", "    provider: " + ("openai" if external else "vllm"),
            f"    base_url: http://10.0.0.{i + 1}:8000/v1", f"    model: m{i}",
            "    zone: " + ("external" if external else "self_hosted"),
            f"    context_window: {8192 * (1 + i % 4)}", f"    quality_tier: {1 + i % 4}",
            f"    latency: {{ttft_ms: {50 + 20 * i}, tpot_ms: {10 + i}}}",
        ]
        if external:
            lines.append(f"    price_per_mtok_usd: {{input: {1 + i / 10}, output: {4 + i / 5}}}")
        else:
            lines.append(f"    gpu: {{type: L4, count: 1, hourly_usd: {0.5 + i / 20}}}")
    lines += ["models:", "  auto: [" + ", ".join(names) + "]", "rules:",
              "  - name: sensitive-home", "    when: {sensitivity: [pii, secret, phi]}",
              "    allow_zones: [self_hosted]", "    objective: fastest"]
    for r in range(1, rules - 2):  # the first rule and the last two are written apart
        kind = r % 5
        when = [
            f"{{tenant: [dept-{r}]}}",
            f"{{tags: [team-{r}], prompt_tokens: {{gt: {r * 100}}}}}",
            f"{{model: [alias-{r}]}}",
            f"{{complexity: [high], max_output_tokens: {{gt: {4000 + r}}}}}",
            f"{{endpoint: [embeddings], tags: [t{r}]}}",
        ][kind]
        lines += [f"  - name: rule-{r}", f"    when: {when}",
                  f"    prefer: [{names[r % backends]}]", "    slo: {ttft_ms: 400}",
                  f"    fallbacks: [{names[(r + 1) % backends]}]"]
    lines += [f"  - name: rule-{rules - 1}", "    when: {tags: [interactive]}",
              "    objective: fastest", "    slo: {ttft_ms: 200, tpot_ms: 20}",
              f"    fallbacks: [{names[0]}, {names[4]}]",
              "  - name: catch-all", "    objective: cheapest",
              "    min_quality_tier: {low: 1, medium: 2, high: 3}"]
    return parse_policy("\n".join(lines) + "\n")


def live_fleet(policy: PolicySet) -> FleetSnapshot:
    """Every self-hosted backend scraped a moment ago, under some load, with requests sent
    since; every API measured by the gateway: what decide() reads on a busy fleet."""
    states = {}
    for i, (name, backend) in enumerate(policy.backends.items()):
        if backend.zone == "self_hosted":
            load = BackendLoad(scraped_at_s=99.5, engine="vllm", running=i % 6,
                               waiting=i % 3 == 0, kv_usage=0.1 * (i % 9),
                               kv_capacity_tokens=200_000, requests_finished_per_s=4.0)
            states[name] = BackendState(load=load, in_flight=i % 5, sent_since_scrape=i % 2,
                                        kv_reserved_tokens=2000 * (i % 2),
                                        prefill_tokens_per_s=9000.0,
                                        decode_tokens_per_s=600.0)
        else:
            states[name] = BackendState(ttft_s=0.4, tpot_s=0.02, in_flight=i % 4)
    return FleetSnapshot(states, 100.0)


def time_calls(
    policy: PolicySet, request: RouteRequest, profile: Profile, calls: int,
    fleet: FleetSnapshot,
) -> list[int]:
    tenant = TenantContext("t", "acme", "k")
    for i in range(1000):
        decide(request, profile, tenant, fleet, policy, i)
    out = []
    gc.disable()
    try:
        for i in range(calls):
            start = time.perf_counter_ns()
            decide(request, profile, tenant, fleet, policy, i)
            out.append(time.perf_counter_ns() - start)
    finally:
        gc.enable()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=20_000)
    args = parser.parse_args()
    policy = build_policy()
    assert len(policy.rules) == 50 and len(policy.backends) == 20
    pii = (SensitiveSpan("email", "pii", 0, 5, 0.99),)
    cases = {
        "first rule (sensitive)": (RouteRequest("r", Endpoint.CHAT, "auto", {}),
                                   Profile(500, 256, Complexity(0.3, "low"), ("pii",), pii)),
        "rule 50 of 50 (SLO, fallbacks)": (
            RouteRequest("r", Endpoint.CHAT, "auto", {}, tags=("interactive",)),
            Profile(1500, 256, Complexity(0.5, "medium"))),
        "catch-all, 20 ordered by cost": (RouteRequest("r", Endpoint.CHAT, "auto", {}),
                                          Profile(2000, 512, Complexity(0.2, "low"))),
    }
    print(f"decide(): 20 backends, 50 rules, {args.calls} calls each\n")
    print(f"{'request':<34} {'fleet':<8} {'p50 µs':>8} {'p99 µs':>8} {'max µs':>8}  rule")
    fleets = {"none": FleetSnapshot(), "live": live_fleet(policy)}
    for label, (request, profile) in cases.items():
        for fleet_name, fleet in fleets.items():
            samples = sorted(time_calls(policy, request, profile, args.calls, fleet))
            p50 = statistics.median(samples) / 1000
            p99 = samples[int(len(samples) * 0.99)] / 1000
            rule = decide(request, profile, TenantContext("t", "acme", "k"), fleet, policy).rule
            print(f"{label:<34} {fleet_name:<8} {p50:>8.1f} {p99:>8.1f} "
                  f"{samples[-1] / 1000:>8.1f}  {rule}")


if __name__ == "__main__":
    main()
