"""Is this value a real credential or a stand-in? Entropy, placeholders, template variables,
dictionary-word identifiers: the checks that turn a pattern match into a finding.

Most false positives of secret scanners are rejected here rather than by the patterns: an
`xxxx` body, `${TOKEN}`, `<your key>`, `EXAMPLE`, `abcdefgh…`, `changeme`.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from itertools import pairwise

_PLACEHOLDER_WORDS = re.compile(
    r"(?i)(?:x{4,}|\*{3,}|#{3,}|\.{3,}|your[_-]?|insert|placeholder|redacted|changeme|change[_-]?it"
    r"|dummy|example$|examplekey$|todo|replace[_-]?me|put[_-]|_here|here$|<[^>]*>)"
)
_TEMPLATE = re.compile(
    r"^(?:\$\{?[\w.:=$-]*\}?|\$\(.*\)?|%\w*%?|%[sd]|\{\{.*\}\}|\$\{\{.*\}\}|\{[a-z_.]+\}|"
    r"@\w+@|`.*|<%.*|\[[\w ]+\]|<.*>?|\{\d*\}|process\.env\..*|os\.environ.*|env\.\w+)$",
    re.IGNORECASE,
)
_KEYBOARD_RUNS = ("qwerty", "asdfgh", "zxcvbn")
# Six characters in alphabet or digit order ("klmnop", "345678", "fedcba"): about one random
# 100-character base62 key in a billion holds such a run, nearly every made-up one does.
_ORDERED_RUN = 6
# Literal values people use when showing how to pass a credential.
_STOCK_VALUES = frozenset(
    "password passwd pass pwd secret token apikey api_key key test testing demo admin root user "
    "username changeme letmein hunter2 null none true false undefined empty value string".split()
)
# Words that mark a documentation or test value: "xoxb-00000-00000-EXAMPLENOTAREALTOKEN".
_STAND_IN_WORDS = re.compile(r"(?i)example|fake|not_?a?_?real|dummy|sample|placeholder|0{5,}")
_WORD_CHUNK = re.compile(r"[A-Z]?[a-z]{3,}|[A-Z]{4,}(?![a-z])")


def shannon_entropy(value: str) -> float:
    """Bits per character: ~4.2+ for random base62, ~3.5-4 for random hex, < 3 for words."""
    if not value:
        return 0.0
    length = len(value)
    return -sum(n / length * math.log2(n / length) for n in Counter(value).values())


def is_placeholder(value: str) -> bool:
    """A stand-in for a credential rather than one."""
    stripped = value.strip("'\"` ")
    if not stripped:
        return True
    lowered = stripped.lower()
    if lowered in _STOCK_VALUES or _TEMPLATE.match(stripped) or _PLACEHOLDER_WORDS.search(stripped):
        return True
    if any(run in lowered for run in _KEYBOARD_RUNS) or _has_ordered_run(lowered):
        return True
    most_common = Counter(lowered).most_common(1)[0][1]
    return most_common >= max(4, len(lowered) * 0.5)  # "AKIAZZZZZZZZ", "aaaa1111bbbb"


def _has_ordered_run(value: str) -> bool:
    up = down = 1
    for previous, current in pairwise(value):
        step = ord(current) - ord(previous) if current.isalnum() and previous.isalnum() else 0
        up = up + 1 if step == 1 else 1
        down = down + 1 if step == -1 else 1
        if up >= _ORDERED_RUN or down >= _ORDERED_RUN:
            return True
    return False


def is_stand_in(value: str) -> bool:
    """A placeholder, or a value that says it is an example: a documented stand-in for a
    credential, not one, even when it does not have the credential's shape."""
    return is_placeholder(value) or _STAND_IN_WORDS.search(value) is not None


def looks_like_words(value: str) -> bool:
    """Identifiers and phrases ("a-fake-api-key", "id-Gost28147-89-None-KeyMeshing",
    "jetbrains.mps.v8_elimination"): mostly made of word-like chunks, unlike random keys."""
    letters = sum(ch.isalpha() for ch in value)
    if letters == 0:
        return False
    in_words = sum(len(m) for m in _WORD_CHUNK.findall(value) if _has_vowel(m))
    return in_words >= 0.6 * letters


def _has_vowel(chunk: str) -> bool:
    return any(ch in "aeiouyAEIOUY" for ch in chunk)


def random_enough(value: str, min_entropy: float) -> bool:
    """Not a placeholder and at least `min_entropy` bits per character."""
    return not is_placeholder(value) and shannon_entropy(value) >= min_entropy
