"""Why a routing decision set a candidate aside: the kind, which code acts on, and the message,
which people read (audit rows, traces, `policy explain`) and code never parses."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class RejectionKind(StrEnum):
    # The rule's hard filters, the same under any load.
    ZONE = "zone"  # outside the rule's allow_zones
    NOT_ALLOWED = "not_allowed"  # not among the rule's allow_backends
    QUALITY_TIER = "quality_tier"  # below the rule's quality floor
    # The request's size, the same under any load.
    CONTEXT_WINDOW = "context_window"
    # The fleet's load at that moment: the backend is tried last (or, failing closed on stale
    # metrics, not at all). What a replay puts back (AuditEvent.load_rejected).
    STALE_METRICS = "stale_metrics"
    KV_FULL = "kv_full"
    QUEUED = "queued"  # would wait for a batch slot
    CIRCUIT_OPEN = "circuit_open"
    TTFT_TARGET = "ttft_target"  # predicted over the rule's TTFT target
    TPOT_TARGET = "tpot_target"  # predicted over the rule's time-per-token target

    @property
    def by_rule(self) -> bool:
        """The rule itself excluded the backend (zones, allowed backends): it never was a
        candidate, so it neither explains a latency miss nor a request too long."""
        return self in _BY_RULE

    @property
    def by_load(self) -> bool:
        """Set aside for the fleet's load then, not for the policy or the request's size."""
        return self not in _UNDER_ANY_LOAD


_BY_RULE = frozenset({RejectionKind.ZONE, RejectionKind.NOT_ALLOWED})
_UNDER_ANY_LOAD = _BY_RULE | {RejectionKind.QUALITY_TIER, RejectionKind.CONTEXT_WINDOW}


@dataclass(frozen=True, slots=True)
class Rejection:
    backend: str
    reason: str  # in words, as kept in the audit row
    kind: RejectionKind
