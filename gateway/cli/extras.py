"""The optional dependency groups (pyproject's extras) that offline commands need, and the one
line a command ends with when its group is not installed."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import ParamSpec, TypeVar

import click

DISTRIBUTION = "llm-routing-gateway"  # pyproject's [project] name: what pip installs
# The top-level modules of the `train` extra; sklearn pulls in scipy, so either can be missing.
TRAIN_MODULES = frozenset({"sklearn", "scipy"})

P = ParamSpec("P")
R = TypeVar("R")


def install_hint(extra: str) -> str:
    return f"pip install '{DISTRIBUTION}[{extra}]'"


ENCODER_EXTRA = install_hint("encoder")
TRAIN_EXTRA = install_hint("train")


def needs_train(command: Callable[P, R]) -> Callable[P, R]:
    """A command's callback that ends in one line naming the `train` extra when scikit-learn
    or scipy is missing (the serving install leaves them out), instead of a traceback."""

    @functools.wraps(command)
    def run(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return command(*args, **kwargs)
        except ModuleNotFoundError as exc:
            if (exc.name or "").partition(".")[0] not in TRAIN_MODULES:
                raise
            # The path as typed after the program name, whatever the program was called.
            words = click.get_current_context().command_path.split()[1:]
            raise click.ClickException(
                f"`gateway {' '.join(words)}` needs the train extra: {TRAIN_EXTRA}") from None

    return run
