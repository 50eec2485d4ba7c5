"""An NVIDIA DCGM exporter's /metrics → what a deployment's GPUs are doing: mean utilisation
across its GPUs (DCGM_FI_DEV_GPU_UTIL, percent) and framebuffer memory used summed over them
(DCGM_FI_DEV_FB_USED, MiB). Pure; every other series on the page is ignored."""

from __future__ import annotations

import math
from dataclasses import dataclass

UTIL = "DCGM_FI_DEV_GPU_UTIL"
FB_USED = "DCGM_FI_DEV_FB_USED"
MIB = 1024 * 1024


class DcgmParseError(ValueError):
    """A page without either series: not a DCGM exporter, or one not exporting them."""


@dataclass(frozen=True, slots=True)
class GpuSample:
    gpus: int  # GPUs the page reported utilisation for
    util: float | None  # 0..1, mean over them
    memory_used_bytes: int | None  # summed over them


def _series(line: str) -> tuple[str, float] | None:
    if not line or line[0] == "#":
        return None
    name_end = min((i for i in (line.find("{"), line.find(" ")) if i >= 0), default=-1)
    if name_end < 0:
        return None
    name = line[:name_end]
    if name not in (UTIL, FB_USED):
        return None
    # The value follows the labels (which may hold spaces inside quotes): after the last '}'.
    rest = line[line.rfind("}") + 1:] if "{" in line else line[name_end:]
    parts = rest.split()
    if not parts:
        return None
    try:
        value = float(parts[0])
    except ValueError:
        return None
    return (name, value) if math.isfinite(value) else None


def parse_dcgm(text: str) -> GpuSample:
    utils: list[float] = []
    used: list[float] = []
    for line in text.splitlines():
        found = _series(line.strip())
        if found is not None:
            (utils if found[0] == UTIL else used).append(found[1])
    if not utils and not used:
        raise DcgmParseError(f"neither {UTIL} nor {FB_USED} on the page")
    return GpuSample(
        gpus=len(utils),
        util=min(1.0, max(0.0, sum(utils) / len(utils) / 100)) if utils else None,
        memory_used_bytes=round(sum(used) * MIB) if used else None,
    )
