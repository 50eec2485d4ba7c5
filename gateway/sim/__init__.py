"""A simulated vLLM server: OpenAI-compatible API, vLLM's /metrics, and a KV-cache and
continuous-batching model, for the demo, docker-compose, tests and benchmarks."""

from gateway.sim.config import SimConfig
from gateway.sim.server import create_sim_app, run_sim

__all__ = ["SimConfig", "create_sim_app", "run_sim"]
