"""How well a router trades strong-model calls for quality: RouteLLM's PGR curve, APGR,
calls-to-reach-95 % and cost saved, as pure functions of per-prompt scores and outcomes."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]


@dataclass(frozen=True, slots=True)
class RoutingCurve:
    """Quality against the share of prompts sent to the strong model, as a polyline.

    The router sends the highest-scoring prompts to the strong model first. Prompts with equal
    scores cannot be told apart, so a tie group is one straight segment: the expected quality
    if the threshold split the group at random. This makes a constant score (no information)
    a straight line from weak to strong quality, APGR exactly 0.5.
    """

    strong_share: FloatArray  # x from 0 to 1, increasing
    quality: FloatArray  # mean score of the model each prompt was sent to, at each x
    weak_quality: float  # all prompts to the weak model
    strong_quality: float  # all prompts to the strong model

    @property
    def pgr(self) -> FloatArray:
        """Performance gap recovered at each point: 0 = weak quality, 1 = strong quality."""
        return (self.quality - self.weak_quality) / (self.strong_quality - self.weak_quality)


@dataclass(frozen=True, slots=True)
class RouterReport:
    """The headline numbers of one router on one data set."""

    apgr: float
    calls_to_95: float  # smallest share of strong calls reaching 95 % of strong quality
    cost_saved: float  # share of the all-strong cost saved at that point


def routing_curve(
    scores: FloatArray, weak_scores: FloatArray, strong_scores: FloatArray
) -> RoutingCurve:
    scores = np.asarray(scores, dtype=np.float64)
    weak = np.asarray(weak_scores, dtype=np.float64)
    strong = np.asarray(strong_scores, dtype=np.float64)
    n = len(scores)
    if n == 0 or len(weak) != n or len(strong) != n:
        raise ValueError("scores, weak_scores and strong_scores must be non-empty, equal length")
    weak_quality = float(weak.mean())
    strong_quality = float(strong.mean())
    if math.isclose(weak_quality, strong_quality):
        raise ValueError("weak and strong quality are equal: PGR is undefined")
    order = np.argsort(-scores, kind="stable")
    sorted_scores = scores[order]
    # Sending prompt i to the strong model changes total quality by strong_i - weak_i.
    gain = np.concatenate(([0.0], np.cumsum((strong - weak)[order])))
    group_ends = np.flatnonzero(sorted_scores[1:] != sorted_scores[:-1]) + 1
    cuts = np.concatenate(([0], group_ends, [n]))
    return RoutingCurve(
        strong_share=cuts / n,
        quality=weak_quality + gain[cuts] / n,
        weak_quality=weak_quality,
        strong_quality=strong_quality,
    )


def apgr(curve: RoutingCurve) -> float:
    """Area under the PGR curve over the strong-call share 0..1 (random routing: 0.5)."""
    return float(np.trapezoid(curve.pgr, curve.strong_share))


def apgr_interval(scores: FloatArray, weak: FloatArray, strong: FloatArray, draws: int = 1000,
                  seed: int = 0) -> tuple[float, float]:
    """90 % percentile-bootstrap interval of the APGR over prompts. Draws on which the strong
    model is no better than the weak are skipped (PGR is undefined there); (nan, nan) when
    every draw is."""
    rng = np.random.default_rng(seed)
    values = []
    for _ in range(draws):
        pick = rng.integers(0, len(scores), len(scores))
        if strong[pick].mean() > weak[pick].mean():
            values.append(apgr(routing_curve(scores[pick], weak[pick], strong[pick])))
    if not values:
        return math.nan, math.nan
    low, high = np.quantile(values, [0.05, 0.95])
    return float(low), float(high)


def calls_to_reach(curve: RoutingCurve, fraction_of_strong: float = 0.95) -> float:
    """Smallest share of strong calls whose quality reaches `fraction_of_strong` × the strong
    model's quality, interpolated along the curve (1.0 at worst: all-strong reaches it)."""
    target = fraction_of_strong * curve.strong_quality
    x, q = curve.strong_share, curve.quality
    if q[0] >= target:
        return 0.0
    above = np.flatnonzero(q >= target)
    if len(above) == 0:
        return 1.0
    i = int(above[0])
    # Linear within the segment (x[i-1], q[i-1]) → (x[i], q[i]), where q crosses the target.
    share = x[i - 1] + (target - q[i - 1]) * (x[i] - x[i - 1]) / (q[i] - q[i - 1])
    return float(share)


def strong_mask(scores: FloatArray, share: float) -> BoolArray:
    """Which prompts go to the strong model when the top `share` by score do (ties: by order)."""
    n = len(scores)
    count = min(n, math.ceil(share * n - 1e-9))
    mask = np.zeros(n, dtype=np.bool_)
    mask[np.argsort(-np.asarray(scores, dtype=np.float64), kind="stable")[:count]] = True
    return mask


def cost_saved(
    to_strong: BoolArray,
    tokens: npt.NDArray[np.int64],
    weak_usd_per_mtok: float,
    strong_usd_per_mtok: float,
) -> float:
    """Share of the all-strong cost saved by this routing, each prompt costing tokens × price.

    An offline ratio for comparing routers, not billing: one blended price per model and
    whatever token counts the caller estimates (the CLI uses prompt tokens only).
    """
    tokens_f = np.asarray(tokens, dtype=np.float64)
    all_strong = float(tokens_f.sum()) * strong_usd_per_mtok
    if all_strong <= 0:
        raise ValueError("no tokens: cost is zero either way")
    routed = float(tokens_f[to_strong].sum()) * strong_usd_per_mtok + float(
        tokens_f[~to_strong].sum()
    ) * weak_usd_per_mtok
    return 1.0 - routed / all_strong


def report_router(
    scores: FloatArray,
    weak_scores: FloatArray,
    strong_scores: FloatArray,
    tokens: npt.NDArray[np.int64],
    weak_usd_per_mtok: float,
    strong_usd_per_mtok: float,
) -> RouterReport:
    curve = routing_curve(scores, weak_scores, strong_scores)
    share = calls_to_reach(curve, 0.95)
    mask = strong_mask(scores, share)
    return RouterReport(
        apgr=apgr(curve),
        calls_to_95=share,
        cost_saved=cost_saved(mask, tokens, weak_usd_per_mtok, strong_usd_per_mtok),
    )
