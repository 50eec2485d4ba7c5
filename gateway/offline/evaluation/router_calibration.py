"""Where to cut p_strong for a wanted share of strong-model calls, and what each cut costs:
`gateway router calibrate` over a file of prompts or the traffic the audit log recorded."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

DEFAULT_SHARES = (0.1, 0.2, 0.3, 0.4, 0.5)


@dataclass(frozen=True, slots=True)
class Prices:
    weak_usd_per_mtok: float
    strong_usd_per_mtok: float


@dataclass(frozen=True, slots=True)
class CalibrationRow:
    share: float  # wanted share of strong calls
    threshold: float  # `p_strong: {gte: threshold}` sends about that share
    strong_calls: int  # how many requests of this traffic the threshold sends
    cost_usd: float  # the traffic's cost routed so
    saved: float  # share of the all-strong cost saved


def calibrate(p_strong: Sequence[float], tokens: Sequence[int], prices: Prices,
              shares: Sequence[float] = DEFAULT_SHARES) -> list[CalibrationRow]:
    """For each share, the smallest p_strong among the top `share` of requests (ties go to
    the strong side, so the share sent can be a little above the one asked for)."""
    p = np.asarray(p_strong, dtype=np.float64)
    t = np.asarray(tokens, dtype=np.float64)
    if len(p) == 0 or len(p) != len(t):
        raise ValueError("need one token count per score, and at least one request")
    order = np.sort(p)[::-1]
    all_strong = float(t.sum()) * prices.strong_usd_per_mtok / 1e6
    rows = []
    for share in shares:
        count = max(1, math.ceil(share * len(p) - 1e-9))
        threshold = float(order[count - 1])
        strong = p >= threshold
        cost = (float(t[strong].sum()) * prices.strong_usd_per_mtok
                + float(t[~strong].sum()) * prices.weak_usd_per_mtok) / 1e6
        rows.append(CalibrationRow(share, threshold, int(strong.sum()), cost,
                                   1.0 - cost / all_strong if all_strong > 0 else 0.0))
    return rows
