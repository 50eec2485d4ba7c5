"""Checks hash chains: every row's hash against its content, every link to the row before it,
and a chain's stored end against its head in `audit_chains`. Pure: rows go in, the first
broken link of each chain comes out; gateway/audit/chain_repository.py does the SQL.

A range of a chain is checked from its anchor: the row just before the range (when one is
stored) is fed with `link_only`, so a row deleted right at the range's start still shows as
a gap. A chain whose earlier rows were pruned starts at an unverifiable anchor; only a chain's
first row (seq 1) has a known predecessor, the genesis hash.

Rows the database refused are kept in the quarantine file (quarantine.py), leaving a gap in
their chain. A gap is reported as quarantined, not as a break, only when the quarantined rows
fill it exactly: each one's own hash intact and each linked to the one before. Anything less
is still a broken link.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
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
class Gap:
    """Rows `first..last` of a chain, missing from the database and held, intact and linked,
    in the quarantine file."""

    chain_id: str
    first: int
    last: int


Quarantined = Mapping[tuple[str, int], Row]  # (chain id, seq) → the row as it was hashed


@dataclass(frozen=True, slots=True)
class Head:
    """A chain's last link as `audit_chains` records it."""

    seq: int
    row_hash: str


@dataclass(slots=True)
class ChainCheck:
    """Follows one chain row by row (in seq order) and keeps its first break."""

    chain_id: str
    quarantined: Quarantined = field(default_factory=dict)
    rows: int = 0
    broken: Break | None = None
    gaps: list[Gap] = field(default_factory=list)
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
            if row["seq"] > 1:  # the chain's first rows may have been refused, not pruned
                self._bridge(0, GENESIS, row["seq"], row["prev_hash"])
            elif row["prev_hash"] != GENESIS:
                return "the chain's first row does not start from the genesis hash"
            return None  # an anchor: what came before is outside what was read
        expected = last["seq"] + 1
        if row["seq"] < expected:
            return f"out of order: seq {row['seq']} follows seq {last['seq']}"
        if row["seq"] > expected and self._bridge(last["seq"], last["row_hash"], row["seq"],
                                                  row["prev_hash"]):
            return None
        if row["seq"] > expected:
            missing = _span(expected, row["seq"] - 1)
            return f"{missing} missing before this row (deleted?)"
        if row["prev_hash"] != last["row_hash"]:
            return f"prev_hash does not match the hash of row {last['seq']}"
        return None

    def _bridge(self, after: int, after_hash: str, before: int, before_prev: str | None) -> bool:
        """Whether quarantined rows fill seqs after+1..before-1 exactly (`before_prev` None:
        as far as they go, past the chain's stored end); if so, the gap is noted."""
        prev, seq = after_hash, after + 1
        while before_prev is None or seq < before:
            held = self.quarantined.get((self.chain_id, seq))
            if held is None or held["prev_hash"] != prev or row_hash(held) != held["row_hash"]:
                break
            prev, seq = held["row_hash"], seq + 1
        if seq == after + 1 or (before_prev is not None and (seq < before or prev != before_prev)):
            return False
        self.gaps.append(Gap(self.chain_id, after + 1, seq - 1))
        return True

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
        else:  # rows refused after the last stored one leave no mark in the head
            self._bridge(last_stored["seq"], last_stored["row_hash"], 0, None)
        return self.broken


@dataclass(slots=True)
class VerifyReport:
    chains: int = 0
    rows: int = 0
    breaks: list[Break] = field(default_factory=list)  # the first of each broken chain
    gaps: list[Gap] = field(default_factory=list)  # filled by the quarantine file

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
        self.gaps += check.gaps
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
    quarantined: Quarantined | None = None,
) -> ChainCheck:
    """One chain's range in a single call: the row before it, its rows in seq order, the row
    after it, then the tail against the head (when `head` is given)."""
    check = ChainCheck(chain_id, quarantined or {})
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
