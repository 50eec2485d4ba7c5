"""Property tests for reading a spool segment back: whatever truncation or byte corruption
the file suffered, the rows before the damage come back exactly, and every row that comes back
is whole (what was written, never a fragment or a row with a mangled field)."""

from __future__ import annotations

import logging
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gateway.audit.records import CONTENT, Chain, event_row, to_wire
from gateway.audit.spool import read_segment
from gateway.types import AuditContent
from tests.support.audit_events import make_event

CHAIN = Chain("host:1:abc")
ROWS: list[dict[str, Any]] = [
    CHAIN.link(event_row(make_event(
        content=AuditContent(f"prompt {i} [EMAIL_1]", f"answer {i}") if i % 2 else None,
        cost_micro_usd=100 + i,
    )))
    for i in range(5)
]
LINES = [to_wire(row) + b"\n" for row in ROWS]
SEGMENT = b"".join(LINES)
ENDS = [sum(len(line) for line in LINES[:i + 1]) for i in range(len(LINES))]  # after each "\n"


def read(data: bytes) -> list[dict[str, Any]]:
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "000000000001.jsonl"
        path.write_bytes(data)
        return read_segment(path)


def without_content(row: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in row.items() if k != CONTENT}


def test_an_undamaged_segment_reads_back_exactly() -> None:
    assert read(SEGMENT) == ROWS


@pytest.fixture(autouse=True)
def _quiet(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.CRITICAL, logger="gateway.audit")  # damage is logged by design


@settings(max_examples=200, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.integers(0, len(SEGMENT)))
def test_a_truncated_segment_gives_exactly_the_rows_whose_lines_are_whole(cut: int) -> None:
    assert read(SEGMENT[:cut]) == ROWS[:sum(1 for end in ENDS if end <= cut)]


@settings(max_examples=400, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.data(), st.integers(0, len(SEGMENT) - 1), st.integers(0, 255))
def test_a_corrupted_byte_costs_at_most_the_row_it_hit(
    data: st.DataObject, at: int, value: int
) -> None:
    """...or the two rows whose line break it hit: a lost line break joins them into one
    line, which is neither row."""
    damaged = bytearray(SEGMENT)
    if damaged[at] == value:
        value ^= 0x20
    damaged[at] = value
    cut = data.draw(st.sampled_from([len(SEGMENT), *range(at + 1, len(SEGMENT))]))
    hit = next(i for i, end in enumerate(ENDS) if at < end)
    got = read(bytes(damaged[:cut]))

    joined = at == ENDS[hit] - 1  # the byte was a line break, and now is not
    first_whole = hit + 2 if joined else hit + 1
    whole_after = [ROWS[i] for i in range(first_whole, len(ROWS)) if ENDS[i] <= cut]
    assert got[:hit] == ROWS[:hit]
    rest = got[hit:]
    if whole_after:
        assert rest[-len(whole_after):] == whole_after
        rest = rest[:-len(whole_after)]
    # What is left came from the damaged line: at most that row, and only if every field that
    # reaches audit_log survived (the redacted content is outside the hash; its shape must hold).
    assert len(rest) <= 1
    for row in rest:
        assert without_content(row) == without_content(ROWS[hit])
        if CONTENT in ROWS[hit]:
            assert set(row[CONTENT]) == {"prompt", "response"}
            assert all(isinstance(v, str) for v in row[CONTENT].values())
