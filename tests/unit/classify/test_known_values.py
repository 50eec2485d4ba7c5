"""Redaction masks every whole-word recurrence of what classification found."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from gateway.classify.known_values import WithKnownValues
from gateway.classify.redaction import redact, restore
from gateway.classify.sensitivity import SensitivityScanner
from gateway.types import SensitiveSpan

PERSON = SensitiveSpan("person", "pii", 0, 0, 0.85)


def found(text: str, value: str) -> list[tuple[str, str]]:
    return [(text[s.start:s.end], s.type) for s in
            WithKnownValues(SensitivityScanner(), [(value, PERSON)]).scan_for_redaction(text)]


def test_every_recurrence_is_found_with_its_type() -> None:
    assert found("Zorblax met Zorblax.", "Zorblax") == [("Zorblax", "person")] * 2


def test_not_inside_a_longer_word() -> None:
    assert found("Annual report for Ann", "Ann") == [("Ann", "person")]
    assert found("Annual", "Ann") == []


def test_the_longest_value_wins_and_built_in_findings_stay() -> None:
    scanner = WithKnownValues(SensitivityScanner(), [("Ada", PERSON), ("Ada Zorblax", PERSON)])
    text = "Ada Zorblax wrote to ada@example.org"
    spans = scanner.scan_for_redaction(text)
    assert [(text[s.start:s.end], s.type) for s in spans] == [
        ("Ada Zorblax", "person"), ("ada@example.org", "email")]


def test_values_never_show_in_its_repr() -> None:
    assert "Zorblax" not in repr(WithKnownValues(SensitivityScanner(), [("Zorblax", PERSON)]))


def test_nothing_known_is_the_plain_rescan() -> None:
    assert found("plain text", " ") == []


@given(st.lists(st.sampled_from(["Zorb", "Zorb Quint", "Quint", "x", " ", ".", "Zorbs", "\n"]),
                max_size=30))
def test_every_whole_word_recurrence_is_covered_and_redaction_round_trips(
    words: list[str],
) -> None:
    text = "".join(words)
    scanner = WithKnownValues(SensitivityScanner(), [("Zorb", PERSON), ("Zorb Quint", PERSON)])
    spans = scanner.scan_for_redaction(text)
    for match in re.finditer(r"(?<!\w)Zorb(?!\w)", text):
        assert any(s.start <= match.start() and match.end() <= s.end for s in spans)
    redacted, mapping = redact(text, spans)
    assert re.search(r"(?<!\w)Zorb(?!\w)", redacted) is None
    assert restore(redacted, mapping) == text
