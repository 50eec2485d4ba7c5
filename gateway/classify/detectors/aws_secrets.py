"""AWS secret access keys: 40 random base64 characters with no prefix of their own, so found
only beside something that says AWS or secret (an access key id, `aws_secret_access_key`,
"secret") within a couple of hundred characters, and only when the value is random enough
(upper, lower and digits; not hex, not words; a placeholder is kept as a reserved stand-in,
masked all the same)."""

from __future__ import annotations

import re

from gateway.classify.detectors.secret_values import (
    is_stand_in,
    looks_like_words,
    shannon_entropy,
)
from gateway.classify.detectors.textview import TextView
from gateway.types import SensitiveSpan

_CONTEXT = (b"aws", b"secret", b"akia", b"asia")
_REACH = 200  # characters either side of a context word searched for the key
# Not inside a longer base64 run; an `=` before it is an assignment (padding only ends a
# base64 run), so `AWS_SECRET_ACCESS_KEY=<key>` is found.
_KEY = re.compile(r"(?<![A-Za-z0-9+/])[A-Za-z0-9+/]{40}(?![A-Za-z0-9+/=])")
_HEX = re.compile(r"[0-9a-fA-F]{40}")
MIN_ENTROPY = 4.0


def detect_aws_secret_keys(view: TextView) -> list[SensitiveSpan]:
    near = view.occurrences(*_CONTEXT)
    if not near:
        return []
    text = view.text
    spans: list[SensitiveSpan] = []
    # One search per merged window (the lookbehind sees past a window's start, so a key
    # straddling it is whole): linear however many context words there are.
    for start, end in _windows(near, len(text)):
        for match in _KEY.finditer(text, start, end):
            value = match.group()
            if _keylike(value):
                spans.append(SensitiveSpan("secret.aws_secret_key", "secret", match.start(),
                                           match.end(), 0.85, reserved=is_stand_in(value)))
    return spans


def _windows(near: list[int], length: int) -> list[tuple[int, int]]:
    merged: list[tuple[int, int]] = []
    for at in near:
        start, end = max(0, at - _REACH - 40), min(length, at + _REACH + 40)
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged


def _keylike(value: str) -> bool:
    has = (any(c.isupper() for c in value), any(c.islower() for c in value),
           any(c.isdigit() for c in value))
    return (all(has) and not _HEX.fullmatch(value) and not looks_like_words(value)
            and shannon_entropy(value) >= MIN_ENTROPY)
