"""Simulated backends (`simulate:` blocks): what `gateway serve` starts for the demo, and the
checks that make `policy check` refuse whatever the simulator itself would refuse at start.

The simulator plays the server the backend's provider kind declares (`simulated_api`): a vLLM
engine for vllm and openai_compat, OpenAI's API for openai, Anthropic's Messages API for
anthropic. Its engine is sized from the backend's own fields (context window, batch slots),
so the router plans with the same numbers the simulated engine runs with.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from urllib.parse import urlparse

from gateway.policy.schema import BackendSpec
from gateway.provider_kinds.registry import PROVIDER_KINDS, listed

# The simulator's engine defaults (gateway/sim/config.py; a unit test keeps them equal).
SIM_BLOCK_SIZE = 16
SIM_DEFAULT_GPU_BLOCKS = 2048
# A commercial API is not the bottleneck of a demo: room for many long requests at once.
API_BATCH_SLOTS = 256
API_CONTEXTS_IN_CACHE = 4
OWNED_BY = {"vllm": "gateway-sim", "openai": "simulated OpenAI API (gateway demo)",
            "anthropic": "simulated Anthropic API (gateway demo)"}


@dataclass(frozen=True, slots=True)
class SimulatorLaunch:
    """Everything `gateway sim` needs to play one backend."""

    backend: str
    api: str
    host: str
    port: int
    model: str
    max_model_len: int
    num_gpu_blocks: int
    max_num_seqs: int | None
    decode_step_base_s: float | None
    prefill_tokens_per_s: float | None
    response_delay_s: float | None

    def sim_config(self) -> dict[str, object]:
        """The simulator's settings (gateway/sim/config.py's SimConfig fields)."""
        config: dict[str, object] = {
            "api": self.api, "model_name": self.model, "owned_by": OWNED_BY[self.api],
            "max_model_len": self.max_model_len, "num_gpu_blocks": self.num_gpu_blocks,
        }
        for name in ("max_num_seqs", "decode_step_base_s", "prefill_tokens_per_s",
                     "response_delay_s"):
            value = getattr(self, name)
            if value is not None:
                config[name] = value
        return config

    def fleet_entry(self) -> dict[str, object]:
        """One entry of `gateway sim --fleet`: where to listen and what to play."""
        return {"host": self.host, "port": self.port, "config": self.sim_config()}

    @property
    def health_url(self) -> str:
        return f"http://{self.host}:{self.port}/health"


def simulator_launch(spec: BackendSpec) -> SimulatorLaunch | None:
    sim = spec.simulate
    if sim is None:
        return None
    api = PROVIDER_KINDS[spec.provider].simulated_api
    if api is None:
        return None  # refused by simulation_problems
    url = urlparse(str(spec.base_url))
    max_model_len = sim.max_model_len or spec.context_window
    blocks = sim.num_gpu_blocks
    slots = spec.max_num_seqs or sim.max_num_seqs
    if api != "vllm":
        blocks = blocks or math.ceil(max_model_len * API_CONTEXTS_IN_CACHE / SIM_BLOCK_SIZE)
        slots = slots or API_BATCH_SLOTS
    return SimulatorLaunch(
        backend=spec.name, api=api, host=url.hostname or "127.0.0.1",
        port=url.port or (443 if url.scheme == "https" else 80), model=spec.model,
        max_model_len=max_model_len, num_gpu_blocks=blocks or SIM_DEFAULT_GPU_BLOCKS,
        max_num_seqs=slots, decode_step_base_s=sim.decode_step_base_s,
        prefill_tokens_per_s=sim.prefill_tokens_per_s, response_delay_s=sim.response_delay_s,
    )


def simulation_problems(spec: BackendSpec) -> list[tuple[tuple[str | int, ...], str]]:
    """What the simulator would refuse at start, keyed below the backend's location."""
    sim = spec.simulate
    if sim is None:
        return []
    if PROVIDER_KINDS[spec.provider].simulated_api is None:
        can = [kind.name for kind in PROVIDER_KINDS if kind.simulated_api is not None]
        return [(("simulate",), f"provider {spec.provider} cannot be simulated "
                 f"({listed(can)} can)")]
    out: list[tuple[tuple[str | int, ...], str]] = []
    if (spec.max_num_seqs is not None and sim.max_num_seqs is not None
            and spec.max_num_seqs != sim.max_num_seqs):
        out.append((("simulate", "max_num_seqs"),
                    f"{sim.max_num_seqs} differs from the backend's max_num_seqs "
                    f"({spec.max_num_seqs}): the router would plan for another batch size "
                    "than the engine runs; set it in one place"))
    if urlparse(str(spec.base_url)).hostname not in ("127.0.0.1", "localhost", "::1"):
        out.append((("base_url",), "a simulated backend is started on this machine: its "
                    "base_url must be on 127.0.0.1 or localhost"))
    launch = simulator_launch(spec)
    assert launch is not None
    capacity = launch.num_gpu_blocks * SIM_BLOCK_SIZE
    if launch.max_model_len > capacity:
        where = ("simulate", "num_gpu_blocks") if sim.num_gpu_blocks else ("simulate",)
        out.append((where, f"the simulated engine's KV cache ({launch.num_gpu_blocks} blocks × "
                    f"{SIM_BLOCK_SIZE} = {capacity} tokens) cannot hold one request of its "
                    f"max_model_len ({launch.max_model_len}); vLLM refuses to start so: set "
                    f"num_gpu_blocks to at least "
                    f"{math.ceil(launch.max_model_len / SIM_BLOCK_SIZE)}"))
    return out
