"""The scanner as a whole: overlap resolution, categories, tenant detectors, no values kept,
and linear time on inputs built to make naive patterns backtrack."""

from __future__ import annotations

import time

import pytest

from gateway.classify.detectors.overlap import resolve
from gateway.classify.sensitivity import (
    CustomDetectorError,
    CustomPattern,
    KeywordList,
    SensitivityScanner,
    categories,
)
from gateway.types import SensitiveSpan

SCANNER = SensitivityScanner()


def test_empty_and_clean_text() -> None:
    assert SCANNER.scan("") == []
    assert SCANNER.scan("How do I check my balance on my credit card?") == []


def test_categories_sorted_unique() -> None:
    spans = [SensitiveSpan("email", "pii", 0, 3, 0.9), SensitiveSpan("secret.jwt", "secret", 4, 9,
             0.9), SensitiveSpan("person", "pii", 10, 12, 0.6)]
    assert categories(spans) == ("pii", "secret")
    assert categories([]) == ()


def test_resolve_keeps_most_specific_then_most_confident() -> None:
    spans = [
        SensitiveSpan("phone", "pii", 0, 19, 0.7),
        SensitiveSpan("payment_card", "pii", 0, 19, 0.9),
        SensitiveSpan("person", "pii", 25, 35, 0.9),
        SensitiveSpan("street_address", "pii", 20, 60, 0.6),
        SensitiveSpan("secret.generic", "secret", 58, 70, 0.8),
        SensitiveSpan("person", "pii", 80, 85, 0.6),
        SensitiveSpan("person", "pii", 80, 85, 0.6),
    ]
    kept = resolve(spans)
    assert [(s.type, s.start) for s in kept] == [
        ("payment_card", 0), ("person", 25), ("secret.generic", 58), ("person", 80)]


def test_secret_in_url_wins_over_email_shape() -> None:
    text = "DATABASE_URL=postgres://app:Zx9kq2LwPp@db.acme-corp.com:5432/app"
    assert [s.type for s in SCANNER.scan(text)] == ["secret.url_credentials"]


def test_custom_detectors() -> None:
    scanner = SensitivityScanner(custom=[
        CustomPattern("ticket", "confidential", r"\bPRJ-\d{4}\b"),
        KeywordList("codename", "confidential", ("Blue Falcon", "nightjar")),
    ])
    text = "Status of PRJ-1234 (Blue Falcon): NIGHTJAR ships; PRJ-12 is not a ticket."
    spans = scanner.scan(text)
    assert [(s.type, text[s.start:s.end]) for s in spans] == [
        ("custom.ticket", "PRJ-1234"), ("custom.codename", "Blue Falcon"),
        ("custom.codename", "NIGHTJAR")]
    assert categories(spans) == ("confidential",)


@pytest.mark.parametrize(
    "detector",
    [CustomPattern("broken", "x", "(unclosed"), CustomPattern("empty", "x", "a*"),
     KeywordList("none", "x", ("  ",))],
)
def test_bad_custom_detector_rejected(detector: CustomPattern | KeywordList) -> None:
    with pytest.raises(CustomDetectorError, match=detector.name):
        SensitivityScanner(custom=[detector])


def test_spans_hold_offsets_only() -> None:
    text = "Contact Anna Kowalska at anna.k@acme-corp.com"
    for span in SCANNER.scan(text):
        assert not any(text[span.start:span.end] in str(v) for v in (
            span.type, span.category, repr(span)))


ADVERSARIAL = [
    "a" * 60_000, "1" * 60_000, "@" * 30_000, "A" * 60_000, "a." * 30_000, "key=" * 15_000,
    "[" * 30_000, "Aa " * 20_000, "1 " * 30_000, "-----BEGIN " * 6_000, "x@" * 30_000,
    "eyJ" * 20_000, ":a:" * 20_000, "Mr. " * 15_000, "the corner of " * 4_000,
    "0.0.0." * 10_000, "AKIA" * 15_000, "ghp_" * 15_000, "born 1/1/1990 " * 4_000,
]


@pytest.mark.parametrize("text", ADVERSARIAL, ids=lambda t: repr(t[:12]))
def test_no_catastrophic_backtracking(text: str) -> None:
    started = time.perf_counter()
    SCANNER.scan(text)
    assert time.perf_counter() - started < 1.0


def test_time_grows_linearly() -> None:
    unit = "Anna Kowalska paid 4539 1488 0343 6467 at 221 Baker Street; api_key = 'x9Kq2'.\n"

    def cost(copies: int) -> float:
        text = unit * copies
        best = float("inf")
        for _ in range(3):
            started = time.perf_counter()
            SCANNER.scan(text)
            best = min(best, time.perf_counter() - started)
        return best

    assert cost(4_000) < 12 * cost(1_000)
