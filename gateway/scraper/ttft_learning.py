"""Learns one backend's time to first token online from the gateway's own measurements.

Each attempt records the load it met when sent (`TtftInputs`: prefill tokens ahead, requests
ahead, the running batch); its measured TTFT then updates a linear model of TTFT in those
inputs by recursive least squares, with forgetting so the model follows a backend whose
speed drifts.

The fit is on the relative error, so a 20 ms answer predicted at 60 ms counts as much as a
2 s answer predicted at 6 s. Each sample's squared error is divided by the model's own
prediction for it (its scale, known before the measurement) to the power 1.5 and by the
measurement to the power 0.5. Dividing by the measurement alone, squared, biases the fit low
by a factor of about exp(-1.5 σ²) when TTFT at a given load is log-normally spread by σ (a
saturated engine, where a request may or may not wait for a batch slot; 0.58 at σ = 0.6);
this split is unbiased for the median, which is what a latency promise and the predicted ÷
measured ratio read.

What a linear model cannot express (which of the requests ahead will share the batch and
which wait for a slot, an engine that stalls for a scrape interval) is left in the
recent ratios of measured to predicted TTFT: the model's predictions are scaled by their
median over the last `CALIBRATION_WINDOW` samples, so the median ratio stays near 1 on the
requests the router actually sends there.

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
# Measured ÷ predicted of the last 16 samples: short enough to follow a burst that saturates
# the engine within a few requests (in replays of the routing benchmark's audit records, 16
# kept all 45 backend medians within 0.81-1.34, one just over 1.33; 32 and 64 let a
# saturated one fall to 0.7), long enough that one outlier does not move the median.
CALIBRATION_WINDOW = 16
MIN_CALIBRATION = 8  # ratios before the calibration applies
CALIBRATION_BOUNDS = (0.25, 4.0)  # beyond these the linear fit itself must move
MIN_TTFT_S = 0.005  # below this a measurement's weight is capped (timer resolution)
_FEATURES = 4


def _features(inputs: TtftInputs) -> list[float]:
    return [1.0, inputs.prefill_tokens_ahead / TOKEN_SCALE, float(inputs.requests_ahead),
            float(inputs.running)]


def sample_weight(predicted_s: float, measured_s: float) -> float:
    """The factor each sample's row is scaled by: its squared error is then divided by
    predicted^1.5 × measured^0.5, a relative error whose minimum is the median TTFT at a
    given load (under log-normal spread), not a value biased low as with measured² alone."""
    return 1.0 / (max(predicted_s, MIN_TTFT_S) ** 0.75 * max(measured_s, MIN_TTFT_S) ** 0.25)


def median_calibration(ratios: deque[float] | list[float]) -> float:
    """The factor the linear model's predictions are scaled by: the median of recent
    measured ÷ predicted ratios, bounded; 1 until `MIN_CALIBRATION` exist."""
    if len(ratios) < MIN_CALIBRATION:
        return 1.0
    ordered = sorted(ratios)
    middle = len(ordered) // 2
    median = ordered[middle] if len(ordered) % 2 else (
        math.sqrt(ordered[middle - 1] * ordered[middle])
    )
    low, high = CALIBRATION_BOUNDS
    return min(high, max(low, median))


class TtftLearner:
    """Recursive least squares over (1, prefill k-tokens ahead, requests ahead, running),
    scaled by the median of recent measured ÷ predicted ratios."""

    __slots__ = ("_errors", "_model", "_p", "_ratios", "_theta", "samples")

    def __init__(self) -> None:
        self._theta = [0.0] * _FEATURES
        self._p = [[PRIOR_VARIANCE if i == j else 0.0 for j in range(_FEATURES)]
                   for i in range(_FEATURES)]
        self._errors: deque[float] = deque(maxlen=ERROR_WINDOW)
        self._ratios: deque[float] = deque(maxlen=CALIBRATION_WINDOW)
        self._model: TtftModel | None = None  # cached until the next sample
        self.samples = 0

    def observe(self, inputs: TtftInputs, ttft_s: float) -> None:
        """One measured TTFT of a request that met `inputs` when it was sent."""
        if not math.isfinite(ttft_s) or ttft_s <= 0:
            return
        fitted = self.model()
        reference = ttft_s  # until the model stands, the measurement is its own scale
        if fitted is not None:  # how well the model predicted it, before learning from it
            self._errors.append(abs(math.log(fitted.predict(inputs) / ttft_s)))
            reference = self._linear(inputs)
            self._ratios.append(ttft_s / reference)
        weight = sample_weight(reference, ttft_s)
        x = [v * weight for v in _features(inputs)]
        y = ttft_s * weight
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
        varied) are read as zero; the calibration scales every coefficient."""
        if self.samples < MIN_SAMPLES:
            return None
        if self._model is not None:
            return self._model
        base, per_token, per_request, per_running = (max(0.0, v) for v in self._theta)
        scale = median_calibration(self._ratios)
        self._model = TtftModel(
            base_s=base * scale,
            per_prefill_token_s=per_token * scale / TOKEN_SCALE,
            per_request_ahead_s=per_request * scale,
            per_running_s=per_running * scale,
            samples=self.samples,
            error_p90=percentile(self._errors, 0.90),
            calibration=scale,
        )
        return self._model

    def _linear(self, inputs: TtftInputs) -> float:
        """The linear fit's own prediction, before calibration."""
        return max(MIN_TTFT_S, sum(max(0.0, t) * v for t, v in
                                   zip(self._theta, _features(inputs), strict=True)))
