"""Checks hash chains: every row's hash against its content, every link to the row before it,
and a chain's stored end against its head in `audit_chains`. Pure: rows go in, the first
broken link of each chain comes out; gateway/audit/verify_reading.py does the SQL.

A range of a chain is checked from its anchor: the row just before the range (when one is
stored) is fed with `link_only`, so a row deleted right at the range's start still shows as
a gap. A chain whose earlier rows were pruned starts at an unverifiable anchor; only a chain's
first row (seq 1) has a known predecessor, the genesis hash.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from gateway.audit.records import GENESIS, Row, row_hash


@dataclass(frozen=True, slots=True)
class Break:
    """The first broken link found in one chain: where it is and what is wrong."""

    chain_id: str
    seq: int
    request_id: str | None  # None for administrative rows and rows known only by number
    ts_us: int | None
    problem: str


@dataclass(frozen=True, slots=True)
class Head:
    """A chain's last link as `audit_chains` records it."""

    seq: int
    row_hash: str


@dataclass(slots=True)
class ChainCheck:
    """Follows one chain row by row (in seq order) and keeps its first break."""

    chain_id: str
    rows: int = 0
    broken: Break | None = None
    _last: Row | None = None

    def check(self, row: Row, *, link_only: bool = False) -> Break | None:
        """Feed the next row. `link_only` rows (just outside the range) are used for their
        position and hash, not counted or judged on their content."""
        if self.broken is not None:
            return self.broken
        problem = None if link_only else _content_problem(row)
        if problem is None:
            problem = self._link_problem(row)
        if not link_only:
            self.rows += 1
        self._last = row
        if problem is not None:
            self.broken = _break(self.chain_id, row, problem)
        return self.broken

    def _link_problem(self, row: Row) -> str | None:
        last = self._last
        if last is None:
            if row["seq"] == 1 and row["prev_hash"] != GENESIS:
                return "the chain's first row does not start from the genesis hash"
            return None  # an anchor: what came before is outside what was read
        expected = last["seq"] + 1
        if row["seq"] < expected:
            return f"out of order: seq {row['seq']} follows seq {last['seq']}"
        if row["seq"] > expected:
            missing = _span(expected, row["seq"] - 1)
            return f"{missing} missing before this row (deleted?)"
        if row["prev_hash"] != last["row_hash"]:
            return f"prev_hash does not match the hash of row {last['seq']}"
        return None

    def finish(self, last_stored: Row | None, head: Head | None) -> Break | None:
        """Compare the chain's stored end with its head: rows cut off the end, or a last row
        that is not the one the head names. `last_stored` is the chain's last row in the
        database (whether or not it was in the range); `head` None: the chain has none."""
        if self.broken is not None:
            return self.broken
        if head is None:
            where = last_stored or self._last
            if where is not None:
                self.broken = _break(self.chain_id, where,
                                     "the chain has rows but no head in audit_chains (deleted?)")
        elif last_stored is None:
            problem = f"{_span(1, head.seq)} missing: the head is at seq {head.seq}, no rows left"
            self.broken = Break(self.chain_id, head.seq, None, None, problem)
        elif last_stored["seq"] < head.seq:
            problem = (f"{_span(last_stored['seq'] + 1, head.seq)} cut off the end of the chain"
                       f" (the head is at seq {head.seq})")
            self.broken = Break(self.chain_id, last_stored["seq"] + 1, None, None, problem)
        elif last_stored["seq"] > head.seq:
            self.broken = _break(self.chain_id, last_stored,
                                 f"rows after the head (seq {head.seq}) were added")
        elif row_hash(last_stored) != head.row_hash or last_stored["row_hash"] != head.row_hash:
            self.broken = _break(self.chain_id, last_stored,
                                 "the chain's last row is not the one its head records")
        return self.broken


@dataclass(slots=True)
class VerifyReport:
    chains: int = 0
    rows: int = 0
    breaks: list[Break] = field(default_factory=list)  # the first of each broken chain

    @property
    def ok(self) -> bool:
        return not self.breaks

    @property
    def first(self) -> Break | None:
        """The earliest break in time (breaks without a time last)."""
        timed = sorted(self.breaks, key=lambda b: (b.ts_us is None, b.ts_us or 0, b.chain_id))
        return timed[0] if timed else None

    def add(self, check: ChainCheck) -> None:
        self.chains += 1
        self.rows += check.rows
        if check.broken is not None:
            self.breaks.append(check.broken)


def verify_chain(
    chain_id: str,
    rows: Iterable[Row],
    *,
    before: Row | None = None,
    after: Row | None = None,
    last_stored: Row | None = None,
    head: Head | None = None,
) -> ChainCheck:
    """One chain's range in a single call: the row before it, its rows in seq order, the row
    after it, then the tail against the head (when `head` is given)."""
    check = ChainCheck(chain_id)
    if before is not None:
        check.check(before, link_only=True)
    for row in rows:
        check.check(row)
    if after is not None:
        check.check(after, link_only=True)
    if head is not None:
        check.finish(last_stored, head)
    return check


def _content_problem(row: Row) -> str | None:
    if row_hash(row) != row["row_hash"]:
        return "row_hash does not match the row's content (altered)"
    return None


def _break(chain_id: str, row: Row, problem: str) -> Break:
    return Break(chain_id, row["seq"], row.get("request_id"), row.get("ts"), problem)


def _span(first: int, last: int) -> str:
    return f"row {first} is" if first == last else f"rows {first}..{last} are"
