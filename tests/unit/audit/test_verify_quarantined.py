"""Gaps in a chain that rows in the quarantine file fill: reported as quarantined only when
they fill the gap exactly, hashes intact and links unbroken; a broken link otherwise."""

from __future__ import annotations

from gateway.audit.records import Chain, Row, event_row
from gateway.audit.verify import Gap, Head, verify_chain
from tests.support.audit_events import make_event


def chain_rows(count: int) -> list[Row]:
    chain = Chain("c")
    return [chain.link(event_row(make_event())) for _ in range(count)]


def held(rows: list[Row], *seqs: int) -> dict[tuple[str, int], Row]:
    return {("c", s): rows[s - 1] for s in seqs}


def stored(rows: list[Row], *missing: int) -> list[Row]:
    return [r for r in rows if r["seq"] not in missing]


def check(rows: list[Row], missing: tuple[int, ...], quarantined: dict[tuple[str, int], Row],
          ) -> tuple[list[Gap], str | None]:
    kept = stored(rows, *missing)
    last = kept[-1]
    result = verify_chain("c", kept, last_stored=last, head=Head(last["seq"], last["row_hash"]),
                          quarantined=quarantined)
    return result.gaps, None if result.broken is None else result.broken.problem


def test_quarantined_rows_in_the_middle_fill_their_gap() -> None:
    rows = chain_rows(8)
    assert check(rows, (3, 4), held(rows, 3, 4)) == ([Gap("c", 3, 4)], None)


def test_a_gap_only_partly_held_is_still_a_broken_link() -> None:
    rows = chain_rows(8)
    assert check(rows, (3, 4), held(rows, 3)) == (
        [], "rows 3..4 are missing before this row (deleted?)")


def test_a_held_row_that_was_altered_does_not_fill_the_gap() -> None:
    rows = chain_rows(5)
    altered = {("c", 3): {**rows[2], "tenant": "someone else"}}
    assert check(rows, (3,), altered) == ([], "row 3 is missing before this row (deleted?)")


def test_the_first_rows_of_a_chain_held_in_quarantine_are_reported() -> None:
    rows = chain_rows(5)
    assert check(rows, (1, 2), held(rows, 1, 2)) == ([Gap("c", 1, 2)], None)


def test_rows_held_after_the_last_stored_row_are_reported() -> None:
    rows = chain_rows(5)
    assert check(rows, (5,), held(rows, 5)) == ([Gap("c", 5, 5)], None)


def test_without_the_quarantine_nothing_changes() -> None:
    rows = chain_rows(5)
    assert check(rows, (3,), {}) == ([], "row 3 is missing before this row (deleted?)")
