"""AuditEvent factory for audit, report and replay tests."""

from __future__ import annotations

import itertools
from dataclasses import replace
from typing import Any

from gateway.types import AuditEvent, Rejection, RejectionKind, TelemetryNote

_ids = itertools.count(1)

BASE = AuditEvent(
    request_id="req",
    ts_unix_s=1_795_000_000.0,  # 2026-11-17
    tenant_id="t-acme",
    key_id="k-acme",
    endpoint="chat.completions",
    requested_model="auto",
    backend="llama-8b",
    upstream_model="meta-llama/Llama-3.1-8B-Instruct",
    rule="default",
    status=200,
    error_type=None,
    prompt_tokens=1200,
    completion_tokens=300,
    cached_tokens=0,
    cost_micro_usd=150,
    duration_s=1.25,
    ttft_s=0.12,
    attempts=1,
    stream=True,
    outcome="ok",
    rejected=(Rejection("gpt-frontier", "quality tier above what is needed",
                        RejectionKind.QUALITY_TIER),),
    predicted_ttft_s=0.1,
    predicted_cost_micro_usd=160,
    tenant_name="acme",
    zone="self_hosted",
    complexity="low",
    p_strong=0.21,
    max_output_tokens=512,
    baseline_cost_micro_usd=6000,
    tried=("llama-8b",),
    telemetry=TelemetryNote(running=3, waiting=0, kv_usage=0.4, prefix_hit_rate=0.5,
                            in_flight=2, age_s=0.3),
)


def make_event(**changes: Any) -> AuditEvent:
    """A realistic event; a fresh request id unless one is given."""
    changes.setdefault("request_id", f"req-{next(_ids)}")
    return replace(BASE, **changes)
