"""Answer quality that depends on the prompt, so routing by difficulty can be tested end to end.

Every prompt gets a deterministic difficulty in [0, 1] (a hash of its text, its length, and
words that mark hard work), and a backend of quality tier T answers it with quality
sigmoid((capability(T) - difficulty) × SHARPNESS): a strong tier answers nearly everything
well, a weak one only the easy prompts. A sim with `quality_tier` set starts each chat answer
with a mark, `[sim-quality 0.873]`, which the simulated judge (judge.py) reads back.
"""

from __future__ import annotations

import hashlib
import math
import re

MARK_PATTERN = re.compile(r"\[sim-quality (\d\.\d{3})\]")
HARD_WORDS = (
    "prove", "proof", "derive", "theorem", "design", "optimi", "concurren", "lock-free",
    "algorithm", "complexity", "step by step", "architecture", "invariant", "formal",
)
SHARPNESS = 10.0
LENGTH_SCALE_WORDS = 400  # prompts this long get the whole length term


def difficulty(prompt: str) -> float:
    """0 (trivial) to 1 (hard): a third each from the hash, the length and hard words."""
    digest = hashlib.sha256(prompt.encode("utf-8")).digest()
    spread = int.from_bytes(digest[:8], "big") / 2**64
    words = len(prompt.split())
    length = min(1.0, math.log1p(words) / math.log1p(LENGTH_SCALE_WORDS))
    lowered = prompt.lower()
    hard = min(1.0, sum(word in lowered for word in HARD_WORDS) / 2)
    return round(0.3 * spread + 0.3 * length + 0.4 * hard, 6)


def capability(tier: int) -> float:
    """Tier 1 copes with difficulty up to ~0.3, tier 4 with ~0.9, tier 5 and up with all."""
    return min(1.1, 0.1 + 0.2 * tier)


def answer_quality(prompt: str, tier: int) -> float:
    """The quality (0-1, three decimals) of a tier-`tier` backend's answer to this prompt."""
    z = (capability(tier) - difficulty(prompt)) * SHARPNESS
    return round(1.0 / (1.0 + math.exp(-z)), 3)


def mark(quality: float) -> str:
    return f"[sim-quality {quality:.3f}] "


def read_mark(text: str) -> float | None:
    """The quality an answer was marked with (the first mark), or None if it has none."""
    found = MARK_PATTERN.search(text)
    return float(found.group(1)) if found else None
