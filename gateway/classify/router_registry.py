"""The fitted routers a policy names (`router:` per tenant or model group), loaded when the
policy loads or reloads, so a request only looks one up."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from pathlib import Path

from gateway.classify.router_model import RouterModel, RouterModelError

log = logging.getLogger("gateway.policy")


class FittedRouters:
    """Router directory → loaded RouterModel. `refresh` runs at start-up and on each policy
    reload (in the reload's thread, off the event loop); `get` is a dict hit."""

    def __init__(self, load: Callable[[Path], RouterModel] = RouterModel.load) -> None:
        self._load = load
        self._models: dict[Path, RouterModel] = {}

    def refresh(self, directories: Iterable[Path]) -> None:
        """Load every named router again. One that cannot be loaded is logged and the version
        already in force (if any) stays: a half-written refit never takes routing down, and
        until a first good version exists the shipped complexity model scores instead."""
        models: dict[Path, RouterModel] = {}
        for directory in directories:
            try:
                models[directory] = self._load(directory)
            except RouterModelError as exc:
                previous = self._models.get(directory)
                keeping = "the version in force" if previous else "the shipped model"
                log.error("router %s not loaded, keeping %s: %s", directory, keeping, exc)
                if previous is not None:
                    models[directory] = previous
        self._models = models  # one reference swap: a request sees the old or the new set

    def get(self, directory: Path | None) -> RouterModel | None:
        return self._models.get(directory) if directory is not None else None
