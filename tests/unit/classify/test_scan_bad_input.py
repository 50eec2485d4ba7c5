"""The sensitivity scan on input a client can send by mistake or on purpose: nothing, a
megabyte, random bytes decoded leniently, mixed scripts and emoji. Each scans without an
exception, in bounded time, with spans inside the text."""

from __future__ import annotations

import random
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gateway.classify.sensitivity import SensitivityScanner

SCANNER = SensitivityScanner()
# Generous: each megabyte below scans in 0.1-0.6 s on a loaded 2-core machine. (A megabyte
# packed with findings, one every 30 characters, takes ~1 s: it is held to 256 KB here.)
MEGABYTE_BOUND_S = 2.0
MIXED = ("Zoë Østrem und 田中太郎 schrieben: Ελένη Παπαδοπούλου, Мария Иванова, محمد علي "
         "😀🚀👩🏽‍💻 — lorem ipsum, the meeting moved to Tuesday. ")
DENSE = "call +44 20 7946 0958, host 2a00::1 ::ffff:8.8.4.4 std::cout Jane Roe. "


def scan_timed(text: str) -> float:
    start = time.perf_counter()
    spans = SCANNER.scan_for_redaction(text)  # what `scan` filters: the whole cost
    elapsed = time.perf_counter() - start
    for span in spans:
        assert 0 <= span.start < span.end <= len(text)
    return elapsed


def junk(size: int, errors: str, seed: int) -> str:
    return random.Random(seed).randbytes(size).decode("utf-8", errors)


def test_empty_prompt_has_no_findings() -> None:
    assert SCANNER.scan("") == [] and SCANNER.scan_for_redaction("") == []


@pytest.mark.parametrize(
    "text",
    [
        ("The quick brown fox jumps over the lazy dog. " * 23_000)[:1_000_000],
        (MIXED * 12_000)[:1_000_000],
        (DENSE * 4_000)[:256_000],
        junk(1_000_000, "surrogateescape", 1),
        junk(1_000_000, "replace", 2),
        ":" * 1_000_000,
        "::1a" * 250_000,
        "1." * 500_000,
    ],
    ids=["prose", "mixed-scripts-emoji", "dense-findings-256k", "bytes-surrogateescape",
         "bytes-replace", "colons", "double-colons", "dotted-digits"],
)
def test_a_megabyte_scans_in_bounded_time(text: str) -> None:
    assert scan_timed(text) < MEGABYTE_BOUND_S


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=2000), st.sampled_from(["surrogateescape", "replace", "ignore"]))
def test_any_bytes_decoded_leniently_scan_without_error(raw: bytes, errors: str) -> None:
    scan_timed(raw.decode("utf-8", errors))


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.characters(codec="utf-8"), max_size=500))
def test_any_text_scans_without_error(text: str) -> None:
    scan_timed(text)
