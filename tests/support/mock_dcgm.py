"""A DCGM exporter's /metrics as NVIDIA's dcgm-exporter writes it (gauges with gpu, UUID,
device, modelName and Hostname labels; utilisation in percent, framebuffer in MiB), for the
GPUs and values a test sets. Counts the scrapes it answered."""

from __future__ import annotations

from dataclasses import dataclass, field

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse
from starlette.routing import Route


@dataclass
class DcgmState:
    util_percent: list[float] = field(default_factory=lambda: [50.0])
    fb_used_mib: list[float] = field(default_factory=lambda: [40_000.0])
    scrapes: int = 0


def dcgm_page(state: DcgmState) -> str:
    lines = ["# HELP DCGM_FI_DEV_GPU_UTIL GPU utilization (in %).",
             "# TYPE DCGM_FI_DEV_GPU_UTIL gauge"]
    for gpu, value in enumerate(state.util_percent):
        lines.append(
            f'DCGM_FI_DEV_GPU_UTIL{{gpu="{gpu}",UUID="GPU-{gpu:08d}-aaaa",device="nvidia{gpu}",'
            f'modelName="NVIDIA H100 80GB HBM3",Hostname="node-1",'
            f'DCGM_FI_DRIVER_VERSION="550.54.15"}} {value:g}')
    lines += ["# HELP DCGM_FI_DEV_FB_USED Framebuffer memory used (in MiB).",
              "# TYPE DCGM_FI_DEV_FB_USED gauge"]
    for gpu, value in enumerate(state.fb_used_mib):
        lines.append(
            f'DCGM_FI_DEV_FB_USED{{gpu="{gpu}",UUID="GPU-{gpu:08d}-aaaa",device="nvidia{gpu}",'
            f'modelName="NVIDIA H100 80GB HBM3",Hostname="node-1"}} {value:g}')
    lines += ["# HELP DCGM_FI_DEV_SM_CLOCK SM frequency (in MHz).",
              "# TYPE DCGM_FI_DEV_SM_CLOCK gauge",
              'DCGM_FI_DEV_SM_CLOCK{gpu="0",UUID="GPU-00000000-aaaa"} 1980']
    return "\n".join(lines) + "\n"


def create_dcgm_app(state: DcgmState) -> Starlette:
    async def metrics(_: Request) -> PlainTextResponse:
        state.scrapes += 1
        return PlainTextResponse(dcgm_page(state), media_type="text/plain; version=0.0.4")

    return Starlette(routes=[Route("/metrics", metrics)])
