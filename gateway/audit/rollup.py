"""Folds audit rows into the daily rollups reports read: counters per (day, tenant, model,
backend, rule), latency histograms, the minutes each backend was busy, its load per minute and
the sizes of its requests. Pure; the repository adds these to what is stored, in the same
transaction as the rows."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any

from gateway.audit.records import Row, ts_datetime

# Log-spaced latency buckets, each 10 % wider than the last, from 1 ms: bucket b holds
# [1.1^b, 1.1^(b+1)) ms, so a percentile read from them is within 10 %.
BUCKET_GROWTH = 1.1
MAX_BUCKET = 200  # 1.1^200 ms is ~2 × 10^8 ms: beyond any timeout
_LOG_GROWTH = math.log(BUCKET_GROWTH)

# Latency histograms are also kept summed over every tenant under this id, so a fleet-wide
# percentile reads one row per bucket and day instead of one per tenant.
ALL_TENANTS = "*"
DailyKey = tuple[date, str, str, str, str]  # day, tenant_id, requested_model, backend, rule
LatencyKey = tuple[date, str, str, str, int]  # day, tenant_id, backend, metric, bucket
SizeKey = tuple[date, str, str, int]  # day, backend, "prompt" | "output", bucket
COUNTERS = (
    "requests", "errors", "prompt_tokens", "completion_tokens", "cached_tokens",
    "cost_micro_usd", "baseline_cost_micro_usd", "sensitive", "sensitive_external", "redacted",
    "sensitive_approved", "spill_overs", "ttft_count", "kv_hit_count", "decode_tokens",
)
SUMS = ("duration_s_sum", "ttft_s_sum", "decode_s_sum", "kv_hit_sum")


def latency_bucket(seconds: float) -> int:
    ms = seconds * 1000.0
    if ms < 1.0:
        return 0
    return min(MAX_BUCKET, int(math.log(ms) / _LOG_GROWTH))


def bucket_seconds(bucket: int) -> float:
    """A bucket's representative value: its geometric middle."""
    return BUCKET_GROWTH ** (bucket + 0.5) / 1000.0


def token_bucket(tokens: int) -> int:
    """The same 10 %-wide log buckets for sizes: bucket b holds [1.1^b, 1.1^(b+1)) tokens."""
    if tokens < 1:
        return 0
    return min(MAX_BUCKET, int(math.log(tokens) / _LOG_GROWTH))


def bucket_tokens(bucket: int) -> float:
    """A size bucket's top: a percentile read from it never understates the size."""
    return BUCKET_GROWTH ** (bucket + 1)


def percentile_bucket(histogram: dict[int, int], q: float) -> int | None:
    """The bucket holding the q-quantile (0..1) of a bucket → count histogram."""
    total = sum(histogram.values())
    if total == 0:
        return None
    rank = q * total
    seen = 0
    for bucket in sorted(histogram):
        seen += histogram[bucket]
        if seen >= rank:
            return bucket
    return max(histogram)


def percentile(histogram: dict[int, int], q: float) -> float | None:
    """The q-quantile (0..1) of a latency histogram, in seconds."""
    bucket = percentile_bucket(histogram, q)
    return None if bucket is None else bucket_seconds(bucket)


@dataclass
class Rollup:
    daily: dict[DailyKey, dict[str, Any]] = field(default_factory=dict)
    latency: dict[LatencyKey, int] = field(default_factory=dict)
    busy: set[tuple[str, datetime]] = field(default_factory=set)  # (backend, UTC minute)
    # (backend, UTC minute) → [requests started, request-seconds inside, tokens finished]
    load: dict[tuple[str, datetime], list[float]] = field(default_factory=dict)
    sizes: dict[SizeKey, int] = field(default_factory=dict)  # token-size histograms

    def add(self, row: Row) -> None:
        start = ts_datetime(row["ts"] - round(row["duration_s"] * 1_000_000))
        when = ts_datetime(row["ts"])
        day = when.date()
        backend = row["backend"] or ""
        key = (day, row["tenant_id"], row["requested_model"], backend, row["rule"] or "")
        entry = self.daily.get(key)
        if entry is None:
            entry = dict.fromkeys(COUNTERS, 0) | dict.fromkeys(SUMS, 0.0)
            entry["tenant"], entry["zone"] = row["tenant"], row["zone"] or ""
            self.daily[key] = entry
        ok = row["status"] < 400
        entry["requests"] += 1
        entry["errors"] += 0 if ok else 1
        entry["prompt_tokens"] += row["prompt_tokens"]
        entry["completion_tokens"] += row["completion_tokens"]
        entry["cached_tokens"] += row["cached_tokens"]
        entry["cost_micro_usd"] += row["cost_micro_usd"]
        entry["baseline_cost_micro_usd"] += row["baseline_cost_micro_usd"] or 0
        if row["sensitivity"]:
            entry["sensitive"] += 1
            if row["zone"] and row["zone"] != "self_hosted":
                entry["sensitive_external"] += 1
        entry["redacted"] += 1 if row["redacted"] else 0
        entry["sensitive_approved"] += 1 if (row.get("trace") or {}).get("approval") else 0
        entry["spill_overs"] += 1 if row["spill_over"] else 0
        entry["duration_s_sum"] += row["duration_s"]
        ttft = row["ttft_s"]
        if ttft is not None:
            entry["ttft_s_sum"] += ttft
            entry["ttft_count"] += 1
            if ok and row["completion_tokens"] > 1:
                entry["decode_s_sum"] += max(0.0, row["duration_s"] - ttft)
                # The first token came with the TTFT: the rest were decoded in decode_s.
                entry["decode_tokens"] += row["completion_tokens"] - 1
        telemetry = (row.get("trace") or {}).get("telemetry") or {}
        hit = telemetry.get("prefix_hit_rate")
        if hit is not None:
            entry["kv_hit_sum"] += hit
            entry["kv_hit_count"] += 1
        if not backend:
            return
        if ok:
            for tenant in (row["tenant_id"], ALL_TENANTS):
                self._count((day, tenant, backend, "total", latency_bucket(row["duration_s"])))
                if ttft is not None:
                    self._count((day, tenant, backend, "ttft", latency_bucket(ttft)))
        minute = start.replace(second=0, microsecond=0)
        self._load(backend, minute)[0] += 1
        self._load(backend, when.replace(second=0, microsecond=0))[2] += row["completion_tokens"]
        begin, end = start.timestamp(), when.timestamp()
        while minute <= when:
            self.busy.add((backend, minute))
            edge = minute.timestamp()
            # The request's seconds inside this minute: summed and ÷ 60, the mean in flight.
            self._load(backend, minute)[1] += max(0.0, min(end, edge + 60) - max(begin, edge))
            minute = minute.fromtimestamp(edge + 60, minute.tzinfo)
        if ok:
            for metric, tokens in (("prompt", row["prompt_tokens"]),
                                   ("output", row["completion_tokens"])):
                key = (day, backend, metric, token_bucket(tokens))
                self.sizes[key] = self.sizes.get(key, 0) + 1

    def _load(self, backend: str, minute: datetime) -> list[float]:
        found = self.load.get((backend, minute))
        if found is None:
            found = self.load[(backend, minute)] = [0, 0.0, 0]
        return found

    def _count(self, key: LatencyKey) -> None:
        self.latency[key] = self.latency.get(key, 0) + 1


def rollup(rows: list[Row]) -> Rollup:
    result = Rollup()
    for row in rows:
        result.add(row)
    return result
