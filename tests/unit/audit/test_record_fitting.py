"""records.fit_row: every value an event can carry becomes one its audit_log column takes
as it is (so the row hashed is the row stored)."""

from __future__ import annotations

from dataclasses import asdict

import orjson

from gateway.audit.records import CONTENT, Chain, event_row, fit_text, row_hash
from gateway.types import AuditContent, PredictionNote, Rejection, RejectionKind, TelemetryNote
from tests.support.audit_events import make_event


def test_nul_characters_are_replaced_everywhere_a_string_goes() -> None:
    row = event_row(make_event(
        requested_model="gpt\x00", tags=("a\x00", "b"), error_type="bad\x00type",
        rejected=(Rejection("x\x00", "reason\x00", RejectionKind.ZONE),), tried=("one\x00", "two"),
        content=AuditContent(prompt="p\x00", response="r\x00"),
    ))
    assert "\x00" not in orjson.dumps(row).decode("unicode_escape")
    assert row["requested_model"] == "gpt\ufffd" and row["tags"] == "a\ufffd,b"
    assert row["trace"]["rejected"] == [["x\ufffd", "reason\ufffd"]]
    assert row[CONTENT] == {"prompt": "p\ufffd", "response": "r\ufffd"}


def test_strings_are_cut_to_their_column_and_integers_clamped_to_its_range() -> None:
    row = event_row(make_event(
        requested_model="m" * 500, tags=("t" * 300, "u" * 300), status=70_000,
        max_output_tokens=2**64 - 1, prompt_tokens=-(2**40), cost_micro_usd=2**80,
    ))
    assert row["requested_model"] == "m" * 128 and len(row["tags"]) == 400
    assert row["status"] == 2**15 - 1 and row["max_output_tokens"] == 2**31 - 1
    assert row["prompt_tokens"] == -(2**31) and row["cost_micro_usd"] == 2**63 - 1
    Chain("c").link(row)  # hashable: orjson takes every integer left
    assert row_hash(row) == row["row_hash"]


def test_non_finite_floats_become_null_or_zero_where_a_value_is_needed() -> None:
    row = event_row(make_event(p_strong=float("nan"), ttft_s=float("inf"),
                               duration_s=float("-inf")))
    assert row["p_strong"] is None and row["ttft_s"] is None and row["duration_s"] == 0.0


def test_a_lone_surrogate_is_replaced_so_the_row_can_be_encoded() -> None:
    assert fit_text("ok\ud800") == "ok?"
    assert fit_text("naïve ☃") == "naïve ☃"  # valid text is left alone


def test_an_ordinary_event_is_left_as_it_was() -> None:
    event = make_event(requested_model="auto", tags=("team-a",))
    row = event_row(event)
    assert row["requested_model"] == "auto" and row["tags"] == "team-a"
    assert row["max_output_tokens"] == event.max_output_tokens
    assert row["p_strong"] == round(event.p_strong or 0, 6)


def test_the_task_type_rides_in_the_trace_so_older_rows_hash_as_before() -> None:
    without = event_row(make_event(request_id="r-1"))
    assert "task" not in (without["trace"] or {})
    assert "task" not in without  # no column: rows written before it keep their hash
    with_task = event_row(make_event(request_id="r-1", task="code"))
    assert with_task["trace"]["task"] == "code"
    assert row_hash(with_task) != row_hash(without)
    sure = event_row(make_event(request_id="r-1", task="code", task_p=0.912345))
    assert sure["trace"]["task_p"] == 0.9123 and "task_p" not in with_task["trace"]


def test_the_ttft_prediction_is_recorded_field_by_field_in_declaration_order() -> None:
    note = PredictionNote(source="learned", ttft_s=0.012, wait_s=0.003,
                          prefill_tokens_ahead=120, requests_ahead=2, running=5, samples=40)
    row = event_row(make_event(telemetry=TelemetryNote(running=5, prediction=note)))
    recorded = row["trace"]["telemetry"]["prediction"]
    assert recorded == asdict(note) and list(recorded) == list(asdict(note))
