"""What the policy declares of a self-hosted engine behind a backend (where it is scraped,
its KV geometry, batch slots, GPUs), grouped apart from what every backend has."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class EngineFacts:
    """A backend's engine, as far as the policy (or its provider kind's defaults) says; each
    None is learned from telemetry or unknown. `Backend.engine` is None where nothing at all
    is declared (an API behind someone else's fleet)."""

    metrics_url: str | None = None  # scraped when set
    dcgm_url: str | None = None  # a DCGM exporter for its GPUs: utilisation, memory used
    kv_bytes_per_token: float | None = None  # from the policy's KV geometry
    max_num_seqs: int | None = None  # batch slots: more concurrent requests queue
    prefill_tokens_per_s: float | None = None  # prior until the rate is measured
    gpu_hourly_usd: float | None = None  # every GPU of the deployment, per hour
    gpu_count: int | None = None  # GPUs in the deployment (tokens per GPU-hour)
    gpu_type: str | None = None  # the policy's name for the GPU (capacity planning)

    def declared(self) -> EngineFacts | None:
        """Itself, or None when it declares nothing (what `Backend.engine` holds then)."""
        return self if self != NO_ENGINE_FACTS else None


NO_ENGINE_FACTS = EngineFacts()
