"""The soak benchmark's figures: one row per sampling window, the summary across windows and
the verdicts against issue 9's targets (RSS growth < 10 %, no fd growth, p99 stable).

Definitions, printed with the results:
- RSS growth: the gateway tree's RSS at the end of the last window against the end of the
  first window after the warm-up window (the first window, which includes start-up, the
  capacity probe's high-water mark and lazy imports, is excluded).
- No fd growth: the tree's open fds while idle after the load (client connections closed,
  upstream keep-alives expired) are at most FD_SLACK above the same reading taken before it.
- p99 stable: the mean p99 of the last 3 windows is within 25 % of the mean p99 of the first
  3 windows after the warm-up window (a run with fewer than 6 measured windows compares
  half of them with the other half: a smoke run's verdict on it means little).
"""

from __future__ import annotations

import math
import statistics
from array import array
from dataclasses import dataclass

from soak_load import NO_CONTENT, TRANSPORT_ERROR, Window
from soak_rig import TreeReading
from tables import render_markdown, render_text

RSS_GROWTH_LIMIT = 0.10
P99_DRIFT_LIMIT = 0.25
P99_WINDOWS = 3
FD_SLACK = 2


def _pct_ms(values_ns: array[int], percentile: float) -> float:
    if not values_ns:
        return math.nan
    ordered = sorted(values_ns)
    return ordered[max(1, math.ceil(percentile / 100 * len(ordered))) - 1] / 1e6


@dataclass(frozen=True, slots=True)
class WindowRow:
    index: int
    end_s: float  # since the soak started
    seconds: float
    sent: int
    ok: int
    errors: int
    error_kinds: str
    shed: int
    p50_ms: float
    p99_ms: float
    ttft_p99_ms: float
    max_lag_ms: float
    tree: TreeReading

    @classmethod
    def of(cls, index: int, end_s: float, seconds: float, w: Window,
           tree: TreeReading) -> WindowRow:
        names = {TRANSPORT_ERROR: "transport", NO_CONTENT: "no-content"}
        kinds = ", ".join(f"{names.get(k, str(k))}×{n}" for k, n in sorted(w.failures.items())
                         if n)
        return cls(index, end_s, seconds, w.sent, w.ok, w.errors, kinds, w.shed,
                   _pct_ms(w.latencies_ns, 50), _pct_ms(w.latencies_ns, 99),
                   _pct_ms(w.ttfts_ns, 99), w.max_lag_ns / 1e6, tree)

    @property
    def rps(self) -> float:
        return self.ok / self.seconds if self.seconds > 0 else 0.0


HEADERS = ["window", "ends at", "req/s ok", "errors", "p50 ms", "p99 ms", "stream TTFT p99 ms",
           "client lag max ms", "RSS MiB (tree)", "RSS MiB (serve)", "fds"]


def _ms(value: float) -> str:
    return "–" if math.isnan(value) else f"{value:.0f}"


def window_rows(rows: list[WindowRow], warmup_windows: int) -> list[list[str]]:
    out = []
    for r in rows:
        label = f"{r.index}" + (" (warm-up)" if r.index <= warmup_windows else "")
        out.append([label, f"{r.end_s:.0f} s", f"{r.rps:.1f}", f"{r.errors}",
                    _ms(r.p50_ms), _ms(r.p99_ms), _ms(r.ttft_p99_ms),
                    f"{r.max_lag_ms:.0f}", f"{r.tree.rss_kib / 1024:.1f}",
                    f"{r.tree.leader_rss_kib / 1024:.1f}",
                    f"{r.tree.fds}"])
    return out


@dataclass(frozen=True, slots=True)
class Ledger:
    """Requests against audit rows, and fds while idle around the load."""

    answered: int  # requests (checks, probe and soak) that got an HTTP response
    unanswered: int  # transport errors / client timeouts: may or may not have a row
    audit_rows: int
    spooled_files: int
    idle_fds_before: int
    idle_fds_after: int
    idle_kinds_before: str
    idle_kinds_after: str


@dataclass(frozen=True, slots=True)
class Verdict:
    name: str
    passed: bool
    detail: str


def verdicts(rows: list[WindowRow], warmup_windows: int, ledger: Ledger) -> list[Verdict]:
    measured = rows[warmup_windows:]
    if len(measured) < 2:
        return [Verdict("enough windows", False,
                        f"only {len(measured)} window(s) after the warm-up: run longer")]
    first, last = measured[0], measured[-1]
    growth = last.tree.rss_kib / first.tree.rss_kib - 1
    leader_growth = last.tree.leader_rss_kib / max(1, first.tree.leader_rss_kib) - 1
    fds = [r.tree.fds for r in measured]
    k = min(P99_WINDOWS, len(measured) // 2)
    head = statistics.fmean(r.p99_ms for r in measured[:k])
    tail = statistics.fmean(r.p99_ms for r in measured[-k:])
    drift = tail / head - 1
    p99s = [r.p99_ms for r in measured]
    lost = ledger.answered - ledger.audit_rows
    return [
        Verdict("RSS growth < 10 %", growth < RSS_GROWTH_LIMIT,
                f"{first.tree.rss_kib / 1024:.1f} MiB after window {first.index} → "
                f"{last.tree.rss_kib / 1024:.1f} MiB after window {last.index}: "
                f"{growth * 100:+.1f} % (the serving process alone: "
                f"{first.tree.leader_rss_kib / 1024:.1f} → {last.tree.leader_rss_kib / 1024:.1f}"
                f" MiB, {leader_growth * 100:+.1f} %)"),
        Verdict("no fd growth", ledger.idle_fds_after <= ledger.idle_fds_before + FD_SLACK,
                f"idle {ledger.idle_fds_before} before the load ({ledger.idle_kinds_before}), "
                f"{ledger.idle_fds_after} after ({ledger.idle_kinds_after}); "
                f"under load min {min(fds)}, max {max(fds)}, last {fds[-1]}"),
        Verdict("p99 stable (last-3 mean within 25 % of first-3 mean)",
                abs(drift) <= P99_DRIFT_LIMIT,
                f"first {k} windows {head:.0f} ms, last {k} {tail:.0f} ms ({drift * 100:+.1f} %); "
                f"spread over all measured windows {min(p99s):.0f}–{max(p99s):.0f} ms"),
        Verdict("no audit row lost", lost <= 0 and ledger.spooled_files == 0,
                f"{ledger.audit_rows:,} rows in Postgres for {ledger.answered:,} answered "
                f"requests ({ledger.unanswered} unanswered); {ledger.spooled_files} spool "
                "files left"),
    ]


def render(rows: list[WindowRow], warmup_windows: int, ledger: Ledger,
           markdown: bool = False) -> str:
    table = (render_markdown if markdown else render_text)(
        HEADERS, window_rows(rows, warmup_windows))
    measured = rows[warmup_windows:]
    sent = sum(r.sent for r in rows)
    errors = sum(r.errors for r in rows)
    kinds = "; ".join(f"window {r.index}: {r.error_kinds}" for r in rows if r.error_kinds)
    shed = sum(r.shed for r in rows)
    mean_rps = statistics.fmean(r.rps for r in measured) if measured else math.nan
    lines = [table, "",
             f"{sent:,} requests sent in the soak, {errors} failed"
             + (f" ({kinds})" if kinds else "") + f", {shed} shed by the client; "
             f"mean {mean_rps:.1f} req/s over the measured windows", ""]
    for v in verdicts(rows, warmup_windows, ledger):
        mark = "PASS" if v.passed else "FAIL"
        lines.append(f"- {'**' if markdown else ''}{mark}{'**' if markdown else ''} "
                     f"{v.name}: {v.detail}")
    return "\n".join(lines)
