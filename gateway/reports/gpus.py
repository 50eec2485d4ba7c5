"""What each self-hosted deployment's GPUs cost and how many there are, from the policy."""

from __future__ import annotations

from gateway.policy.loader import PolicySet
from gateway.reports.economics import GpuFacts


def gpu_facts(policy: PolicySet) -> dict[str, GpuFacts]:
    return {
        name: GpuFacts(backend.gpu_hourly_usd, backend.gpu_count)
        for name, backend in policy.backends.items()
        if backend.gpu_hourly_usd is not None
    }
