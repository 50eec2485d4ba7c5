"""The router's fitting matrix: scaling the encoder block changes what a weight costs, never
what the exported raw weights compute."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import sparse
from sklearn.linear_model import LogisticRegression

from gateway.offline.training.router_fit import ENCODER_SCALES, _choose_fit, _Design


def design(rows: int = 120, seed: int = 3) -> tuple[_Design, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    names = ["#len", "complexity_score", *(f"enc:{i}" for i in range(16))]
    raw = rng.normal(size=(rows, len(names)))
    won = (raw[:, 0] + 0.5 * raw[:, 2] + rng.normal(scale=0.5, size=rows) > 0).astype(int)
    mean, spread = raw.mean(axis=0), raw.std(axis=0)
    x = sparse.csr_matrix((raw - mean) / spread)
    return _Design(x, names, mean, spread, []), raw, won


@pytest.mark.parametrize("scale", ENCODER_SCALES)
def test_exported_weights_score_raw_inputs_as_the_fitted_model_does(scale: float) -> None:
    full, raw, won = design()
    scaled = full.with_encoder_scale(scale)
    assert scaled.encoder_scale == scale
    model = LogisticRegression(C=0.3, max_iter=5000).fit(scaled.x, won)
    dense, _, intercept = scaled.export(model, slope=1.0, offset=0.0)
    weights = np.array([dense.get(n, 0.0) for n in scaled.dense_names])
    # Exported weights are rounded to 6 significant digits.
    np.testing.assert_allclose(intercept + raw @ weights, model.decision_function(scaled.x),
                               atol=1e-4)


def test_only_the_encoder_columns_shrink() -> None:
    full, _, _ = design()
    scaled = full.with_encoder_scale(0.25).with_encoder_scale(0.5)  # from the current scale
    ratio = scaled.x.toarray() / full.x.toarray()
    np.testing.assert_allclose(ratio[:, :2], 1.0)
    np.testing.assert_allclose(ratio[:, 2:], 0.5)


def test_cross_validation_picks_among_the_designs_and_returns_its_scores() -> None:
    full, _, won = design(rows=200)
    chosen, penalty, oof = _choose_fit([full.with_encoder_scale(s) for s in ENCODER_SCALES],
                                       won)
    assert chosen.encoder_scale in ENCODER_SCALES and penalty > 0
    assert oof.shape == won.shape
    # The out-of-fold scores rank the outcomes they were not fitted on.
    assert oof[won == 1].mean() > oof[won == 0].mean()
