"""The accurate mode (GATEWAY_COMPLEXITY_ENCODER=minilm): the complexity model over the full
int8 MiniLM, whose vectors come from a pool of worker processes, so the event loop only
awaits them (milliseconds each, against ~0.1 ms for the static table)."""

from __future__ import annotations

from typing import Protocol

import numpy as np

from gateway.classify.complexity_encoder import EncoderComplexityModel
from gateway.classify.static_encoder import EncoderInfo


class VectorPool(Protocol):
    """Prompt → unit vector, computed off the event loop (classify/encoder_pool.py)."""

    async def encode(self, text: str) -> np.ndarray: ...


class AccurateComplexity:
    """p_strong like the shipped model's, from the full encoder's vector."""

    __slots__ = ("_model", "_pool", "thresholds")

    def __init__(self, model: EncoderComplexityModel, pool: VectorPool) -> None:
        self._model = model
        self._pool = pool
        self.thresholds = model.thresholds

    async def p_strong(self, text: str) -> float:
        return self._model.p_strong_of(text, await self._pool.encode(text))


class PooledEncoder:
    """What the model needs to know of the encoder its pool runs (name, digest, size), so the
    serving process never loads the model itself; its vectors only come through the pool."""

    __slots__ = ("info",)

    def __init__(self, info: EncoderInfo) -> None:
        self.info = info

    @property
    def dims(self) -> int:
        return self.info.dims

    def encode(self, text: str) -> np.ndarray:
        raise RuntimeError("the accurate encoder runs in its worker pool: await its vectors")

    def encode_many(self, texts: list[str]) -> np.ndarray:
        raise RuntimeError("the accurate encoder runs in its worker pool: await its vectors")
