"""One value type for every report, and its three renderings: an aligned text table, CSV and
JSON. Cells stay typed (money as integer micro-USD) until here, where each column's kind says
how to show it."""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass, field
from enum import StrEnum

import orjson

from gateway.budget.pricing import format_usd

Cell = str | int | float | None


class Kind(StrEnum):
    TEXT = "text"
    COUNT = "count"  # an integer
    USD = "usd"  # integer micro-USD, shown as USD with 6 decimals
    RATIO = "ratio"  # a share or ratio, 4 decimals
    SECONDS = "seconds"  # 4 decimals
    RATE = "rate"  # a throughput, 1 decimal


@dataclass(frozen=True, slots=True)
class Column:
    name: str
    kind: Kind = Kind.TEXT


@dataclass(frozen=True, slots=True)
class ReportTable:
    report: str
    columns: tuple[Column, ...]
    rows: tuple[tuple[Cell, ...], ...]
    totals: tuple[Cell, ...] | None = None
    # What was asked and what comes next (since, until, tenant, by, next_cursor, notes).
    meta: tuple[tuple[str, str | None], ...] = field(default_factory=tuple)


class Format(StrEnum):
    TABLE = "table"
    CSV = "csv"
    JSON = "json"


def _json_cell(value: Cell, kind: Kind) -> Cell:
    if value is None:
        return None
    if kind is Kind.USD:
        return format_usd(int(value))
    if kind in (Kind.RATIO, Kind.SECONDS) and isinstance(value, float):
        return round(value, 4)
    if kind is Kind.RATE and isinstance(value, float):
        return round(value, 1)
    return value


def _text_cell(value: Cell, kind: Kind) -> str:
    shown = _json_cell(value, kind)
    if shown is None:
        return ""
    if isinstance(shown, float):
        return f"{shown:.1f}" if kind is Kind.RATE else f"{shown:.4f}"
    return str(shown)


def to_json(table: ReportTable) -> bytes:
    def record(cells: tuple[Cell, ...]) -> dict[str, Cell]:
        return {c.name: _json_cell(v, c.kind) for c, v in zip(table.columns, cells, strict=True)}

    body = {
        "report": table.report,
        **dict(table.meta),
        "columns": [{"name": c.name, "kind": c.kind.value} for c in table.columns],
        "rows": [record(r) for r in table.rows],
        "totals": None if table.totals is None else record(table.totals),
    }
    return orjson.dumps(body, option=orjson.OPT_INDENT_2)


# A spreadsheet runs a cell that starts with one of these as a formula; text cells hold names
# clients chose (a model name "=cmd|..." lands in the cost and audit reports).
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def to_csv(table: ReportTable) -> str:
    """Header and rows only (no totals line, no metadata): every line parses the same. Text
    that a spreadsheet would run as a formula is prefixed with ' (OWASP's advice)."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow([c.name for c in table.columns])
    for row in table.rows:
        writer.writerow([_csv_cell(_text_cell(v, c.kind), c.kind)
                         for c, v in zip(table.columns, row, strict=True)])
    return out.getvalue()


def _csv_cell(text: str, kind: Kind) -> str:
    return "'" + text if kind is Kind.TEXT and text.startswith(FORMULA_STARTS) else text


def to_text(table: ReportTable) -> str:
    """For a terminal: metadata lines, then columns aligned, numbers to the right."""
    lines = [f"{table.report}: " + ", ".join(f"{k} {v}" for k, v in table.meta if v is not None)]
    grid = [[c.name for c in table.columns]]
    for row in (*table.rows, *(() if table.totals is None else (table.totals,))):
        grid.append([_text_cell(v, c.kind) or "-" for c, v in zip(table.columns, row,
                                                                  strict=True)])
    widths = [max(len(r[i]) for r in grid) for i in range(len(table.columns))]
    for n, cells in enumerate(grid):
        if table.totals is not None and n == len(grid) - 1:
            lines.append("  ".join("-" * w for w in widths))
        lines.append("  ".join(
            cell.ljust(w) if c.kind is Kind.TEXT else cell.rjust(w)
            for cell, w, c in zip(cells, widths, table.columns, strict=True)
        ).rstrip())
    if not table.rows:
        lines.append("(no rows)")
    return "\n".join(lines) + "\n"


def render(table: ReportTable, fmt: Format) -> str:
    if fmt is Format.JSON:
        return to_json(table).decode()
    if fmt is Format.CSV:
        return to_csv(table)
    return to_text(table)
