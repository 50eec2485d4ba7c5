"""Which of a decision's rejections came from the fleet's load at that moment (saturation,
open circuits, stale metrics, a predicted latency miss) rather than from the policy itself:
what an audit row keeps so that a replay can put the same load back."""

from __future__ import annotations

from collections.abc import Iterable

from gateway.types import Rejection


def load_rejected(rejected: Iterable[Rejection]) -> tuple[str, ...]:
    """The backends the decision moved last (or dropped) because of their load, in order."""
    return tuple(dict.fromkeys(r.backend for r in rejected if r.kind.by_load))
