"""Query results → ReportTable: the columns each report shows and the totals line. Pure."""

from __future__ import annotations

from collections.abc import Sequence

from gateway.audit.records import Row, ts_datetime
from gateway.reports.economics import BackendEconomics
from gateway.reports.queries import CostLine, SavingsLine
from gateway.reports.render import Cell, Column, Kind, ReportTable

Meta = tuple[tuple[str, str | None], ...]


def _share(part: int, whole: int) -> float | None:
    return part / whole if whole else None


def _columns(*spec: tuple[str, Kind]) -> tuple[Column, ...]:
    return tuple(Column(name, kind) for name, kind in spec)


def cost_table(by: str, lines: Sequence[CostLine], meta: Meta) -> ReportTable:
    columns = _columns(
        (by, Kind.TEXT), ("requests", Kind.COUNT), ("errors", Kind.COUNT),
        ("prompt_tokens", Kind.COUNT), ("completion_tokens", Kind.COUNT),
        ("cached_tokens", Kind.COUNT), ("tokens", Kind.COUNT), ("cost_usd", Kind.USD),
    )

    def cells(key: str, n: tuple[int, ...]) -> tuple[Cell, ...]:
        requests, errors, prompt, completion, cached, cost = n
        return (key, requests, errors, prompt, completion, cached, prompt + completion, cost)

    def numbers(x: CostLine) -> tuple[int, ...]:
        return (x.requests, x.errors, x.prompt_tokens, x.completion_tokens, x.cached_tokens,
                x.cost_micro_usd)

    # Days read in order; everything else reads biggest spender first.
    ordered = lines if by == "day" else sorted(lines, key=lambda x: (-x.cost_micro_usd, x.key))
    totals = tuple(sum(col) for col in zip(*(numbers(x) for x in lines), strict=True)) \
        if lines else (0,) * 6
    return ReportTable("cost", columns, tuple(cells(x.key, numbers(x)) for x in ordered),
                       cells("total", totals), meta)


SAVINGS_FIELDS = ("requests", "cost_micro_usd", "baseline_cost_micro_usd",
                  "self_hosted_requests", "api_requests", "self_hosted_tokens", "api_tokens",
                  "sensitive", "sensitive_external", "redacted")


def savings_table(by: str, lines: Sequence[SavingsLine], meta: Meta) -> ReportTable:
    columns = _columns(
        (by, Kind.TEXT), ("requests", Kind.COUNT), ("cost_usd", Kind.USD),
        ("baseline_usd", Kind.USD), ("saved_usd", Kind.USD), ("saved_share", Kind.RATIO),
        ("self_hosted_requests", Kind.COUNT), ("api_requests", Kind.COUNT),
        ("self_hosted_share", Kind.RATIO), ("self_hosted_token_share", Kind.RATIO),
        ("sensitive", Kind.COUNT), ("sensitive_kept_home", Kind.COUNT),
        ("sensitive_external", Kind.COUNT), ("redacted", Kind.COUNT),
    )

    def cells(key: str, n: dict[str, int]) -> tuple[Cell, ...]:
        saved = n["baseline_cost_micro_usd"] - n["cost_micro_usd"]
        served = n["self_hosted_requests"] + n["api_requests"]
        tokens = n["self_hosted_tokens"] + n["api_tokens"]
        return (
            key, n["requests"], n["cost_micro_usd"], n["baseline_cost_micro_usd"], saved,
            _share(saved, n["baseline_cost_micro_usd"]), n["self_hosted_requests"],
            n["api_requests"], _share(n["self_hosted_requests"], served),
            _share(n["self_hosted_tokens"], tokens), n["sensitive"],
            n["sensitive"] - n["sensitive_external"], n["sensitive_external"], n["redacted"],
        )

    def numbers(x: SavingsLine) -> dict[str, int]:
        return {f: getattr(x, f) for f in SAVINGS_FIELDS}

    ordered = lines if by == "day" else sorted(
        lines, key=lambda x: (x.cost_micro_usd - x.baseline_cost_micro_usd, x.key))
    totals = {f: sum(getattr(x, f) for x in lines) for f in SAVINGS_FIELDS}
    return ReportTable("savings", columns, tuple(cells(x.key, numbers(x)) for x in ordered),
                       cells("total", totals), meta)


def economics_table(lines: Sequence[BackendEconomics], meta: Meta) -> ReportTable:
    columns = _columns(
        ("backend", Kind.TEXT), ("zone", Kind.TEXT), ("requests", Kind.COUNT),
        ("errors", Kind.COUNT), ("prompt_tokens", Kind.COUNT),
        ("completion_tokens", Kind.COUNT), ("output_input_ratio", Kind.RATIO),
        ("output_tokens_per_s", Kind.RATE), ("tokens_per_gpu_hour", Kind.RATE),
        ("cost_usd", Kind.USD), ("gpu_cost_usd", Kind.USD), ("usd_per_1k_tokens", Kind.USD),
        ("latency_p50_s", Kind.SECONDS), ("latency_p95_s", Kind.SECONDS),
        ("latency_p99_s", Kind.SECONDS), ("ttft_p50_s", Kind.SECONDS),
        ("ttft_p95_s", Kind.SECONDS), ("ttft_p99_s", Kind.SECONDS),
        ("kv_hit_rate", Kind.RATIO), ("cached_share", Kind.RATIO), ("busy_share", Kind.RATIO),
    )
    rows = tuple(
        (e.backend, e.zone, e.requests, e.errors, e.prompt_tokens, e.completion_tokens,
         e.output_input_ratio, e.output_tokens_per_s, e.tokens_per_gpu_hour, e.cost_micro_usd,
         e.gpu_cost_micro_usd, e.usd_per_1k_micro, *e.latency_s, *e.ttft_s, e.kv_hit_rate,
         e.cached_share, e.busy_share)
        for e in lines
    )
    # No totals line: percentiles and shares of different deployments do not add up.
    return ReportTable("economics", columns, rows, None, meta)


AUDIT_COLUMNS = _columns(
    ("ts", Kind.TEXT), ("request_id", Kind.TEXT), ("tenant", Kind.TEXT), ("key_id", Kind.TEXT),
    ("endpoint", Kind.TEXT), ("requested_model", Kind.TEXT), ("backend", Kind.TEXT),
    ("zone", Kind.TEXT), ("rule", Kind.TEXT), ("status", Kind.COUNT), ("outcome", Kind.TEXT),
    ("error_type", Kind.TEXT), ("prompt_tokens", Kind.COUNT), ("completion_tokens", Kind.COUNT),
    ("cached_tokens", Kind.COUNT), ("cost_usd", Kind.USD), ("baseline_usd", Kind.USD),
    ("duration_s", Kind.SECONDS), ("ttft_s", Kind.SECONDS), ("sensitivity", Kind.TEXT),
    ("redacted", Kind.TEXT), ("spill_over", Kind.TEXT), ("chain_id", Kind.TEXT),
    ("seq", Kind.COUNT),
)
_AUDIT_SOURCE = {"cost_usd": "cost_micro_usd", "baseline_usd": "baseline_cost_micro_usd"}


def _audit_cell(row: Row, name: str) -> Cell:
    value = row[_AUDIT_SOURCE.get(name, name)]
    if name == "ts":
        return ts_datetime(value).isoformat()
    if isinstance(value, bool):
        return "yes" if value else "no"
    if name == "sensitivity":
        return value or None
    return value  # type: ignore[no-any-return]


def audit_table(rows: Sequence[Row], meta: Meta) -> ReportTable:
    return ReportTable(
        "audit", AUDIT_COLUMNS,
        tuple(tuple(_audit_cell(r, c.name) for c in AUDIT_COLUMNS) for r in rows), None, meta,
    )
