"""AWS secret access keys: 40 random base64 characters with no prefix of their own, so found
only beside something that says AWS or secret (an access key id, `aws_secret_access_key`,
"secret") within a couple of hundred characters, and only when the value is random enough
(upper, lower and digits; not hex, not words, not a placeholder such as AWS's EXAMPLEKEY,
which is kept as a reserved stand-in and still masked)."""

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
_KEY = re.compile(r"(?<![A-Za-z0-9+/=])[A-Za-z0-9+/]{40}(?![A-Za-z0-9+/=])")
_HEX = re.compile(r"[0-9a-fA-F]{40}")
MIN_ENTROPY = 4.0


def detect_aws_secret_keys(view: TextView) -> list[SensitiveSpan]:
    near = view.occurrences(*_CONTEXT)
    if not near:
        return []
    text = view.text
    spans: list[SensitiveSpan] = []
    searched_to = 0
    for at in near:
        start = max(searched_to, at - _REACH)
        end = min(len(text), at + _REACH)
        if start >= end:
            continue
        # Back to a token boundary, so a key cut by the window's edge is not half-matched.
        while start > 0 and text[start - 1] not in " \t\r\n\"'`=:,;()[]{}<>":
            start -= 1
        for match in _KEY.finditer(text, start, end):
            value = match.group()
            if _keylike(value):
                spans.append(SensitiveSpan("secret.aws_secret_key", "secret", match.start(),
                                           match.end(), 0.85, reserved=is_stand_in(value)))
        searched_to = end
    return spans


def _keylike(value: str) -> bool:
    has = (any(c.isupper() for c in value), any(c.islower() for c in value),
           any(c.isdigit() for c in value))
    return (all(has) and not _HEX.fullmatch(value) and not looks_like_words(value)
            and shannon_entropy(value) >= MIN_ENTROPY)
