"""The classifier the gateway ships with: exact tokens, the trained complexity and task-type
models and the built-in sensitivity detectors. Built by the composition root and the CLI,
nowhere else."""

from __future__ import annotations

from concurrent.futures import Executor
from pathlib import Path

from gateway.classify.complexity import ComplexityModel
from gateway.classify.profiler import ExtraFinder, RequestClassifier
from gateway.classify.sensitivity import SensitivityScanner
from gateway.classify.task_type import TaskModel
from gateway.classify.tokens import TokenCounter


def standard_classifier(
    executor: Executor | None = None, parallelism: int = 1, extra: ExtraFinder | None = None,
    task_model: Path | None = None,
) -> RequestClassifier:
    """`extra`: a second opinion on sensitivity (Presidio) run beside the built-in scan;
    `task_model`: a task-type model fitted to an organisation's own prompts (`gateway
    classifier fit-tasks`) in place of the shipped one. Raises TaskModelError, naming the
    file, where it cannot be used."""
    return RequestClassifier(
        TokenCounter(executor=executor, parallelism=parallelism),
        ComplexityModel.load(),
        SensitivityScanner(),
        executor,
        parallelism,
        extra,
        TaskModel.load(task_model),
    )
