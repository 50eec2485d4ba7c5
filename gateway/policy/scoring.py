"""Predicted cost and latency of serving a request on a backend, and ordering by objective.

Latency comes from the backend's live state (engine metrics, the gateway's measurements) when
there is one, otherwise from the policy's priors (see capacity.predict_latency). Output length
is the client's max_tokens, capped at a typical reply length when larger (a 4,096-token cap
rarely means a 4,096-token answer).
"""

from __future__ import annotations

from typing import NamedTuple

from gateway.policy.capacity import ROOM, Pressure, predict_latency
from gateway.policy.rules import Objective
from gateway.policy.token_counting import prompt_tokens_for
from gateway.types import Backend, BackendState, Profile, TtftInputs

TYPICAL_OUTPUT_TOKENS = 256


class Prediction(NamedTuple):
    # A tuple, not a dataclass: decide() builds one per candidate per request.
    backend: Backend
    cost_micro_usd: int
    ttft_s: float
    tpot_s: float
    total_s: float
    pressure: Pressure = ROOM
    wait_s: float = 0.0  # load-induced part of the TTFT
    in_flight: int = 0  # the gateway's own requests there now
    inputs: TtftInputs | None = None  # the load the TTFT prediction read
    learned_samples: int = 0  # 0: the prior predicted the TTFT, else the learned model
    calibration: float = 1.0  # the learned model's median measured ÷ predicted factor


def expected_output_tokens(profile: Profile) -> int:
    requested = profile.max_output_tokens
    return min(requested, TYPICAL_OUTPUT_TOKENS) if requested else TYPICAL_OUTPUT_TOKENS


def predict(
    backend: Backend,
    profile: Profile,
    state: BackendState | None,
    output: int,
    pressure: Pressure = ROOM,
    depth: tuple[int, int] | None = None,
) -> Prediction:
    price = backend.price
    prompt = prompt_tokens_for(backend, profile)
    cost = price.cost_micro_usd(prompt, output) if price is not None else 0
    if state is None:
        ttft, tpot = backend.ttft_s, backend.tpot_s
        return Prediction(backend, cost, ttft, tpot, ttft + tpot * output, pressure)
    # In the gateway's own token count, as the fleet counts the prefill queued ahead and the
    # TTFT model learned it (the backend's tokenizer only prices the request).
    ttft, tpot, wait, inputs, samples, calibration = predict_latency(
        backend, state, profile.prompt_tokens, depth
    )
    return Prediction(
        backend, cost, ttft, tpot, ttft + tpot * output, pressure, wait, state.in_flight,
        inputs, samples, calibration,
    )


def order(predictions: list[Prediction], objective: Objective) -> list[Prediction]:
    """Best first. Each criterion is normalised to 0..1 across the candidates, so weights
    compare like with like; ties keep the policy's order (sorted() is stable)."""
    if len(predictions) < 2:
        return predictions
    if objective.latency == 0 and objective.quality == 0:
        return sorted(predictions, key=_by_cost_then_time)
    if objective.cost == 0 and objective.quality == 0:
        return sorted(predictions, key=_by_time)
    costs = [p.cost_micro_usd for p in predictions]
    times = [p.total_s for p in predictions]
    tiers = [p.backend.quality_tier for p in predictions]
    low_cost, cost_span = min(costs), (max(costs) - min(costs)) or 1
    low_time, time_span = min(times), (max(times) - min(times)) or 1.0
    high_tier, tier_span = max(tiers), (max(tiers) - min(tiers)) or 1
    w_cost = objective.cost / cost_span
    w_time = objective.latency / time_span
    w_tier = objective.quality / tier_span

    def score(p: Prediction) -> float:
        return (
            w_cost * (p.cost_micro_usd - low_cost)
            + w_time * (p.total_s - low_time)
            + w_tier * (high_tier - p.backend.quality_tier)
        )

    return sorted(predictions, key=score)


def by_load(predictions: list[Prediction]) -> list[Prediction]:
    """Least loaded first: the wait the load adds (engine queue, prefill backlog), then KV
    headroom, then the gateway's own in-flight count. Load, not hardware: a replica measured
    fast must not starve one not yet measured. Waits are compared in 5 ms steps so equally
    idle replicas keep the caller's rotation."""
    return sorted(predictions, key=load_key)


def load_key(p: Prediction) -> tuple[int, float, int]:
    return int(p.wait_s * 200), -p.pressure.headroom, p.in_flight


def _by_cost_then_time(p: Prediction) -> tuple[int, int, float, int]:
    # Equal prices (replicas of one deployment) are then told apart by their load.
    return p.cost_micro_usd, *load_key(p)


def _by_time(p: Prediction) -> float:
    return p.total_s
