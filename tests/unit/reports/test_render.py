"""One ReportTable, three renderings: money as 6-decimal USD, CSV that parses back."""

from __future__ import annotations

import csv
import io

import orjson

from gateway.reports.render import Column, Format, Kind, ReportTable, render, to_csv, to_json

TABLE = ReportTable(
    "cost",
    (Column("tenant"), Column("requests", Kind.COUNT), Column("cost_usd", Kind.USD),
     Column("share", Kind.RATIO), Column("p95_s", Kind.SECONDS), Column("tok_s", Kind.RATE)),
    (("acme", 3, 1_234_567, 0.123456, 0.5, 41.26), ('comma, "quoted"', 1, 5, None, None, None)),
    ("total", 4, 1_234_572, None, None, None),
    (("since", "2026-11-01T00:00:00+00:00"), ("tenant", None), ("by", "tenant")),
)


def test_json_keeps_types_and_shows_money_as_usd() -> None:
    body = orjson.loads(to_json(TABLE))
    assert body["report"] == "cost" and body["by"] == "tenant" and body["tenant"] is None
    assert body["rows"][0] == {"tenant": "acme", "requests": 3, "cost_usd": "1.234567",
                               "share": 0.1235, "p95_s": 0.5, "tok_s": 41.3}
    assert body["rows"][1]["share"] is None
    assert body["totals"]["cost_usd"] == "1.234572"
    assert [c["kind"] for c in body["columns"]] == ["text", "count", "usd", "ratio", "seconds",
                                                    "rate"]


def test_csv_parses_back_to_the_rows() -> None:
    rows = list(csv.reader(io.StringIO(to_csv(TABLE))))
    assert rows[0] == ["tenant", "requests", "cost_usd", "share", "p95_s", "tok_s"]
    assert rows[1] == ["acme", "3", "1.234567", "0.1235", "0.5000", "41.3"]
    assert rows[2] == ['comma, "quoted"', "1", "0.000005", "", "", ""]
    assert len(rows) == 3  # no totals line in CSV


def test_the_text_table_aligns_columns_and_ends_with_totals() -> None:
    text = render(TABLE, Format.TABLE)
    lines = text.splitlines()
    assert lines[0] == "cost: since 2026-11-01T00:00:00+00:00, by tenant"
    assert lines[1].startswith("tenant") and lines[-1].startswith("total")
    assert set(lines[-2].replace(" ", "")) == {"-"}
    assert "1.234567" in lines[2] and lines[3].endswith("-")  # empty cells show as "-"
    # Numbers align on the right edge of their column.
    edge = lines[1].index("requests") + len("requests")
    assert lines[2][edge - 1] == "3" and lines[-1][edge - 1] == "4"


def test_an_empty_report_says_so() -> None:
    empty = ReportTable("audit", TABLE.columns, ())
    assert render(empty, Format.TABLE).endswith("(no rows)\n")
    assert orjson.loads(render(empty, Format.JSON))["rows"] == []
    assert render(empty, Format.CSV).count("\n") == 1


def test_csv_text_a_spreadsheet_would_run_as_a_formula_is_neutralised() -> None:
    names = ("=cmd|' /C calc'!A0", "+1+1", "-2+3", "@SUM(A1)", "\tx", "plain-model")
    table = ReportTable("cost", (Column("model"), Column("cost_usd", Kind.USD)),
                        tuple((name, -5) for name in names), None, ())
    rows = list(csv.reader(io.StringIO(to_csv(table))))[1:]
    assert [r[0] for r in rows] == ["'=cmd|' /C calc'!A0", "'+1+1", "'-2+3", "'@SUM(A1)",
                                    "'\tx", "plain-model"]
    assert {r[1] for r in rows} == {"-0.000005"}  # numbers stay numbers, sign and all
