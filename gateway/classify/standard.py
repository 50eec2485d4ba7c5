"""The classifier the gateway ships with: exact tokens, the trained complexity and task-type
models and the built-in sensitivity detectors. Built by the composition root and the CLI,
nowhere else."""

from __future__ import annotations

from concurrent.futures import Executor
from pathlib import Path

from gateway.classify.complexity_encoder import EncoderComplexityModel, EncoderModelError
from gateway.classify.profiler import ExtraFinder, RequestClassifier
from gateway.classify.sensitivity import SensitivityScanner
from gateway.classify.task_type import TaskModel
from gateway.classify.tokens import TokenCounter


def standard_classifier(
    executor: Executor | None = None, parallelism: int = 1, extra: ExtraFinder | None = None,
    task_model: Path | None = None, complexity_model: Path | None = None,
    encoder_table: Path | None = None,
) -> RequestClassifier:
    """`extra`: a second opinion on sensitivity (Presidio) run beside the built-in scan;
    `task_model`: a task-type model fitted to an organisation's own prompts (`gateway
    classifier fit-tasks`) in place of the shipped one. Raises TaskModelError, naming the
    file, where it cannot be used; `complexity_model` / `encoder_table`: a retrained
    complexity model or static encoder table in place of the shipped ones (EncoderModelError
    names the file where either cannot be used)."""
    return RequestClassifier(
        TokenCounter(executor=executor, parallelism=parallelism),
        load_complexity(complexity_model, encoder_table),
        SensitivityScanner(),
        executor,
        parallelism,
        extra,
        TaskModel.load(task_model),
    )


def load_complexity(model: Path | None = None,
                    encoder_table: Path | None = None) -> EncoderComplexityModel:
    """The complexity model over its encoder table: the shipped ones unless named."""
    from gateway.classify.static_encoder import EncoderTableError, StaticEncoder

    if model is None and encoder_table is None:
        return EncoderComplexityModel.load()
    try:
        encoder = StaticEncoder.load(encoder_table) if encoder_table is not None else None
    except EncoderTableError as exc:
        raise EncoderModelError(str(exc)) from exc
    return EncoderComplexityModel.load(model, encoder)


def load_accurate_model(model: Path | None = None) -> EncoderComplexityModel:
    """The accurate mode's model, over the full MiniLM it was trained with; loads the encoder
    once to check it (onnxruntime installed, the ONNX file the model names): a worker pool
    then holds it. EncoderModelError says, in one line, what is missing."""
    from gateway.classify.encoder_paths import MINILM_COMPLEXITY_PATH
    from gateway.classify.full_encoder import FullEncoder, FullEncoderUnavailable

    try:
        encoder = FullEncoder.load()
    except FullEncoderUnavailable as exc:
        raise EncoderModelError(str(exc)) from exc
    return EncoderComplexityModel.load(model or MINILM_COMPLEXITY_PATH, encoder)


def pooled_accurate_model(model: Path | None = None) -> EncoderComplexityModel:
    """The accurate mode's model for a process whose vectors come from the worker pool: the
    encoder is known by its file's digest, never loaded here."""
    from gateway.classify.complexity_accurate import PooledEncoder
    from gateway.classify.encoder_paths import MINILM_COMPLEXITY_PATH
    from gateway.classify.full_encoder import (
        DIMS,
        FULL_ENCODER_NAME,
        FullEncoderUnavailable,
        default_model_path,
        file_sha256,
    )
    from gateway.classify.static_encoder import EncoderInfo

    try:
        digest = file_sha256(default_model_path())
    except (FullEncoderUnavailable, OSError) as exc:
        raise EncoderModelError(str(exc)) from exc
    encoder = PooledEncoder(EncoderInfo(FULL_ENCODER_NAME, digest, DIMS))
    return EncoderComplexityModel.load(model or MINILM_COMPLEXITY_PATH, encoder)
