"""Describes where a benchmark ran: CPU model, core count, memory, Python, date, code revision."""

from __future__ import annotations

import datetime as dt
import os
import platform
import subprocess
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True, slots=True)
class Machine:
    date: str
    cpu_model: str
    cpus: int
    ram_gib: float
    python: str
    revision: str
    load_avg_1m: float  # other work on the machine skews every figure; record how much there was

    def summary(self) -> str:
        return f"{self.cpu_model}, {self.cpus} CPUs, {self.ram_gib:.0f} GiB RAM"


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def _ram_gib() -> float:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return int(line.split()[1]) / (1024 * 1024)  # the figure is in KiB
    except OSError:
        pass
    return 0.0


def _revision(repo: Path) -> str:
    try:
        done = subprocess.run(
            ["git", "-C", str(repo), "describe", "--always", "--dirty"],
            capture_output=True,
            text=True,
            timeout=10.0,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return "unknown"
    return done.stdout.strip() or "no commits yet"


def load_average() -> float:
    """The 1-minute load average (runnable processes), or -1 where /proc is missing."""
    try:
        return float(Path("/proc/loadavg").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return -1.0


def describe_machine(repo: Path) -> Machine:
    return Machine(
        date=dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        cpu_model=_cpu_model(),
        cpus=len(os.sched_getaffinity(0)),  # what `nproc` reports
        ram_gib=_ram_gib(),
        python=f"{platform.python_implementation()} {platform.python_version()}",
        revision=_revision(repo),
        load_avg_1m=load_average(),
    )
