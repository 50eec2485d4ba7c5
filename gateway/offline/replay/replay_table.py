"""A policy replay's report as plain text for a terminal; the security line comes first."""

from __future__ import annotations

from gateway.audit.records import ts_datetime
from gateway.budget.pricing import format_usd
from gateway.offline.replay.replay_report import IDLE_FLEET_NOTE, NOT_MOMENTS, Leak, ReplayReport


def render_table(report: ReplayReport) -> str:
    lines = [
        f"policy replay  {report.policy}   {report.since} .. {report.until}",
        f"note       {NOT_MOMENTS}",
        *([f"note       {IDLE_FLEET_NOTE.format(n=report.without_load_state)}"]
          if report.without_load_state else []),
        *(f"unfaithful {n}  {why}; e.g. {', '.join(report.unfaithful_ids.get(why, [])[:5])}"
          for why, n in report.unfaithful.items()),
        "",
        *_leaks(report),
        "",
        f"rows       {report.rows_read} read, {report.replayed} replayed, "
        f"{sum(report.skipped.values())} skipped",
        *(f"  skipped  {n}  {why}" for why, n in report.skipped.items()),
        f"changed    {report.changed} of {report.replayed} decisions "
        f"({_percent(report.changed_share)})",
        "",
        *_matrix(report),
        "",
        *_traffic(report),
        "",
        *_cost(report),
        "",
        *_ttft(report),
        *_refusals(report),
        "",
        f"speed      {report.rows_read} rows in {report.elapsed_s:.2f} s "
        f"({report.rows_per_s:,.0f} rows/s); {report.decisions} decisions computed, the rest "
        "answered from the feature cache",
    ]
    if report.leaks:
        lines.append(f"RESULT     {len(report.leaks)} sensitive requests would leave self_hosted "
                     "without redaction (exit status 3)")
    return "\n".join(lines)


def _leaks(report: ReplayReport) -> list[str]:
    if not report.leaks:
        return [f"sensitive  none of the {report.sensitive} sensitive requests replayed would "
                "leave self_hosted without redaction"]
    rows = [("request id", "time (UTC)", "tenant", "found", "would reach", "rule",
             "recorded")]
    rows += [_leak_row(leak) for leak in report.leaks]
    return [
        f"!!! {len(report.leaks)} SENSITIVE REQUESTS WOULD LEAVE self_hosted WITHOUT REDACTION "
        f"(of {report.sensitive} sensitive requests replayed) !!!",
        *_columns(rows, indent="  "),
    ]


def _leak_row(leak: Leak) -> tuple[str, ...]:
    found = ",".join(leak.categories) + (f" ({','.join(leak.types)})" if leak.types else "")
    recorded = f"{leak.recorded_backend or '-'} ({leak.recorded_zone or '-'})"
    return (
        leak.request_id,
        ts_datetime(leak.ts_us).strftime("%Y-%m-%d %H:%M:%S"),
        leak.tenant,
        found,
        leak.backend + ("" if leak.as_primary else " (as fallback)"),
        leak.rule or "-",
        recorded,
    )


def _matrix(report: ReplayReport) -> list[str]:
    if not report.moves:
        return ["moves      none (nothing replayed)"]
    before = sorted({m.before for m in report.moves})
    after = sorted({m.after for m in report.moves}, key=lambda n: (n.startswith("("), n))
    cells = {(m.before, m.after): f"{m.requests} ({_percent(m.share)})" for m in report.moves}
    rows = [("from \\ to", *after)]
    rows += [(b or "-", *(cells.get((b, a), "-") for a in after)) for b in before]
    return ["moves      recorded primary → new primary (share of requests replayed)",
            *_columns(rows, indent="  ")]


def _traffic(report: ReplayReport) -> list[str]:
    total = report.replayed or 1
    rows = [("backend", "before", "after", "change")]
    rows += [
        (name or "-", _percent(b / total), _percent(a / total), _signed_points((a - b) / total))
        for name, b, a in report.traffic()
    ]
    return ["traffic    share of requests replayed", *_columns(rows, indent="  ")]


def _cost(report: ReplayReport) -> list[str]:
    rows = [("tenant", "requests", "recorded $", "new $", "delta $", "delta")]
    for line in (*report.cost_by_tenant, report.cost):
        rows.append((
            line.tenant, str(line.requests), format_usd(line.recorded_micro_usd),
            format_usd(line.new_micro_usd), _signed_usd(line.delta_micro_usd),
            _relative(line.delta_micro_usd, line.recorded_micro_usd),
        ))
    out = ["cost       recorded tokens re-priced at the new backend's price (requests routed "
           "under both)", *_columns(rows, indent="  ")]
    if report.refused_recorded_micro_usd:
        out.append(f"  (refused by the new policy: ${format_usd(report.refused_recorded_micro_usd)}"
                   " recorded, not in the totals)")
    return out


def _ttft(report: ReplayReport) -> list[str]:
    t = report.ttft
    if t is None:
        return ["TTFT       no recorded predictions to compare"]
    return [
        f"TTFT       predicted, over {t.requests} requests: mean {_ms(t.mean_recorded_s)} → "
        f"{_ms(t.mean_new_s)}; delta mean {_signed_ms(t.mean_delta_s)}, "
        f"p95 {_signed_ms(t.p95_delta_s)}",
    ]


def _refusals(report: ReplayReport) -> list[str]:
    out: list[str] = []
    for kind, reasons in (("denied", report.denied), ("unroutable", report.unroutable)):
        if not reasons:
            continue
        out.append(f"{kind:<10} {sum(reasons.values())} requests")
        out += [f"  {n:>6}  {why}" for why, n in reasons.items()]
    return out


def _columns(rows: list[tuple[str, ...]], indent: str = "") -> list[str]:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return [
        indent + "  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip()
        for row in rows
    ]


def _percent(share: float) -> str:
    return f"{share * 100:.1f} %"


def _signed_points(change: float) -> str:
    return f"{change * 100:+.1f} pt"


def _signed_usd(micro_usd: int) -> str:
    sign = "+" if micro_usd >= 0 else "-"
    return sign + format_usd(abs(micro_usd))


def _relative(delta: int, base: int) -> str:
    return f"{delta / base * 100:+.1f} %" if base else "-"


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:.0f} ms"


def _signed_ms(seconds: float) -> str:
    return f"{seconds * 1000:+.0f} ms"
