"""The shipped complexity model: it loads, scores bounded and finite on any text, keeps its
cuts ordered, and is refused beside an encoder table it was not trained on."""

from __future__ import annotations

import copy
import json
import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gateway.classify.complexity_encoder import (
    DEFAULT_MODEL_PATH,
    SIGNALS,
    EncoderComplexityModel,
    EncoderModelError,
)
from gateway.classify.encoder_paths import DEFAULT_TABLE_PATH
from gateway.classify.standard import load_complexity
from gateway.classify.static_encoder import StaticEncoder, read_table
from gateway.cli.demo_workload import HARD, QUESTIONS
from gateway.offline.distillation.encoder_distill import write_table


def _document() -> dict:
    return json.loads(DEFAULT_MODEL_PATH.read_text(encoding="utf-8"))


def test_the_shipped_model_loads_with_ordered_cuts_from_its_reference_mix() -> None:
    model = EncoderComplexityModel.load()
    low, high = model.thresholds
    assert 0.0 < low < high < 1.0
    reference = model.document["training"]["reference"]
    assert reference["quantiles"] == [0.5, 0.8] and reference["prompts"] >= 200


@settings(max_examples=60, deadline=None)
@given(st.text(max_size=3000))
def test_any_text_gets_a_probability(text: str) -> None:
    model = EncoderComplexityModel.load()
    p = model.p_strong(text)
    assert 0.0 < p < 1.0 and math.isfinite(p)
    assert model.assess(text).label in ("low", "medium", "high")


def test_a_plainly_hard_request_outranks_small_talk() -> None:
    model = EncoderComplexityModel.load()
    easy = model.p_strong("Hi! How are you today?")
    hard = model.p_strong("Derive the Black-Scholes equation from a delta-hedged portfolio"
                          " and solve it for a European call option.")
    assert hard > easy


def test_the_demo_rates_no_everyday_question_high_and_most_hard_requests_high() -> None:
    """The demo's promise: everyday questions, programming ones included, stay off the
    frontier API, and hard requests reach it because they are hard. (Before the contrast saw
    everyday programming questions, "How do I reverse a list in Python…" was `high`.)"""
    model = EncoderComplexityModel.load()
    everyday = [q for q in QUESTIONS if model.assess(q).label == "high"]
    assert everyday == []
    hard = sum(model.assess(q).label == "high" for q in HARD)
    assert hard > len(HARD) // 2, f"{hard} of {len(HARD)} hard requests rated high"


def test_a_model_beside_another_table_is_refused_in_one_line(tmp_path: Path) -> None:
    rows, scales, meta = read_table(DEFAULT_TABLE_PATH)
    other = tmp_path / "other.npz"
    write_table(other, rows, scales * 2, {**meta, "digest": "f" * 64, "name": "other/static"})
    with pytest.raises(EncoderModelError, match="retrain it") as caught:
        load_complexity(None, other)
    assert "\n" not in str(caught.value) and "other/static" in str(caught.value)


def test_a_malformed_model_is_refused(tmp_path: Path) -> None:
    encoder = StaticEncoder.load()
    for breakage in ("depth", "calibration", "token_weights"):
        document = copy.deepcopy(_document())
        if breakage == "depth":
            document["depth"]["weights"] = document["depth"]["weights"][:10]
        elif breakage == "calibration":
            document["calibration"]["slope"] = float("nan")
        else:
            document["token_weights"]["sha256"] = "0" * 64
        with pytest.raises(EncoderModelError, match="malformed"):
            EncoderComplexityModel.from_document(document, encoder)
    with pytest.raises(EncoderModelError, match="format"):
        EncoderComplexityModel.from_document({"format": "x"}, encoder)
    path = tmp_path / "m.json"
    path.write_text("{not json", encoding="utf-8")
    with pytest.raises(EncoderModelError, match=str(path)):
        load_complexity(path)


def test_signals_standardise_to_the_reference_mix_numbers() -> None:
    model = EncoderComplexityModel.load()
    signals = model.signals("Write a haiku about autumn.")
    standardised = model.standardised(signals)
    for value, raw, name in zip(standardised, signals.values(), SIGNALS, strict=True):
        mean, sd = model.document["standardise"][name]
        assert value == pytest.approx((raw - mean) / sd)
    assert np.isfinite(model.score("Write a haiku about autumn."))
