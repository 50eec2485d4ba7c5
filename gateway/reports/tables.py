"""Query results → ReportTable: the columns each report shows and the totals line. Pure."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from gateway.audit.records import Row, ts_datetime
from gateway.reports.breakdown import Line, total
from gateway.reports.cost_model import IDLE
from gateway.reports.economics import BackendEconomics
from gateway.reports.render import Cell, Column, Kind, ReportTable
from gateway.reports.shadow_cost import SHADOW_LINE

TRAILING = (IDLE, SHADOW_LINE)  # lines of no request's own: after the others, in this order

Meta = tuple[tuple[str, str | None], ...]


def _share(part: int, whole: int) -> float | None:
    return part / whole if whole else None


def _columns(*spec: tuple[str, Kind]) -> tuple[Column, ...]:
    return tuple(Column(name, kind) for name, kind in spec)


def _ordered(by: str, lines: Sequence[Line], rank: Callable[[Line], int]) -> list[Line]:
    """Days read in order; everything else by `rank`; the idle-GPU and shadow-judging lines
    (nobody's traffic) always last."""
    idle = [x for x in lines if x.key in TRAILING]
    rest = [x for x in lines if x.key not in TRAILING]
    if by != "day":
        rest.sort(key=lambda x: (rank(x), x.key))
    return rest + idle


def cost_table(by: str, lines: Sequence[Line], meta: Meta) -> ReportTable:
    """cost_usd = api_cost_usd (what metered APIs charged) + gpu_cost_usd (this line's share
    of the GPU-hours paid); the idle-GPU line holds what no request used."""
    columns = _columns(
        (by, Kind.TEXT), ("requests", Kind.COUNT), ("errors", Kind.COUNT),
        ("prompt_tokens", Kind.COUNT), ("completion_tokens", Kind.COUNT),
        ("cached_tokens", Kind.COUNT), ("tokens", Kind.COUNT), ("api_cost_usd", Kind.USD),
        ("gpu_cost_usd", Kind.USD), ("cost_usd", Kind.USD),
    )

    def cells(x: Line) -> tuple[Cell, ...]:
        return (x.key, x.requests, x.errors, x.prompt_tokens, x.completion_tokens,
                x.cached_tokens, x.prompt_tokens + x.completion_tokens, x.api_micro_usd,
                x.gpu_micro_usd, x.cost_micro_usd)

    ordered = _ordered(by, lines, lambda x: -x.cost_micro_usd)
    return ReportTable("cost", columns, tuple(cells(x) for x in ordered),
                       cells(total(list(lines))), meta)


def savings_table(by: str, lines: Sequence[Line], meta: Meta) -> ReportTable:
    """saved_usd = baseline_usd − cost_usd, with cost_usd as in the cost report: the GPU-hours
    paid count against the savings, idle ones included (on their own line). It splits into
    routing_saved_usd (baseline − what serving the traffic cost at the margin) less
    idle_gpu_usd (capacity paid by the clock that no request used)."""
    columns = _columns(
        (by, Kind.TEXT), ("requests", Kind.COUNT), ("api_cost_usd", Kind.USD),
        ("gpu_cost_usd", Kind.USD), ("cost_usd", Kind.USD),
        ("baseline_usd", Kind.USD), ("saved_usd", Kind.USD), ("saved_share", Kind.RATIO),
        ("self_hosted_requests", Kind.COUNT), ("api_requests", Kind.COUNT),
        ("self_hosted_share", Kind.RATIO), ("self_hosted_token_share", Kind.RATIO),
        ("sensitive", Kind.COUNT), ("sensitive_kept_home", Kind.COUNT),
        ("sensitive_external", Kind.COUNT), ("redacted", Kind.COUNT),
        ("sensitive_approved", Kind.COUNT),
        ("routing_saved_usd", Kind.USD), ("idle_gpu_usd", Kind.USD),
    )

    def cells(x: Line) -> tuple[Cell, ...]:
        served = x.self_hosted_requests + x.api_requests
        tokens = x.self_hosted_tokens + x.api_tokens
        return (
            x.key, x.requests, x.api_micro_usd, x.gpu_micro_usd, x.cost_micro_usd,
            x.baseline_micro_usd, x.saved_micro_usd,
            _share(x.saved_micro_usd, x.baseline_micro_usd), x.self_hosted_requests,
            x.api_requests, _share(x.self_hosted_requests, served),
            _share(x.self_hosted_tokens, tokens), x.sensitive,
            x.sensitive - x.sensitive_external, x.sensitive_external, x.redacted,
            x.sensitive_approved,
            x.routing_saved_micro_usd, x.idle_gpu_micro_usd,
        )

    ordered = _ordered(by, lines, lambda x: -x.saved_micro_usd)
    return ReportTable("savings", columns, tuple(cells(x) for x in ordered),
                       cells(total(list(lines))), meta)


def economics_table(lines: Sequence[BackendEconomics], meta: Meta) -> ReportTable:
    columns = _columns(
        ("backend", Kind.TEXT), ("zone", Kind.TEXT), ("requests", Kind.COUNT),
        ("errors", Kind.COUNT), ("prompt_tokens", Kind.COUNT),
        ("completion_tokens", Kind.COUNT), ("output_input_ratio", Kind.RATIO),
        ("decode_tokens_per_s", Kind.RATE), ("prompt_tokens_per_gpu_s", Kind.RATE),
        ("output_tokens_per_gpu_s", Kind.RATE), ("tokens_per_gpu_hour", Kind.RATE),
        ("gpu_hours_paid", Kind.RATIO), ("api_cost_usd", Kind.USD),
        ("gpu_cost_usd", Kind.USD), ("idle_gpu_cost_usd", Kind.USD),
        ("usd_per_1k_tokens", Kind.USD),
        ("latency_p50_s", Kind.SECONDS), ("latency_p95_s", Kind.SECONDS),
        ("latency_p99_s", Kind.SECONDS), ("ttft_p50_s", Kind.SECONDS),
        ("ttft_p95_s", Kind.SECONDS), ("ttft_p99_s", Kind.SECONDS),
        ("kv_hit_rate", Kind.RATIO), ("cached_share", Kind.RATIO), ("busy_share", Kind.RATIO),
        ("gpu_util", Kind.RATIO), ("gpu_memory_used_bytes", Kind.COUNT),
    )
    rows = tuple(
        (e.backend, e.zone, e.requests, e.errors, e.prompt_tokens, e.completion_tokens,
         e.output_input_ratio, e.decode_tokens_per_s, e.prompt_tokens_per_gpu_s,
         e.output_tokens_per_gpu_s, e.tokens_per_gpu_hour, e.gpu_hours_paid,
         e.api_cost_micro_usd, e.gpu_cost_micro_usd, e.idle_gpu_micro_usd, e.usd_per_1k_micro,
         *e.latency_s, *e.ttft_s, e.kv_hit_rate, e.cached_share, e.busy_share, e.gpu_util,
         e.gpu_memory_used_bytes)
        for e in lines
    )
    # No totals line: percentiles and shares of different deployments do not add up (the
    # money totals are in the metadata: gpu_cost_usd, idle_gpu_cost_usd, api_cost_usd).
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
