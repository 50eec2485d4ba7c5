"""Why the router did what it did in one run, from the gateway's own audit records (one JSON
line per request): why requests spilled over, how often it sent to a backend it had judged
saturated, how often prefix affinity decided, and how the prediction compared to the result.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

import orjson


@dataclass(frozen=True, slots=True)
class Diagnosis:
    decisions: int  # measured requests with an audit record
    spilled: int
    # Why each self-hosted candidate was judged unable to take a spilled request, by kind.
    spill_reasons: dict[str, int]
    degraded_sends: int  # sent to a self-hosted backend judged saturated (nothing better left)
    affinity: int  # decisions where prefix (or session) affinity chose the replica
    predicted_ttft_median_ratio: float | None  # median of predicted ÷ measured TTFT (gateway)
    # The same per self-hosted backend, and the 90th percentile of |log(predicted ÷ measured)|
    # over the self-hosted requests (0.29 = within a factor of 1.33 for 90 % of them).
    predicted_ttft_ratio_by_backend: dict[str, float] | None = None
    predicted_ttft_abs_log_p90: float | None = None
    slo_miss: int = 0  # requests whose record says the rule's TTFT target was not promised


def reason_kind(reason: str) -> str:
    if reason.startswith("KV cache"):
        return "KV full"
    if reason.startswith("saturated"):
        return "queue > max_waiting"
    if reason.startswith("predicted TTFT") or reason.startswith("predicted time"):
        return "SLO miss predicted"
    if reason.startswith("unhealthy"):
        return "circuit open"
    if reason.startswith("metrics stale"):
        return "stale metrics"
    return "other"


class AuditTail:
    """Reads the audit file from where the previous read stopped."""

    def __init__(self, path: Path) -> None:
        self._path = path
        self._offset = 0

    def read(self) -> list[dict[str, object]]:
        try:
            with self._path.open("rb") as f:
                f.seek(self._offset)
                data = f.read()
        except FileNotFoundError:
            return []
        end = data.rfind(b"\n") + 1  # a line still being written waits for the next read
        self._offset += end
        return [orjson.loads(line) for line in data[:end].splitlines() if line.strip()]


def diagnose(
    records: Iterable[Mapping[str, object]], request_ids: set[str], self_hosted: set[str],
    base_name: Mapping[str, str],
) -> Diagnosis:
    decisions = spilled = degraded = affinity = 0
    reasons: Counter[str] = Counter()
    ratios: list[float] = []
    by_backend: dict[str, list[float]] = {}
    slo_miss = 0
    for record in records:
        if record.get("request_id") not in request_ids:
            continue
        decisions += 1
        backend = base_name.get(str(record.get("backend")), str(record.get("backend")))
        rejected = record.get("rejected") or []
        judged = {}
        for item in rejected if isinstance(rejected, list) else []:
            if isinstance(item, dict):
                name = base_name.get(str(item.get("backend")), str(item.get("backend")))
                judged[name] = str(item.get("reason", ""))
        if record.get("spill_over"):
            spilled += 1
            reasons.update(reason_kind(r) for n, r in judged.items() if n in self_hosted)
        elif backend in judged and backend in self_hosted:
            degraded += 1
        if record.get("affinity"):
            affinity += 1
        if record.get("slo_miss"):  # the JSON audit log: the AuditEvent's own field
            slo_miss += 1
        predicted, measured = record.get("predicted_ttft_s"), record.get("ttft_s")
        if (isinstance(predicted, float | int) and isinstance(measured, float | int)
                and measured > 0 and predicted > 0):
            ratios.append(predicted / measured)
            if backend in self_hosted:
                by_backend.setdefault(backend, []).append(predicted / measured)
    ratios.sort()
    home = sorted(abs(math.log(r)) for values in by_backend.values() for r in values)
    return Diagnosis(
        decisions=decisions,
        spilled=spilled,
        spill_reasons=dict(reasons),
        degraded_sends=degraded,
        affinity=affinity,
        predicted_ttft_median_ratio=ratios[len(ratios) // 2] if ratios else None,
        predicted_ttft_ratio_by_backend={
            name: sorted(values)[len(values) // 2] for name, values in sorted(by_backend.items())
        },
        predicted_ttft_abs_log_p90=home[min(len(home) - 1, int(0.9 * len(home)))]
        if home else None,
        slo_miss=slo_miss,
    )
