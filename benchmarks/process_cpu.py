"""CPU time of a process and all of its live descendants, and of the whole machine, from /proc.

Used to charge the gateway (uvicorn's supervisor plus its worker processes) per request, and to
see how much of the machine other work took during a measurement.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

_PROC = Path("/proc")
_TICKS_PER_S = os.sysconf("SC_CLK_TCK")


def _stat_fields(pid: int) -> list[str] | None:
    try:
        raw = (_PROC / str(pid) / "stat").read_text()
    except (FileNotFoundError, ProcessLookupError, PermissionError):
        return None
    # The command name (field 2) is in parentheses and may contain spaces: split after it.
    return raw[raw.rindex(")") + 2 :].split()


def _children(pid: int) -> list[int]:
    """Direct children, from every thread's `children` file (needs Linux 3.5+)."""
    found: list[int] = []
    try:
        tasks = list((_PROC / str(pid) / "task").iterdir())
    except (FileNotFoundError, ProcessLookupError, PermissionError):
        return found
    for task in tasks:
        try:
            found.extend(int(child) for child in (task / "children").read_text().split())
        except (FileNotFoundError, ProcessLookupError, PermissionError):
            continue
    return found


def descendants(pid: int) -> list[int]:
    """`pid` and every process below it, breadth first."""
    seen = [pid]
    queue = [pid]
    while queue:
        for child in _children(queue.pop(0)):
            if child not in seen:
                seen.append(child)
                queue.append(child)
    return seen


def tree_cpu_s(pid: int) -> float:
    """utime + stime of `pid` and its live descendants, in seconds.

    Only live processes are summed: a worker that exits mid-window would make the delta shrink,
    so callers should treat a negative delta as a measurement failure.
    """
    ticks = 0
    for member in descendants(pid):
        fields = _stat_fields(member)
        if fields is None:
            continue
        # After the command name, utime and stime are the 12th and 13th fields (stat 14, 15).
        ticks += int(fields[11]) + int(fields[12])
    return ticks / _TICKS_PER_S


def machine_busy_s() -> float:
    """CPU seconds all cores have spent busy since boot (everything but idle and iowait)."""
    fields = (_PROC / "stat").read_text().split("\n", 1)[0].split()
    # cpu user nice system idle iowait irq softirq steal (guest time is already inside user)
    user, nice, system, _idle, _iowait, irq, softirq, steal = (int(f) for f in fields[1:9])
    return (user + nice + system + irq + softirq + steal) / _TICKS_PER_S


# Positions in the readings of `rig_cpu_probe` (and so in a LoadResult's probe_delta).
GATEWAY_CPU, MOCK_CPU, MACHINE_BUSY = 0, 1, 2


def rig_cpu_probe(gateway_pid: int, mock_pid: int) -> Callable[[], tuple[float, ...]]:
    """A probe reading gateway CPU, mock CPU and whole-machine busy time, in seconds."""

    def read() -> tuple[float, ...]:
        return (tree_cpu_s(gateway_pid), tree_cpu_s(mock_pid), machine_busy_s())

    return read
