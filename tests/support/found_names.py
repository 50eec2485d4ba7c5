"""The person names the built-in scanner finds in a text, as the strings it covers: what the
name detector's tests compare."""

from __future__ import annotations

from gateway.classify.sensitivity import SensitivityScanner

SCANNER = SensitivityScanner()


def persons(text: str) -> list[str]:
    return [text[s.start:s.end] for s in SCANNER.scan(text) if s.type == "person"]
