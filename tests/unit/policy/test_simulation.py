"""Simulated backends: the router and the simulated engine agree on batch slots, the demo's
fleet is launched as the policy says, and `policy check` refuses every `simulate:` block the
simulator itself would refuse at start, with the file and line."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from gateway.cli.main import cli
from gateway.package_data import demo_policy_path
from gateway.policy.loader import PolicyError, load_policy, parse_policy
from gateway.policy.simulation import SIM_BLOCK_SIZE, SIM_DEFAULT_GPU_BLOCKS
from gateway.sim.config import SimConfig

BACKEND = """\
version: 1
backends:
  - name: engine
    provider: {provider}
    base_url: {url}
    model: m
    context_window: {window}
{extra}
"""


def policy(provider: str = "vllm", window: int = 8192, extra: str = "",
           url: str = "http://127.0.0.1:8101/v1") -> str:
    return BACKEND.format(provider=provider, window=window, extra=extra, url=url)


def test_the_policy_knows_the_simulators_engine_defaults() -> None:
    defaults = SimConfig()
    assert (SIM_BLOCK_SIZE, SIM_DEFAULT_GPU_BLOCKS) == (defaults.block_size,
                                                         defaults.num_gpu_blocks)


def test_a_simulated_engines_batch_slots_are_the_routers() -> None:
    loaded = parse_policy(policy(extra="    simulate: {max_num_seqs: 6}"))
    engine = loaded.backends["engine"].engine
    assert engine is not None and engine.max_num_seqs == 6
    assert loaded.simulators["engine"].max_num_seqs == 6
    backend_level = parse_policy(policy(extra="    max_num_seqs: 5\n    simulate: {}"))
    assert backend_level.simulators["engine"].max_num_seqs == 5


def test_every_simulated_config_is_one_the_simulator_accepts() -> None:
    loaded = load_policy(demo_policy_path())
    assert {s.api for s in loaded.simulators.values()} == {"vllm", "openai", "anthropic"}
    for launch in loaded.simulators.values():
        config = SimConfig(**launch.sim_config())  # type: ignore[arg-type]
        assert config.max_model_len <= config.kv_cache_size_tokens
        assert config.owned_by != "gateway-sim" or config.api == "vllm"


def test_an_api_sim_gets_room_for_long_contexts_and_a_latency() -> None:
    text = policy("anthropic", 200_000, "    simulate: {response_delay_s: 0.4}",
                  "http://127.0.0.1:8202")
    launch = parse_policy(text).simulators["engine"]
    assert launch.api == "anthropic" and launch.response_delay_s == 0.4
    assert launch.num_gpu_blocks * SIM_BLOCK_SIZE >= 200_000
    assert launch.max_num_seqs == 256


@pytest.mark.parametrize(("text", "where", "words"), [
    (policy(window=8192, extra="    simulate: {num_gpu_blocks: 256}"),
     "backends[0].simulate.num_gpu_blocks", "cannot hold one request"),
    (policy(window=65536, extra="    simulate: {}"), "backends[0].simulate",
     "set num_gpu_blocks to at least 4096"),
    (policy(extra="    max_num_seqs: 8\n    simulate: {max_num_seqs: 4}"),
     "backends[0].simulate.max_num_seqs", "differs from the backend's max_num_seqs"),
    (policy("azure", extra="    deployment: d\n    api_version: v\n    simulate: {}"),
     "backends[0].simulate", "cannot be simulated"),
    (policy(url="http://10.1.2.3:8000/v1", extra="    simulate: {}"), "backends[0].base_url",
     "127.0.0.1 or localhost"),
])
def test_what_the_simulator_would_refuse_is_a_policy_problem(
    text: str, where: str, words: str
) -> None:
    with pytest.raises(PolicyError) as caught:
        parse_policy(text, "p.yaml")
    problems = [p for p in caught.value.problems if p.path == where]
    assert problems and words in problems[0].message


def test_policy_check_names_file_and_line_of_a_kv_cache_too_small(tmp_path: Path) -> None:
    path = tmp_path / "policy.yaml"
    path.write_text(policy(window=8192, extra="    simulate:\n      num_gpu_blocks: 256"))
    result = CliRunner().invoke(cli, ["policy", "check", str(path)])
    assert result.exit_code == 1
    assert f"{path}:9: backends[0].simulate.num_gpu_blocks: the simulated engine's KV cache" \
        in result.output
    assert "Traceback" not in result.output
