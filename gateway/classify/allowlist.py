"""Values the operator declares public: a finding whose text is exactly one of them is dropped
(neither routed on nor masked).

Every scanner meets values that look sensitive but are published on purpose: the company's
support address and hotline, a browser API key that ships inside its web app, a payment
processor's test cards. Left flagged, each request quoting one is pinned to self-hosted
backends. The match is on the whole finding, never on part of it, so an allowed address
inside a longer secret still leaves the secret flagged.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from functools import lru_cache

from gateway.types import SensitiveSpan, TenantDetector


class Allowlist:
    __slots__ = ("_literals", "_pattern")

    def __init__(self, entries: Iterable[TenantDetector]) -> None:
        literals: set[str] = set()
        patterns: list[str] = []
        for entry in entries:
            if not entry.allow:
                continue
            literals.update(entry.words)
            if entry.regex is not None:
                patterns.append(f"(?:{entry.regex})")
        self._literals = frozenset(literals)
        self._pattern = re.compile("|".join(patterns)) if patterns else None

    def __bool__(self) -> bool:
        return bool(self._literals) or self._pattern is not None

    def __repr__(self) -> str:
        return f"Allowlist({len(self._literals)} values, regex={self._pattern is not None})"

    def allows(self, value: str) -> bool:
        if value in self._literals:
            return True
        return self._pattern is not None and self._pattern.fullmatch(value) is not None

    def drop(self, text: str, spans: Sequence[SensitiveSpan]) -> list[SensitiveSpan]:
        """`spans` (offsets into `text`) without the findings that are allowed values."""
        return [s for s in spans if not self.allows(text[s.start:s.end])]


@lru_cache(maxsize=256)
def allowlist(detectors: tuple[TenantDetector, ...]) -> Allowlist:
    """The allowed values among a tenant's detectors, compiled once per distinct set."""
    return Allowlist(detectors)
