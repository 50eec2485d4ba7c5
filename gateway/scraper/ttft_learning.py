"""Learns one backend's time to first token online from the gateway's own measurements.

Each attempt records the load it met when sent (`TtftInputs`: prefill tokens ahead, requests
ahead, the running batch); its measured TTFT then updates a linear model of TTFT in those
inputs by recursive least squares, with forgetting so the model follows a backend whose
speed drifts. Samples are weighted by 1 / TTFT, so the fit minimises the relative error:
a 20 ms answer predicted at 60 ms counts as much as a 2 s answer predicted at 6 s, which is
what a latency promise and the predicted ÷ measured ratio care about.

Before `MIN_SAMPLES` measurements the router keeps the policy's prior (capacity.py).
"""

from __future__ import annotations

import math
from collections import deque

from gateway.scraper.latency import percentile
from gateway.types import TtftInputs, TtftModel

MIN_SAMPLES = 16  # measurements before the learned model replaces the prior
FORGETTING = 0.995  # each sample's weight decays by this per later sample (~200 remembered)
PRIOR_VARIANCE = 1e4  # wide: the first samples set the coefficients
TOKEN_SCALE = 1000.0  # prefill tokens enter in thousands, keeping the features comparable
ERROR_WINDOW = 128
_FEATURES = 4


def _features(inputs: TtftInputs) -> list[float]:
    return [1.0, inputs.prefill_tokens_ahead / TOKEN_SCALE, float(inputs.requests_ahead),
            float(inputs.running)]


class TtftLearner:
    """Recursive least squares over (1, prefill k-tokens ahead, requests ahead, running)."""

    __slots__ = ("_errors", "_model", "_p", "_theta", "samples")

    def __init__(self) -> None:
        self._theta = [0.0] * _FEATURES
        self._p = [[PRIOR_VARIANCE if i == j else 0.0 for j in range(_FEATURES)]
                   for i in range(_FEATURES)]
        self._errors: deque[float] = deque(maxlen=ERROR_WINDOW)
        self._model: TtftModel | None = None  # cached until the next sample
        self.samples = 0

    def observe(self, inputs: TtftInputs, ttft_s: float) -> None:
        """One measured TTFT of a request that met `inputs` when it was sent."""
        if not math.isfinite(ttft_s) or ttft_s <= 0:
            return
        fitted = self.model()
        if fitted is not None:  # how well the model predicted it, before learning from it
            self._errors.append(abs(math.log(fitted.predict(inputs) / ttft_s)))
        weight = 1.0 / max(ttft_s, 0.005)
        x = [v * weight for v in _features(inputs)]
        y = ttft_s * weight  # = 1: the fit is on the relative error
        p, theta = self._p, self._theta
        px = [sum(p[i][j] * x[j] for j in range(_FEATURES)) for i in range(_FEATURES)]
        denominator = FORGETTING + sum(x[i] * px[i] for i in range(_FEATURES))
        gain = [v / denominator for v in px]
        error = y - sum(theta[i] * x[i] for i in range(_FEATURES))
        for i in range(_FEATURES):
            theta[i] += gain[i] * error
        # Forgetting inflates the covariance of inputs that never vary (no queue at low load)
        # without bound ("wind-up"); past the prior's size it stops.
        forget = FORGETTING if sum(p[i][i] for i in range(_FEATURES)) < PRIOR_VARIANCE else 1.0
        for i in range(_FEATURES):
            for j in range(_FEATURES):
                p[i][j] = (p[i][j] - gain[i] * px[j]) / forget
        self.samples += 1
        self._model = None

    def model(self) -> TtftModel | None:
        """The fitted model once it rests on enough samples, else None (use the prior).
        Load can only add time, so negative load coefficients (noise, or inputs that never
        varied) are read as zero."""
        if self.samples < MIN_SAMPLES:
            return None
        if self._model is not None:
            return self._model
        base, per_token, per_request, per_running = self._theta
        self._model = TtftModel(
            base_s=max(0.0, base),
            per_prefill_token_s=max(0.0, per_token) / TOKEN_SCALE,
            per_request_ahead_s=max(0.0, per_request),
            per_running_s=max(0.0, per_running),
            samples=self.samples,
            error_p90=percentile(self._errors, 0.90),
        )
        return self._model
