"""Deterministic embeddings: a unit vector per input, seeded by a hash of the input.

Equal inputs give equal vectors in any process; base64 output is little-endian float32, the
layout openai-python decodes.
"""

from __future__ import annotations

import base64
import hashlib
import math
import random
import struct
from array import array


def embedding_vector(item: str | tuple[int, ...], dim: int, seed: int) -> list[float]:
    """A unit-length vector of dim floats, a pure function of (item, seed)."""
    digest = hashlib.blake2b(digest_size=8, key=str(seed).encode())
    if isinstance(item, str):
        digest.update(b"s" + item.encode("utf-8", "surrogatepass"))
    else:
        digest.update(b"t" + array("q", item).tobytes())
    rng = random.Random(int.from_bytes(digest.digest(), "little"))
    vector = [rng.gauss(0.0, 1.0) for _ in range(dim)]
    norm = math.sqrt(sum(v * v for v in vector)) or 1.0
    return [v / norm for v in vector]


def truncate_dimensions(vector: list[float], dimensions: int) -> list[float]:
    """Matryoshka-style: keep the first dimensions and renormalise."""
    head = vector[:dimensions]
    norm = math.sqrt(sum(v * v for v in head)) or 1.0
    return [v / norm for v in head]


def encode_base64(vector: list[float]) -> str:
    return base64.b64encode(struct.pack(f"<{len(vector)}f", *vector)).decode("ascii")
