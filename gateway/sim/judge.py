"""A deterministic judge: a sim with `judge` set answers a rubric prompt that holds two
answers between `<answer_a>…</answer_a>` and `<answer_b>…</answer_b>` with JSON
`{"a": 0-10, "b": 0-10}`: each answer's quality mark (quality.py) rounded to a whole point on
a 0-10 scale, as judges score (so two good answers tie), and 0 for an answer without one
(cut short, or from a sim that does not mark its answers)."""

from __future__ import annotations

import re

import orjson

from gateway.sim.quality import read_mark

SECTIONS = {
    side: re.compile(rf"<answer_{side}>(.*?)</answer_{side}>", re.DOTALL) for side in "ab"
}


def is_rubric(text: str) -> bool:
    return all(pattern.search(text) for pattern in SECTIONS.values())


def verdict(text: str) -> str:
    """The judge's reply to a rubric prompt (is_rubric(text) must hold)."""
    scores: dict[str, int] = {}
    for side, pattern in SECTIONS.items():
        found = pattern.search(text)
        quality = read_mark(found.group(1)) if found else None
        scores[side] = round(10 * (quality or 0.0))
    return orjson.dumps(scores).decode()
