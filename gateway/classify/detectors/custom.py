"""Tenant-defined detectors: a regular expression or a list of keywords, each with its own
name and category (e.g. project code names as "confidential"). Compiled once, when the
scanner is built, never per request.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from gateway.classify.detectors.word_trie import trie_pattern
from gateway.types import SensitiveSpan


class CustomDetectorError(ValueError):
    """A tenant detector that cannot be compiled (names the detector, never echoes input)."""


@dataclass(frozen=True, slots=True)
class CustomPattern:
    """Flags every match of `regex` as `custom.<name>` in `category`."""

    name: str
    category: str
    regex: str

    def source(self) -> tuple[str, int]:
        return self.regex, 0


@dataclass(frozen=True, slots=True)
class KeywordList:
    """Flags whole-word, case-insensitive occurrences of any of `words`."""

    name: str
    category: str
    words: tuple[str, ...]

    def source(self) -> tuple[str, int]:
        words = [w.strip().lower() for w in self.words if w.strip()]
        if not words:
            raise CustomDetectorError(f"keyword list {self.name!r} is empty")
        return r"(?<!\w)(?:" + trie_pattern(words) + r")(?!\w)", re.IGNORECASE


CustomDetector = CustomPattern | KeywordList


@dataclass(frozen=True, slots=True)
class CompiledCustom:
    type: str
    category: str
    pattern: re.Pattern[str]


def compile_custom(detectors: Sequence[CustomDetector]) -> tuple[CompiledCustom, ...]:
    compiled = []
    for detector in detectors:
        source, flags = detector.source()
        try:
            pattern = re.compile(source, flags)
        except re.error as exc:
            raise CustomDetectorError(f"custom detector {detector.name!r}: {exc.msg}") from None
        if pattern.match(""):
            raise CustomDetectorError(f"custom detector {detector.name!r} matches empty text")
        compiled.append(CompiledCustom("custom." + detector.name, detector.category, pattern))
    return tuple(compiled)


def detect_custom(text: str, detectors: Sequence[CompiledCustom]) -> list[SensitiveSpan]:
    spans = []
    for detector in detectors:
        for match in detector.pattern.finditer(text):
            if match.end() > match.start():
                spans.append(SensitiveSpan(detector.type, detector.category, match.start(),
                                           match.end(), 1.0))
    return spans
