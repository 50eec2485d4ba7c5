"""The live fleet as the router sees it, one flat record per backend: for GET /admin/fleet
and the gateway's own Prometheus gauges (one source, so the two never disagree)."""

from __future__ import annotations

from typing import Any

from gateway.budget.pricing import effective_price
from gateway.policy.capacity import kv_free_tokens, predict_latency, queue_depth
from gateway.policy.loader import PolicySet
from gateway.scraper.ttft_learning import MIN_SAMPLES
from gateway.types import Backend, BackendState


def fleet_view(
    details: dict[str, dict[str, object]], policy: PolicySet
) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for name, backend in policy.backends.items():
        info = details.get(name, {})
        state = info.get("state")
        if not isinstance(state, BackendState):
            state = BackendState()
        load = state.load
        running, waiting = queue_depth(backend, state) if load is not None else (None, None)
        measured = effective_price(backend, state.tokens_per_hour)
        configured = backend.price
        out[name] = {
            "zone": backend.zone,
            "provider": backend.provider,
            "engine": load.engine if load else None,
            "running": load.running if load else None,
            "waiting": load.waiting if load else None,
            "running_blended": running,
            "waiting_blended": waiting,
            "kv_usage": load.kv_usage if load else None,
            "kv_capacity_tokens": load.kv_capacity_tokens if load else None,
            "kv_free_tokens": kv_free_tokens(state),
            "prefix_hit_rate": load.prefix_hit_rate if load else None,
            "prompt_tokens_per_s": load.prompt_tokens_per_s if load else None,
            "generation_tokens_per_s": load.generation_tokens_per_s if load else None,
            "preemptions_per_s": load.preemptions_per_s if load else None,
            "engine_ttft_s": load.ttft_s if load else None,
            "engine_itl_s": load.itl_s if load else None,
            "ttft_s": state.ttft_s,
            "tpot_s": state.tpot_s,
            "ttft_prior_s": backend.ttft_s,
            "tpot_prior_s": backend.tpot_s,
            "circuit": str(state.circuit),
            "consecutive_failures": state.consecutive_failures,
            "error_rate": round(state.error_rate, 4),
            "in_flight": state.in_flight,
            "sent_since_scrape": state.sent_since_scrape,
            "kv_reserved_tokens": state.kv_reserved_tokens,
            "queued_prefill_tokens": state.queued_prefill_tokens,
            "prefill_tokens_per_s_peak": state.prefill_tokens_per_s,
            "decode_tokens_per_s_peak": state.decode_tokens_per_s,
            "tokens_per_hour": state.tokens_per_hour,
            "effective_usd_per_mtok": measured.input_usd if measured else None,
            "configured_usd_per_mtok": (
                {"input": configured.input_usd, "output": configured.output_usd}
                if configured else None
            ),
            "scrape_age_s": info.get("scrape_age_s"),
            "scrape_error": info.get("scrape_error"),
            "scrape_failures": info.get("scrape_failures", 0),
            "latency_samples": info.get("samples", 0),
            # How a TTFT is predicted here: the learned model and its inputs now (a request
            # of no prompt of its own), or the prior until enough measurements exist.
            "ttft_prediction": _ttft_prediction(backend, state, info),
            "mean_generation_tokens": state.mean_generation_tokens,
            "claim_generation_tokens": state.claim_generation_tokens,
            # Prefixes sent here lately (counted as cached) and their share of the prompt
            # tokens sent: what a KV claim's prefix discount rests on.
            "warm_prefixes": len(state.warm_prefixes),
            "warm_prompt_share": round(state.warm_prompt_share, 4),
            "engine_ttft_floor_s": state.engine_ttft_floor_s,
            **{k: v for k, v in info.items() if k.startswith(("ttft_p", "tpot_p"))},
        }
    return out


def _ttft_prediction(
    backend: Backend, state: BackendState, info: dict[str, object]
) -> dict[str, Any]:
    model = state.ttft_model
    latency = predict_latency(backend, state, 0)
    inputs = latency.inputs
    return {
        "source": "learned" if model is not None else "prior",
        "samples": info.get("ttft_learned_samples", 0),
        "min_samples": MIN_SAMPLES,
        "predicted_ttft_s": round(latency.ttft_s, 6),
        "wait_s": round(latency.wait_s, 6),
        "inputs": inputs._asdict() if inputs is not None else None,
        "model": None if model is None else {
            "base_s": model.base_s,
            "per_1k_prefill_tokens_s": model.per_prefill_token_s * 1000,
            "per_request_ahead_s": model.per_request_ahead_s,
            "per_running_s": model.per_running_s,
            "abs_log_error_p90": model.error_p90,
            # measured ÷ predicted of the linear fit lately, folded into the coefficients
            "calibration": model.calibration,
        },
    }
