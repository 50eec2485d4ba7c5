"""The gateway against the bare pass-through proxy measured in the same run: per load level CPU
per request, req/s and added latency side by side, and issue 18's targets as ratios.

"Added" latency is the proxy's (or gateway's) p50 minus the mock's own p50 in the same level,
so each side is charged only what it puts between client and upstream.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from load_result import LoadResult
from overhead_report import Level, Outcome, Pair
from process_cpu import GATEWAY_CPU

# Issue 18's targets, each against the bare proxy in the same run.
CPU_RATIO_MAX = 2.0  # gateway CPU per request ≤ 2.0× the bare proxy's, at c=16
RPS_RATIO_MIN = 0.5  # gateway req/s ≥ 0.5× the bare proxy's, at c=16
ADDED_MS_MAX = 0.25  # added p50 (and streaming TTFT p50) at c=1 ≤ the bare proxy's + 0.25 ms
TARGET_C = 16


def _cpu_ms(result: LoadResult | None) -> float | None:
    # The probe's first reading is whichever server the window measured (bare or gateway).
    if result is None or result.probe_delta is None or not result.ok:
        return None
    cpu_s = result.probe_delta[GATEWAY_CPU]
    return None if cpu_s < 0 else cpu_s * 1000.0 / result.ok


def _p50(result: LoadResult | None, stream: bool) -> float | None:
    if result is None:
        return None
    found = result.ttft if stream else result.latency
    return found.p50_ms if found else None


def _added(pair: Pair, side: Callable[[Pair], LoadResult | None], stream: bool) -> float | None:
    mine, direct = _p50(side(pair), stream), _p50(pair.direct, stream)
    return None if mine is None or direct is None else mine - direct


def _bare(pair: Pair) -> LoadResult | None:
    return pair.bare


def _gateway(pair: Pair) -> LoadResult | None:
    return pair.gateway


def _rps(result: LoadResult | None) -> float | None:
    return None if result is None else result.rps


@dataclass(frozen=True, slots=True)
class Side:
    """One level's medians for the bare proxy and the gateway."""

    cpu_ms: tuple[float | None, float | None]
    rps: tuple[float | None, float | None]
    added_ms: tuple[float | None, float | None]  # p50, or TTFT p50 when streaming

    @classmethod
    def of(cls, outcome: Outcome) -> Side:
        stream = outcome.level.stream

        def both(figure: Callable[[Pair, Callable[[Pair], LoadResult | None]], float | None],
                 ) -> tuple[float | None, float | None]:
            return (outcome.median(lambda p: figure(p, _bare)),
                    outcome.median(lambda p: figure(p, _gateway)))

        return cls(
            cpu_ms=both(lambda p, side: _cpu_ms(side(p))),
            rps=both(lambda p, side: _rps(side(p))),
            added_ms=both(lambda p, side: _added(p, side, stream)),
        )


def _ratio(pair: tuple[float | None, float | None]) -> float | None:
    bare, gateway = pair
    return None if bare is None or gateway is None or bare <= 0 else gateway / bare


def _fmt(value: float | None, digits: int = 3) -> str:
    return "–" if value is None else f"{value:,.{digits}f}"


def _ratio_text(value: float | None) -> str:
    return "–" if value is None else f"{value:.2f}×"


LEVEL_HEADERS = (
    "level", "bare CPU ms/req", "gateway CPU ms/req", "CPU ratio", "bare req/s",
    "gateway req/s", "req/s ratio", "bare +p50 ms", "gateway +p50 ms", "gateway − bare ms",
)


def level_rows(outcomes: Sequence[Outcome], workers: int) -> list[list[str]]:
    rows = []
    for o in outcomes:
        if o.workers != workers or not any(p.bare for p in o.pairs):
            continue
        s = Side.of(o)
        bare_add, gw_add = s.added_ms
        gap = None if bare_add is None or gw_add is None else gw_add - bare_add
        rows.append([
            f"{o.level.mode} c={o.level.concurrency}"
            + (" (+TTFT p50)" if o.level.stream else ""),
            _fmt(s.cpu_ms[0]), _fmt(s.cpu_ms[1]), _ratio_text(_ratio(s.cpu_ms)),
            _fmt(s.rps[0], 0), _fmt(s.rps[1], 0), _ratio_text(_ratio(s.rps)),
            _fmt(bare_add, 2), _fmt(gw_add, 2), _fmt(gap, 2),
        ])
    return rows


TARGET_HEADERS = ("target (issue 18)", "bare proxy", "gateway", "measured", "limit", "verdict")


def _verdict(ok: bool | None) -> str:
    return "–" if ok is None else ("met" if ok else "**not met**")


def target_rows(outcomes: Sequence[Outcome], workers: int) -> list[list[str]]:
    def side(stream: bool, c: int) -> Side | None:
        found = [o for o in outcomes
                 if o.workers == workers and o.level == Level(stream, c)
                 and any(p.bare for p in o.pairs)]
        return Side.of(found[0]) if found else None

    rows = []
    chat16 = side(False, TARGET_C)
    if chat16 is not None:
        cpu = _ratio(chat16.cpu_ms)
        rps = _ratio(chat16.rps)
        rows.append([f"CPU per request at c={TARGET_C}", _fmt(chat16.cpu_ms[0]) + " ms",
                     _fmt(chat16.cpu_ms[1]) + " ms", _ratio_text(cpu),
                     f"≤ {CPU_RATIO_MAX:.1f}×", _verdict(None if cpu is None
                                                       else cpu <= CPU_RATIO_MAX)])
        rows.append([f"req/s at c={TARGET_C}", _fmt(chat16.rps[0], 0), _fmt(chat16.rps[1], 0),
                     _ratio_text(rps), f"≥ {RPS_RATIO_MIN:.1f}×",
                     _verdict(None if rps is None else rps >= RPS_RATIO_MIN)])
    for stream, what in ((False, "added p50 at c=1"), (True, "added TTFT p50 at c=1, stream")):
        one = side(stream, 1)
        if one is None:
            continue
        bare_add, gw_add = one.added_ms
        gap = None if bare_add is None or gw_add is None else gw_add - bare_add
        rows.append([what, _fmt(bare_add, 2) + " ms", _fmt(gw_add, 2) + " ms",
                     "bare " + ("–" if gap is None else f"{gap:+.2f}") + " ms",
                     f"≤ bare +{ADDED_MS_MAX:.2f} ms",
                     _verdict(None if gap is None else gap <= ADDED_MS_MAX)])
    return rows


def target_workers(workers: Sequence[int]) -> int:
    """The gateway the targets are read on: 1 worker (one process, like the bare proxy)
    when it was measured, else the first configuration."""
    return 1 if 1 in workers else workers[0]


def bare_tables(
    outcomes: Sequence[Outcome], workers: Sequence[int]
) -> list[tuple[str, tuple[str, ...], list[list[str]]]]:
    """(title, headers, rows): per level for each gateway configuration, then the targets."""
    tables = []
    for w in workers:
        rows = level_rows(outcomes, w)
        if rows:
            plural = "s" if w != 1 else ""
            tables.append((f"Bare proxy (1 process) vs gateway ({w} worker{plural}), "
                           "medians of the repeats", LEVEL_HEADERS, rows))
    w = target_workers(workers)
    rows = target_rows(outcomes, w)
    if rows:
        tables.append((f"Against the targets (gateway with {w} worker{'s' if w != 1 else ''}, "
                       "same run as the bare proxy)", TARGET_HEADERS, rows))
    return tables
