"""The report page's unit-economics section: per backend, what a token costs on owned GPUs
against each API's $/1K, tokens per GPU-hour paid, the busy share of the GPUs, per-stream
decode speed, latency and the KV-cache hit rate. Pure; every name is escaped."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from html import escape

from gateway.reports.economics import BackendEconomics
from gateway.reports.svg_charts import HALF_WIDTH, Series, horizontal_bars

SELF_HOSTED_COLOUR = "#009E73"
API_COLOUR = "#E69F00"


def _usd(micro: float) -> str:
    dollars = micro / 1_000_000
    sign = "-" if dollars < 0 else ""
    return f"{sign}${abs(dollars):,.4f}" if abs(dollars) < 1 else f"{sign}${abs(dollars):,.2f}"


def _hours(value: float) -> str:
    """Enough decimals that GPU-hours reconcile with the cost beside them (0.0076, not 0.0)."""
    return f"{value:,.1f}" if value >= 100 else f"{value:,.2f}" if value >= 1 else f"{value:.4f}"


def _maybe(value: float | None, fmt: Callable[[float], str]) -> str:
    return "–" if value is None else fmt(value)


def _bars(rows: Sequence[BackendEconomics], pick: Callable[[BackendEconomics], float | None],
          fmt: Callable[[float], str], title: str) -> str:
    shown = [r for r in rows if pick(r) is not None]
    if not shown:
        return '<p class="note">Nothing to show in this range.</p>'
    tints = [SELF_HOSTED_COLOUR if r.gpu_cost_micro_usd is not None else API_COLOUR
             for r in shown]
    values = [float(pick(r) or 0.0) for r in shown]
    return horizontal_bars([r.backend for r in shown], [Series(title, values, "#4f5b66")], fmt,
                           title, label_width=150, row_colours=tints, width=HALF_WIDTH)


def economics_section(rows: Sequence[BackendEconomics]) -> str:
    if not rows:
        return ""
    owned = [r for r in rows if r.gpu_cost_micro_usd is not None]
    per_1k = _bars(rows, lambda r: r.usd_per_1k_micro, _usd,
                   "$ per 1K tokens: GPU-hours paid (self-hosted) or API charges")
    busy = _bars(owned, lambda r: r.busy_share, lambda v: f"{v:.1%}",
                 "Busy share of the GPU-hours paid")
    per_hour = _bars(owned, lambda r: r.tokens_per_gpu_hour, lambda v: f"{v:,.0f}",
                     "Tokens per GPU-hour paid")
    decode = _bars(rows, lambda r: r.decode_tokens_per_s, lambda v: f"{v:,.1f}",
                   "Decode tokens/s per stream")
    body = "".join(
        f"<tr><td>{escape(r.backend)}</td><td>{r.prompt_tokens + r.completion_tokens:,}</td>"
        f"<td>{_maybe(r.gpu_hours_paid, _hours)}</td>"
        f"<td>{_maybe(r.tokens_per_gpu_hour, lambda v: f'{v:,.0f}')}</td>"
        f"<td>{_maybe(r.usd_per_1k_micro, _usd)}</td>"
        f"<td>{_maybe(r.idle_gpu_micro_usd, _usd)}</td>"
        f"<td>{_maybe(r.busy_share, lambda v: f'{v:.1%}')}</td>"
        f"<td>{_maybe(r.gpu_util, lambda v: f'{v:.1%}')}</td>"
        f"<td>{_maybe(r.prompt_tokens_per_gpu_s, lambda v: f'{v:,.0f}')} / "
        f"{_maybe(r.output_tokens_per_gpu_s, lambda v: f'{v:,.0f}')}</td>"
        f"<td>{_maybe(r.decode_tokens_per_s, lambda v: f'{v:,.1f}')}</td>"
        f"<td>{_maybe(r.output_input_ratio, lambda v: f'{v:.2f}')}</td>"
        f"<td>{_maybe(r.kv_hit_rate, lambda v: f'{v:.1%}')}</td>"
        f"<td>{_maybe(r.latency_s[0], lambda v: f'{v:.3g}')} / "
        f"{_maybe(r.latency_s[1], lambda v: f'{v:.3g}')} / "
        f"{_maybe(r.latency_s[2], lambda v: f'{v:.3g}')}</td>"
        f"<td>{_maybe(r.ttft_s[0], lambda v: f'{v:.3g}')} / "
        f"{_maybe(r.ttft_s[1], lambda v: f'{v:.3g}')}</td></tr>"
        for r in rows
    )
    return (
        '<section id="economics"><h2>Unit economics</h2><p class="note">Self-hosted '
        "(green) costs the GPU-hours paid while the policy declared the deployment, busy or "
        "not; APIs (amber) cost what they charged. Per-GPU throughput is over the minutes "
        "the deployment served traffic.</p>"
        f'<div class="two"><div><h3>$ per 1K tokens</h3>{per_1k}</div>'
        f"<div><h3>Busy share</h3>{busy}</div></div>"
        f'<div class="two"><div><h3>Tokens per GPU-hour</h3>{per_hour}</div>'
        f"<div><h3>Decode speed</h3>{decode}</div></div>"
        "<table><thead><tr><th>Backend</th><th>Tokens</th><th>GPU-hours paid</th>"
        "<th>Tokens / GPU-hour</th><th>$ / 1K tokens</th><th>Idle GPU cost</th><th>Busy</th>"
        "<th>GPU util (DCGM)</th>"
        "<th>Prompt / output tok/s per GPU</th><th>Decode tok/s</th><th>Out:in</th>"
        "<th>KV hit</th><th>Latency p50/p95/p99 s</th><th>TTFT p50/p95 s</th></tr></thead>"
        f"<tbody>{body}</tbody></table></section>"
    )
