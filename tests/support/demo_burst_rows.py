"""Audit rows of demo traffic each decided live on the fleet of its moment (quiet, a burst
that fills llama-8b, one that fills both engines, quiet again), as the gateway records them:
what the replay tests and the replay-rate benchmark replay."""

from __future__ import annotations

import random
from dataclasses import replace

from gateway.audit.records import Row, event_row
from gateway.budget.pricing import cost_micro_usd
from gateway.offline.replay.replay import rebuild
from gateway.policy.engine import decide
from gateway.policy.load_state import load_rejected
from gateway.policy.loader import PolicySet
from gateway.types import BackendLoad, BackendState, FleetSnapshot, Usage
from tests.support.audit_events import make_event

NOW_S = 1_000.0
IDLE = FleetSnapshot({}, NOW_S)


def busy(*names: str) -> FleetSnapshot:
    """Every engine named full: its batch slots taken, a queue, the KV cache nearly used."""
    load = BackendLoad(scraped_at_s=NOW_S, engine="vllm", running=16, waiting=40,
                       kv_usage=0.99)
    return FleetSnapshot({n: BackendState(load=load) for n in names}, NOW_S)


def demo_burst_rows(policy: PolicySet, n: int, seed: int) -> list[Row]:
    rng = random.Random(seed)
    phases = [IDLE, busy("llama-8b"), busy("llama-8b", "qwen-32b"), IDLE]
    rows = []
    for i in range(n):
        label, p = rng.choice([("low", 0.1), ("medium", 0.45), ("high", 0.9)])
        sensitive = ("pii",) if rng.random() < 0.1 else ()
        event = make_event(
            request_id=f"t{i}", ts_unix_s=1_795_000_000.0 + i, endpoint="chat/completions",
            requested_model="auto", complexity=label, p_strong=p, sensitivity=sensitive,
            prompt_tokens=rng.randint(20, 3500), max_output_tokens=rng.choice([None, 64, 400]),
            completion_tokens=rng.randint(5, 300), entry_point="chat")
        request, profile, tenant = rebuild(event_row(event))
        decision = decide(request, profile, tenant, phases[i * len(phases) // n], policy,
                          rotation=i)
        backend = decision.primary
        usage = Usage(event.prompt_tokens, event.completion_tokens)
        rows.append(event_row(replace(
            event, backend=backend.name, zone=backend.zone, rule=decision.rule,
            tried=(backend.name,), rejected=decision.rejected, spill_over=decision.spilled,
            load_rejected=load_rejected(decision.rejected),
            cost_micro_usd=cost_micro_usd(usage, backend.price))))
    return rows
