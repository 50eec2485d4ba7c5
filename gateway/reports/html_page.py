"""The report page: PageData → one self-contained HTML document (inline CSS and SVG, no
script, nothing fetched), for finance and security readers. Pure; every name is escaped."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date, datetime
from html import escape

from gateway.reports.html_controls import CSS as CONTROLS_CSS
from gateway.reports.html_economics import economics_section
from gateway.reports.page_data import QUANTILES, PageData, Share
from gateway.reports.svg_charts import (
    HALF_WIDTH,
    LINE_COLOUR,
    Series,
    colour,
    grouped_bars,
    horizontal_bars,
    stacked_bars,
)

# Forms may only go back to the page itself (the served page's range and tenant controls).
PAGE_CSP = "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'self'"
BASELINE_COLOUR = "#9aa3ad"
PERCENTILE_COLOURS = ("#9ecae1", "#4292c6", "#08519c")  # p50, p95, p99: light to dark

CSS = """
:root { color-scheme: light; }
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: #1d232a;
  background: #f6f7f9; margin: 0; }
main { max-width: 1100px; margin: 0 auto; padding: 24px 28px 40px; }
h1 { font-size: 22px; margin: 0 0 4px; }
h2 { font-size: 16px; margin: 0 0 4px; }
h3 { font-size: 13px; margin: 8px 0 2px; color: #46505a; font-weight: 600; }
.meta, .note, footer { color: #5b6670; font-size: 12.5px; }
section { background: #fff; border: 1px solid #e1e5ea; border-radius: 8px; padding: 16px 18px;
  margin-top: 16px; }
.cards { display: grid; grid-template-columns: repeat(auto-fit, minmax(160px, 1fr)); gap: 12px;
  background: none; border: 0; padding: 0; }
.card { background: #fff; border: 1px solid #e1e5ea; border-radius: 8px; padding: 12px 14px; }
.card .k { color: #5b6670; font-size: 12px; text-transform: uppercase; letter-spacing: .04em; }
.card .v { font-size: 22px; font-weight: 600; font-variant-numeric: tabular-nums; }
.card .s { color: #5b6670; font-size: 12px; }
.two { display: grid; grid-template-columns: 1fr 1fr; gap: 18px; }
.chart { width: 100%; height: auto; display: block; }
.chart .tick { font-size: 11px; fill: #5b6670; }
.chart .label, .chart .value { font-size: 12px; fill: #1d232a; }
.legend { list-style: none; padding: 0; margin: 6px 0 4px; display: flex; flex-wrap: wrap;
  gap: 4px 16px; font-size: 12.5px; }
.legend li { display: flex; align-items: center; gap: 6px; }
table { border-collapse: collapse; width: 100%; margin-top: 10px;
  font-variant-numeric: tabular-nums; }
th, td { text-align: right; padding: 5px 8px; border-bottom: 1px solid #edf0f3; }
th:first-child, td:first-child { text-align: left; }
th { color: #5b6670; font-weight: 600; font-size: 12px; }
.empty { text-align: center; padding: 48px 18px; }
.empty h2 { font-size: 18px; }
footer { margin-top: 18px; }
@media (max-width: 760px) { .two { grid-template-columns: 1fr; } }
"""


def usd(micro: float) -> str:
    """Micro-USD as dollars, with the precision the size deserves; the sign before the
    dollar sign (-$0.03)."""
    if micro < 0:
        return "-" + usd(-micro)
    dollars = micro / 1_000_000
    if dollars >= 1000:
        return f"${dollars:,.0f}"
    if dollars >= 0.01 or dollars == 0:
        return f"${dollars:,.2f}"
    return f"${dollars:.4f}".rstrip("0").rstrip(".") if dollars >= 0.0001 else "<$0.0001"


def seconds(value: float) -> str:
    if value < 1:
        return f"{value * 1000:.3g} ms"
    return f"{value:.3g} s"


def share(part: int, whole: int) -> str:
    return f"{part / whole:.1%}" if whole else "–"


def render_page(data: PageData, extra: Sequence[str] = (), controls: str = "") -> str:
    """`extra`: sections rendered elsewhere (already escaped), after the page's own;
    `controls`: the served page's range and tenant form (html_controls.py), under the title."""
    rng = data.range
    scope = f"tenant {rng.tenant}" if rng.tenant else "all tenants"
    title = f"Gateway report · {rng.since} – {rng.until}"
    head = (
        f"<h1>LLM gateway report</h1><p class=\"meta\">{rng.since} to {rng.until} (UTC, "
        f"{len(data.days)} days) · {escape(scope)} · generated "
        f"{data.generated_at:%Y-%m-%d %H:%M} UTC</p>"
    )
    head += controls
    if data.empty:
        parts = [head, '<section class="empty" id="empty"><h2>No requests in this range</h2>'
                 '<p class="note">Nothing was recorded for this range and tenant. Widen the '
                 "range (since, until) or check the tenant's name.</p></section>"]
    else:
        parts = [head, _cards(data), _cost(data), _mix(data), _latency(data), _savings(data),
                 economics_section(data.economics), *extra]
    parts.append("<footer>From the audit rollups (audit_daily, audit_latency) and the recorded "
                 "GPU deployments. Costs in USD; "
                 "percentiles are read from histograms with 10 % wide buckets.</footer>")
    return (
        '<!doctype html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        # Also when opened from a file: nothing in the page may run or load anything.
        f'<meta http-equiv="Content-Security-Policy" content="{PAGE_CSP}">'
        f"<title>{escape(title)}</title><style>{CSS}{CONTROLS_CSS if controls else ''}"
        "</style></head>"
        f"<body><main>{''.join(parts)}</main></body></html>"
    )


def _card(key: str, value: str, sub: str = "") -> str:
    return (f'<div class="card"><div class="k">{escape(key)}</div><div class="v">'
            f'{escape(value)}</div><div class="s">{escape(sub)}</div></div>')


def _cards(data: PageData) -> str:
    saved = data.baseline_cost_micro_usd - data.cost_micro_usd
    has_baseline = data.baseline_cost_micro_usd > 0
    return '<section class="cards" id="summary">' + "".join((
        _card("Requests", f"{data.requests:,}", f"{data.errors:,} errors"),
        _card("Cost", usd(data.cost_micro_usd),
              f"APIs {usd(data.cost_micro_usd - data.gpu_micro_usd)} + GPU-hours "
              f"{usd(data.gpu_micro_usd)}"),
        _idle_card(data),
        _card("Baseline cost", usd(data.baseline_cost_micro_usd) if has_baseline else "–",
              "all on the baseline backend" if has_baseline else "no baseline recorded"),
        _card("Saved", usd(saved) if has_baseline else "–",
              f"{share(saved, data.baseline_cost_micro_usd)} of baseline: routing "
              f"{usd(routing_saved(data))}, idle GPUs {usd(-data.idle_micro_usd)}"
              if has_baseline else ""),
        _card("Served self-hosted", share(data.self_hosted_requests, data.requests),
              f"{data.self_hosted_requests:,} requests"),
        _card("Sensitive kept at home", f"{data.sensitive_kept_home:,} of {data.sensitive:,}",
              (share(data.sensitive_kept_home, data.sensitive) if data.sensitive
               else "no sensitive requests")
              + (f"; {data.sensitive_approved:,} to approved vendors"
                 if data.sensitive_approved else "")),
    )) + "</section>"


def _idle_card(data: PageData) -> str:
    if data.range.tenant is not None:  # idle GPUs are nobody's: not zero, just not theirs
        return _card("Idle GPUs", "–", "not attributed to tenants")
    return _card("Idle GPUs", usd(data.idle_micro_usd),
                 f"{share(data.idle_micro_usd, data.gpu_micro_usd)} of the GPU-hours paid"
                 if data.gpu_micro_usd else "no GPU-hours paid")


def _legend(entries: Sequence[tuple[str, str]], dashed: str | None = None) -> str:
    items = [
        f'<li><svg width="12" height="12" aria-hidden="true"><rect width="12" height="12" '
        f'rx="2" fill="{c}"/></svg>{escape(name)}</li>'
        for name, c in entries
    ]
    if dashed is not None:
        items.append(
            f'<li><svg width="22" height="12" aria-hidden="true"><line x1="0" x2="22" y1="6" '
            f'y2="6" stroke="{LINE_COLOUR}" stroke-width="2" stroke-dasharray="5 3"/></svg>'
            f"{escape(dashed)}</li>"
        )
    return f'<ul class="legend">{"".join(items)}</ul>'


def _bin_label(when: date | datetime, many: bool, first: date | datetime) -> str:
    if isinstance(when, datetime):  # an hour: its day too once the bars cross midnight
        return f"{when:%H:00}" if when.date() == _day_of(first) else f"{when:%b %d %H:00}"
    return f"{when:%b %d}" if many else when.isoformat()


def _day_of(when: date | datetime) -> date:
    return when.date() if isinstance(when, datetime) else when


def _cost(data: PageData) -> str:
    """Cost per day; per hour when the data is young (a day or two), so a deployment an hour
    old sees its hours rather than one bar."""
    if data.hourly is not None:
        bins: tuple[date | datetime, ...] = data.hourly.hours
        by_bin = {b: data.hourly.cost_by_hour.get(b, (0,) * len(bins)) for b in data.backends}
        baseline, unit = data.hourly.baseline_by_hour, "hour"
    else:
        bins, by_bin = data.days, data.cost_by_day
        baseline, unit = data.baseline_by_day, "day"
    stacks = [Series(b, by_bin[b], colour(i)) for i, b in enumerate(data.backends)]
    has_baseline = any(baseline)
    line = Series("baseline", baseline, LINE_COLOUR) if has_baseline else None
    # Bins before the first with any cost are left out: a deployment an hour old gets one
    # bar, not 29 empty days before it.
    first = next((i for i in range(len(bins))
                  if any(s.values[i] for s in stacks) or baseline[i]), 0)
    if first:
        stacks = [Series(s.name, s.values[first:], s.colour) for s in stacks]
        line = None if line is None else Series(line.name, line.values[first:], line.colour)
    shown = bins[first:]
    labels = [_bin_label(b, len(shown) > 7, shown[0]) for b in shown]
    chart = stacked_bars(labels, stacks, line, usd,
                         f"Cost per {unit} by backend, with the baseline")
    note = ("The dashed line is what the same requests would have cost on the policy's "
            "baseline backend." if has_baseline else
            "No baseline cost was recorded in this range (the policy names no baseline).")
    if data.hourly is not None:
        note += (" Hours, as the data is under two days old: each day's cost (GPU-hours "
                 "paid, as every report prices them) spread over its hours by the requests "
                 "that arrived in them, idle GPU-hours by the paid minutes nobody used.")
    legend = _legend([(s.name, s.colour) for s in stacks], "baseline" if has_baseline else None)
    return (f'<section id="cost"><h2>Cost per {unit}</h2><p class="note">Stacked by backend. '
            f"{note}</p>{legend}{chart}</section>")


def _mix(data: PageData) -> str:
    palette = {b: colour(i) for i, b in enumerate(data.backends)}
    total = data.requests

    def fmt(v: float) -> str:
        return f"{int(v):,} · {share(int(v), total)}"

    def chart(shares: Sequence[Share], title: str, by_backend: bool) -> str:
        names = [s.name for s in shares]
        tints = [palette.get(n, "#888888") for n in names] if by_backend else None
        counts = [s.requests for s in shares]
        return horizontal_bars(names, [Series("requests", counts, "#4f5b66")], fmt, title,
                               label_width=150, row_colours=tints, width=HALF_WIDTH)

    return (
        '<section id="mix"><h2>Route mix</h2><p class="note">Share of requests by the backend '
        'that served them and by the policy rule that chose it.</p><div class="two">'
        f"<div><h3>By backend</h3>{chart(data.backend_mix, 'Requests by backend', True)}</div>"
        f"<div><h3>By rule</h3>{chart(data.rule_mix, 'Requests by rule', False)}</div>"
        "</div></section>"
    )


def _latency(data: PageData) -> str:
    if not data.latency:
        return ('<section id="latency"><h2>Latency percentiles</h2><p class="note">No '
                "successful requests with timings in this range.</p></section>")
    names = [row.backend for row in data.latency]
    labels = [f"p{round(q * 100)}" for q in QUANTILES]

    def chart(pick: str, title: str) -> str:
        if all(v is None for row in data.latency for v in getattr(row, pick)):
            return '<p class="note">None recorded in this range.</p>'
        series = [
            Series(label, [getattr(row, pick)[k] for row in data.latency], PERCENTILE_COLOURS[k])
            for k, label in enumerate(labels)
        ]
        return grouped_bars(names, series, seconds, title)

    legend = _legend(list(zip(labels, PERCENTILE_COLOURS, strict=True)))
    return (
        '<section id="latency"><h2>Latency percentiles</h2><p class="note">Per backend, of '
        "successful requests; logarithmic scale.</p>" + legend + '<div class="two">'
        f"<div><h3>Total time</h3>{chart('total_s', 'Total time percentiles')}</div>"
        f"<div><h3>Time to first token</h3>{chart('ttft_s', 'TTFT percentiles')}</div>"
        "</div></section>"
    )


def routing_saved(data: PageData) -> int:
    """Baseline − what serving the traffic cost at the margin (API spend, busy GPU share)."""
    return data.baseline_cost_micro_usd - (data.cost_micro_usd - data.idle_micro_usd)


def _savings_split(data: PageData) -> str:
    routing = routing_saved(data)
    text = (f"Saved {usd(routing - data.idle_micro_usd)} = routing savings on the traffic "
            f"served {usd(routing)} − idle GPU-hours {usd(data.idle_micro_usd)} (of "
            f"{usd(data.gpu_micro_usd)} GPU-hours paid).")
    if data.idle_micro_usd > abs(routing):
        # GPU-hours are charged by the wall clock: with no traffic the result swings
        # negative, and the reader should see that it is capacity, not routing.
        text += (" Idle capacity dominates: the GPUs paid by the clock cost more than routing "
                 "saved, so this result moves with time, not with routing.")
    return text


def _savings(data: PageData) -> str:
    has_baseline = data.baseline_cost_micro_usd > 0
    names = [t.tenant for t in data.tenants]
    series = [Series("actual", [t.cost_micro_usd for t in data.tenants], colour(0))]
    if has_baseline:
        series.append(Series("baseline", [t.baseline_cost_micro_usd for t in data.tenants],
                             BASELINE_COLOUR))
    chart = horizontal_bars(names, series, usd, "Actual against baseline cost per tenant")
    rows = "".join(
        f"<tr><td>{escape(t.tenant)}</td><td>{t.requests:,}</td><td>{usd(t.cost_micro_usd)}</td>"
        f"<td>{usd(t.baseline_cost_micro_usd) if has_baseline else '–'}</td>"
        f"<td>{usd(t.baseline_cost_micro_usd - t.cost_micro_usd) if has_baseline else '–'}</td>"
        f"<td>{share(t.baseline_cost_micro_usd - t.cost_micro_usd, t.baseline_cost_micro_usd)}"
        "</td></tr>"
        for t in data.tenants
    )
    saved = data.baseline_cost_micro_usd - data.cost_micro_usd
    if data.idle_micro_usd:
        rows += (f"<tr><td>(idle GPUs)</td><td>0</td><td>{usd(data.idle_micro_usd)}</td>"
                 f"<td>–</td><td>{usd(-data.idle_micro_usd)}</td><td>–</td></tr>")
    total = (f"<tr><th>Total</th><th>{data.requests:,}</th><th>{usd(data.cost_micro_usd)}</th>"
             f"<th>{usd(data.baseline_cost_micro_usd) if has_baseline else '–'}</th>"
             f"<th>{usd(saved) if has_baseline else '–'}</th>"
             f"<th>{share(saved, data.baseline_cost_micro_usd)}</th></tr>")
    note = ("Actual cost (API spend + each tenant's share of the GPU-hours paid, by tokens) "
            "against the cost had every request gone to the baseline backend; the idle GPUs "
            f"({usd(data.idle_micro_usd)}) are in the total, on no tenant. "
            + _savings_split(data)
            if has_baseline else "No baseline cost was recorded: actual cost only.")
    legend = _legend([(s.name, s.colour) for s in series])
    return (
        f'<section id="savings"><h2>Savings against the baseline</h2><p class="note">{note} '
        f"Served self-hosted: {share(data.self_hosted_requests, data.requests)} of requests; "
        f"sensitive requests kept at home: {data.sensitive_kept_home:,} of "
        f"{data.sensitive:,}"
        + (f", sent to approved vendors under their approval: {data.sensitive_approved:,}"
           if data.sensitive_approved else "")
        + f".</p>{legend}{chart}"
        "<table><thead><tr><th>Tenant</th><th>Requests</th><th>Cost</th><th>Baseline</th>"
        f"<th>Saved</th><th>Saved %</th></tr></thead><tbody>{rows}</tbody>"
        f"<tfoot>{total}</tfoot></table></section>"
    )
