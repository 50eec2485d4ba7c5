"""Turns paired direct/gateway load results into overhead figures: per-level and summary rows,
and the RESULTS.md section built from them.
"""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial

from load_result import LoadResult
from machine import Machine
from process_cpu import GATEWAY_CPU, MACHINE_BUSY, MOCK_CPU
from tables import render_markdown


@dataclass(frozen=True, slots=True)
class Level:
    stream: bool
    concurrency: int

    @property
    def mode(self) -> str:
        return "stream" if self.stream else "chat"


@dataclass(frozen=True, slots=True)
class Pair:
    """One repeat of a level: direct, the bare proxy (when measured) and the gateway, back to
    back."""

    direct: LoadResult
    gateway: LoadResult
    bare: LoadResult | None = None

    def _gateway_cpu_s(self) -> float | None:
        delta = self.gateway.probe_delta
        if delta is None or delta[GATEWAY_CPU] < 0:
            return None  # a negative delta means a worker exited mid-window
        return delta[GATEWAY_CPU]

    @property
    def gateway_cpu_ms_per_request(self) -> float | None:
        cpu_s = self._gateway_cpu_s()
        return None if cpu_s is None or not self.gateway.ok else cpu_s * 1000.0 / self.gateway.ok

    @property
    def gateway_cores(self) -> float | None:
        cpu_s = self._gateway_cpu_s()
        return None if cpu_s is None else cpu_s / self.gateway.duration_s

    @property
    def other_cores(self) -> float | None:
        """CPU taken during the gateway run by anything but the gateway, mock and load generator."""
        delta, cpu_s = self.gateway.probe_delta, self._gateway_cpu_s()
        if delta is None or cpu_s is None:
            return None
        ours = cpu_s + delta[MOCK_CPU] + self.gateway.loadgen_cpu_s
        return max(0.0, delta[MACHINE_BUSY] - ours) / self.gateway.duration_s


@dataclass(frozen=True, slots=True)
class Outcome:
    workers: int
    level: Level
    pairs: tuple[Pair, ...]

    def median(self, value: Callable[[Pair], float | None]) -> float | None:
        """Median over the repeats, skipping repeats where the figure is unknown."""
        values = [v for v in (value(p) for p in self.pairs) if v is not None]
        return statistics.median(values) if values else None

    def gateway_errors(self) -> Counter[str]:
        total: Counter[str] = Counter()
        for pair in self.pairs:
            total.update(pair.gateway.error_kinds)
        return total


# How each figure is read from a result; "added" figures are gateway minus direct per pair, and
# every figure shown is the median over the repeats.
Figure = Callable[[LoadResult], float | None]
PairFigure = Callable[[Pair], float | None]


def _rps(r: LoadResult) -> float:
    return r.rps


def _lat50(r: LoadResult) -> float | None:
    return r.latency.p50_ms if r.latency else None


def _lat99(r: LoadResult) -> float | None:
    return r.latency.p99_ms if r.latency else None


def _ttft50(r: LoadResult) -> float | None:
    return r.ttft.p50_ms if r.ttft else None


def _ttft99(r: LoadResult) -> float | None:
    return r.ttft.p99_ms if r.ttft else None


def _direct(figure: Figure) -> PairFigure:
    return lambda p: figure(p.direct)


def _gateway(figure: Figure) -> PairFigure:
    return lambda p: figure(p.gateway)


def _added(figure: Figure) -> PairFigure:
    def diff(p: Pair) -> float | None:
        gw, direct = figure(p.gateway), figure(p.direct)
        return None if gw is None or direct is None else gw - direct

    return diff


def _fmt(value: float | None, digits: int = 2) -> str:
    return "–" if value is None else f"{value:,.{digits}f}"


def _fmt_rps(value: float | None) -> str:
    return "–" if value is None else f"{value:,.0f}"


def _col(header: str, figure: PairFigure, digits: int = 2) -> Column:
    return header, lambda o: _fmt(o.median(figure), digits)


def _errors(o: Outcome) -> str:
    return str(sum(o.gateway_errors().values()))


def _c(o: Outcome) -> str:
    return str(o.level.concurrency)


Column = tuple[str, Callable[[Outcome], str]]

CHAT_COLUMNS: list[Column] = [
    ("c", _c),
    _col("direct req/s", _direct(_rps), 0),
    _col("gateway req/s", _gateway(_rps), 0),
    _col("direct p50 ms", _direct(_lat50), 3),
    _col("gateway p50 ms", _gateway(_lat50)),
    _col("+p50 ms", _added(_lat50)),
    _col("direct p99 ms", _direct(_lat99), 3),
    _col("gateway p99 ms", _gateway(_lat99)),
    _col("+p99 ms", _added(_lat99)),
    _col("gateway CPU ms/req", lambda p: p.gateway_cpu_ms_per_request),
    ("gateway errors", _errors),
    _col("gateway cores", lambda p: p.gateway_cores),
    _col("loadgen cores", _gateway(lambda r: r.loadgen_cores)),
    _col("other load cores", lambda p: p.other_cores),
]

STREAM_COLUMNS: list[Column] = [
    ("c", _c),
    _col("direct streams/s", _direct(_rps), 1),
    _col("gateway streams/s", _gateway(_rps), 1),
    _col("direct TTFT p50 ms", _direct(_ttft50)),
    _col("gateway TTFT p50 ms", _gateway(_ttft50)),
    _col("+TTFT p50 ms", _added(_ttft50)),
    _col("+TTFT p99 ms", _added(_ttft99)),
    _col("gateway CPU ms/stream", lambda p: p.gateway_cpu_ms_per_request),
    ("gateway errors", _errors),
]


def table(columns: list[Column], outcomes: Sequence[Outcome]) -> tuple[list[str], list[list[str]]]:
    headers = [header for header, _ in columns]
    return headers, [[cell(o) for _, cell in columns] for o in outcomes]


def detail_tables(
    outcomes: Sequence[Outcome], workers: int
) -> list[tuple[str, list[str], list[list[str]]]]:
    """(title, headers, rows) for the non-streaming and the streaming levels of one gateway."""
    mine = [o for o in outcomes if o.workers == workers]
    plural = "s" if workers != 1 else ""
    found = []
    for stream, columns, what in (
        (False, CHAT_COLUMNS, "non-streaming"),
        (True, STREAM_COLUMNS, "streaming"),
    ):
        picked = [o for o in mine if o.level.stream is stream]
        if picked:
            title = f"Gateway with {workers} worker{plural}, {what} (direct alongside each level)"
            found.append((title, *table(columns, picked)))
    return found


SUMMARY_HEADERS = (
    "path",
    "+p50 at c=1 (ms)",
    "req/s at c=16",
    "req/s at c=64",
    "gateway CPU ms per request",
    "streaming +TTFT p50 at c=1 (ms)",
    "streaming +TTFT p50 at c=16 (ms)",
)


def _find(outcomes: Sequence[Outcome], stream: bool, concurrency: int) -> list[Outcome]:
    return [o for o in outcomes if o.level == Level(stream, concurrency)]


def _one(outcomes: Sequence[Outcome], stream: bool, c: int, value: PairFigure) -> float | None:
    found = _find(outcomes, stream, c)
    return found[0].median(value) if found else None


def summary_rows(outcomes: Sequence[Outcome], workers: Sequence[int]) -> list[list[str]]:
    def direct_rps(c: int) -> float | None:
        values = [p.direct.rps for o in _find(outcomes, False, c) for p in o.pairs]
        return statistics.median(values) if values else None

    direct = [_fmt_rps(direct_rps(16)), _fmt_rps(direct_rps(64))]
    rows = [["mock upstream, direct (no gateway)", "–", *direct, "–", "–", "–"]]
    for w in workers:
        mine = [o for o in outcomes if o.workers == w]
        one = partial(_one, mine)
        cpu = [o.median(lambda p: p.gateway_cpu_ms_per_request) for o in mine if not o.level.stream]
        cpu_known = [v for v in cpu if v is not None]
        cpu_text = f"{min(cpu_known):.2f}–{max(cpu_known):.2f}" if cpu_known else "–"
        rows.append(
            [
                f"this gateway, {w} worker{'s' if w != 1 else ''}",
                _fmt(one(False, 1, _added(_lat50))),
                _fmt_rps(one(False, 16, _gateway(_rps))),
                _fmt_rps(one(False, 64, _gateway(_rps))),
                cpu_text,
                _fmt(one(True, 1, _added(_ttft50))),
                _fmt(one(True, 16, _added(_ttft50))),
            ]
        )
    return rows


def error_notes(outcomes: Sequence[Outcome]) -> list[str]:
    notes = []
    for o in outcomes:
        errors = o.gateway_errors()
        if errors:
            kinds = ", ".join(f"{kind} ×{n}" for kind, n in errors.most_common())
            notes.append(f"{o.workers} workers, {o.level.mode} c={o.level.concurrency}: {kinds}")
    return notes


@dataclass(frozen=True, slots=True)
class RunInfo:
    """How the run was made, for the reader of RESULTS.md."""

    machine: Machine
    command: str
    duration_s: float
    warmup_s: float
    repeats: int
    loadgen_processes: int
    stream_tokens: int
    stream_interval_ms: float


def markdown_section(info: RunInfo, outcomes: Sequence[Outcome], workers: Sequence[int]) -> str:
    m = info.machine
    parts = [
        f"## Gateway overhead ({m.date})",
        "",
        f"- Machine: {m.summary()}; {m.python}; code at `{m.revision}`; 1-minute load "
        f"average before the run {m.load_avg_1m:.2f}",
        f"- Command: `{info.command}`",
        "- Method: loopback only; a mock OpenAI upstream (asyncio + uvloop + orjson); a "
        f"closed-loop load generator ({info.loadgen_processes} process(es), one keep-alive "
        f"connection per concurrent client); each level {info.duration_s:g} s after "
        f"{info.warmup_s:g} s warm-up, direct and gateway back to back, median of "
        f"{info.repeats} repeat(s). Non-streaming replies are 16 tokens; streams are "
        f"{info.stream_tokens} tokens {info.stream_interval_ms:g} ms apart. Gateway CPU is "
        "utime + stime of the gateway process and its workers over the measured window, "
        "divided by completed requests.",
        "- The mock, the load generator and the gateway share the machine's cores, so req/s is for "
        "the whole system; CPU ms per request is the figure that carries across machines. At low "
        "request rates (streams, c=1) it also carries the gateway's background work (metrics "
        "polling, audit flushes) spread over few requests.",
        "",
        render_markdown(SUMMARY_HEADERS, summary_rows(outcomes, workers)),
        "",
    ]
    for w in workers:
        for title, headers, rows in detail_tables(outcomes, w):
            parts += [f"### {title}", "", render_markdown(headers, rows), ""]
    notes = error_notes(outcomes)
    if notes:
        parts += ["Gateway errors: " + "; ".join(notes), ""]
    return "\n".join(parts)
