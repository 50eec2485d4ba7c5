"""Chain verification without a database: each kind of tampering names its first broken link."""

from __future__ import annotations

import pytest

from gateway.audit.admin_log import admin_row
from gateway.audit.records import GENESIS, Chain, Row, event_row, row_hash
from gateway.audit.verify import Break, ChainCheck, Head, VerifyReport, verify_chain
from gateway.cli.audit_commands import parse_cutoff, parse_moment
from tests.support.audit_events import make_event

T0 = 1_795_000_000.0


def chain_rows(count: int, chain_id: str = "replica-a") -> list[Row]:
    chain = Chain(chain_id)
    return [chain.link(event_row(make_event(ts_unix_s=T0 + i))) for i in range(count)]


def head_of(rows: list[Row]) -> Head:
    return Head(rows[-1]["seq"], rows[-1]["row_hash"])


def test_an_intact_chain_verifies_whole_and_in_any_window() -> None:
    rows = chain_rows(6)
    whole = verify_chain("replica-a", rows, last_stored=rows[-1], head=head_of(rows))
    assert whole.broken is None and whole.rows == 6
    window = verify_chain("replica-a", rows[2:4], before=rows[1], after=rows[4],
                          last_stored=rows[-1], head=head_of(rows))
    assert window.broken is None and window.rows == 2


def test_a_changed_value_is_named_by_its_row() -> None:
    rows = chain_rows(5)
    rows[2] = {**rows[2], "cost_micro_usd": 1}
    broken = verify_chain("replica-a", rows).broken
    assert broken is not None
    assert (broken.seq, broken.request_id, broken.ts_us) == (3, rows[2]["request_id"],
                                                            rows[2]["ts"])
    assert "altered" in broken.problem


def test_a_change_with_a_recomputed_hash_breaks_the_next_link() -> None:
    rows = chain_rows(5)
    forged = {**rows[2], "cost_micro_usd": 1}
    forged["row_hash"] = row_hash(forged)
    rows[2] = forged
    broken = verify_chain("replica-a", rows).broken
    assert broken is not None and broken.seq == 4
    assert "prev_hash does not match the hash of row 3" in broken.problem


def test_a_deleted_middle_row_is_a_gap() -> None:
    rows = chain_rows(5)
    del rows[2]
    broken = verify_chain("replica-a", rows).broken
    assert broken is not None and broken.seq == 4
    assert broken.problem == "row 3 is missing before this row (deleted?)"


def test_a_deleted_first_row_of_the_range_shows_against_the_row_before_it() -> None:
    rows = chain_rows(6)
    # The range was rows 3..5; row 3 is gone, so the range now starts at 4 and the row
    # stored before it is 2.
    broken = verify_chain("replica-a", rows[3:5], before=rows[1], after=rows[5]).broken
    assert broken is not None and broken.seq == 4
    assert "row 3 is missing" in broken.problem
    # Without the row before it, the same range would look whole: that is why it is read.
    assert verify_chain("replica-a", rows[3:5], after=rows[5]).broken is None


def test_a_deleted_last_row_of_the_range_shows_against_the_row_after_it() -> None:
    rows = chain_rows(6)
    broken = verify_chain("replica-a", rows[1:3], before=rows[0], after=rows[4]).broken
    assert broken is not None and broken.seq == 5 and "row 4 is missing" in broken.problem


def test_reordered_rows_are_caught_by_order_and_by_hash() -> None:
    rows = chain_rows(5)
    swapped = [rows[0], rows[2], rows[1], rows[3], rows[4]]
    broken = verify_chain("replica-a", swapped).broken
    assert broken is not None and broken.seq == 3 and "row 2 is missing" in broken.problem
    # Swapping the seq numbers themselves changes what the hashes cover.
    renumbered = [rows[0], {**rows[2], "seq": 2}, {**rows[1], "seq": 3}, rows[3]]
    broken = verify_chain("replica-a", renumbered).broken
    assert broken is not None and broken.seq == 2 and "altered" in broken.problem


def test_rows_cut_off_the_end_are_caught_by_the_head() -> None:
    rows = chain_rows(6)
    head = head_of(rows)
    kept = rows[:4]
    broken = verify_chain("replica-a", kept, last_stored=kept[-1], head=head).broken
    assert broken is not None and broken.seq == 5
    assert broken.problem == "rows 5..6 are cut off the end of the chain (the head is at seq 6)"
    gone = verify_chain("replica-a", [], last_stored=None, head=head).broken
    assert gone is not None and "no rows left" in gone.problem


def test_a_replaced_last_row_does_not_match_the_head() -> None:
    rows = chain_rows(3)
    head = head_of(rows)
    forged = {**rows[-1], "tenant": "someone-else"}
    forged["row_hash"] = row_hash(forged)
    broken = verify_chain("replica-a", [*rows[:2], forged], last_stored=forged, head=head).broken
    assert broken is not None and broken.seq == 3
    assert "not the one its head records" in broken.problem


def test_a_chain_without_a_head_is_broken() -> None:
    rows = chain_rows(3)
    check = verify_chain("replica-a", rows)
    assert check.finish(None, None) == Break("replica-a", 3, rows[2]["request_id"], rows[2]["ts"],
                                             "the chain has rows but no head in audit_chains"
                                             " (deleted?)")


def test_the_first_row_must_start_from_genesis_but_a_pruned_start_is_an_anchor() -> None:
    rows = chain_rows(4)
    assert rows[0]["prev_hash"] == GENESIS
    assert verify_chain("replica-a", rows[2:]).broken is None  # earlier rows pruned
    forged = {**rows[0], "prev_hash": "f" * 64}
    forged["row_hash"] = row_hash(forged)
    broken = verify_chain("replica-a", [forged]).broken
    assert broken is not None and "genesis" in broken.problem


def test_admin_rows_chain_and_verify_like_request_rows() -> None:
    first = admin_row(1, GENESIS, 1_795_000_000_000_000, "cli:ops", "key.create", "acme",
                      {"key_id": "k1", "prefix": "gw-abc"})
    second = admin_row(2, first["row_hash"], 1_795_000_001_000_000, "admin-api",
                       "tenant.disable", "acme", None)
    assert verify_chain("admin", [first, second], last_stored=second,
                        head=Head(2, second["row_hash"])).broken is None
    altered = {**second, "actor": "someone"}
    broken = verify_chain("admin", [first, altered]).broken
    assert broken is not None and broken.seq == 2 and broken.request_id is None


def test_the_report_names_the_earliest_break_across_chains() -> None:
    report = VerifyReport()
    late, early = chain_rows(3, "late"), chain_rows(3, "early")
    late[1] = {**late[1], "ts": late[1]["ts"] + 10_000_000}
    early[2] = {**early[2], "status": 500}
    for chain_id, rows in (("late", late), ("early", early), ("fine", chain_rows(2, "fine"))):
        check = ChainCheck(chain_id)
        for row in rows:
            check.check(row)
        report.add(check)
    # A chain is read up to its first break: the late chain's third row is not counted.
    assert not report.ok and report.chains == 3 and report.rows == 7
    assert report.first is not None and report.first.chain_id == "early"


def test_cutoffs_and_moments_parse() -> None:
    now = parse_moment("2026-11-20T12:00:00")
    assert parse_cutoff("90d", now) == parse_moment("2026-08-22T12:00:00")
    assert parse_cutoff("2w", now) == parse_moment("2026-11-06T12:00:00+00:00")
    assert parse_cutoff("2026-01-01", now) == parse_moment("2026-01-01T00:00:00Z")
    with pytest.raises(Exception, match="is not a time"):
        parse_cutoff("ninety days", now)
