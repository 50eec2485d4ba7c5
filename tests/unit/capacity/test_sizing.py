"""`gateway plan`'s arithmetic against worked examples computed by hand, the catalogue, the
Hugging Face config reader, and the CLI's flags and JSON keys (fixed: other tools call them)."""

from __future__ import annotations

import json
from pathlib import Path

import orjson
import pytest
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st

from gateway.capacity.catalogue import GPUS, MODELS
from gateway.capacity.sizing import (
    Hardware,
    ModelShape,
    SizingError,
    Workload,
    decode_tokens_per_s_per_gpu,
    kv_bytes_per_token,
    size,
    what_ifs,
)
from gateway.cli.main import cli
from gateway.offline.planning.model_config import ConfigError, estimated_params_b, shape_from_config

# A 70B dense model in BF16: 80 layers, 8 KV heads of 128 dims.
SEVENTY = ModelShape(70, 80, 8, 128)
# 1,000 users, 10 % in flight at the peak; 2,000 prompt + 500 output tokens; 10 QPS.
CHAT = Workload(2000, 500, users=1000, concurrency=0.1, peak_qps=10)
H100 = Hardware(80, 4.5, tokens_per_s_per_gpu=1500, overhead=0.1)


def test_worked_example_a_70b_chat_service() -> None:
    plan = size(SEVENTY, CHAT, H100)
    assert plan.weights_bytes == 140_000_000_000  # 70e9 × 2
    assert plan.kv_bytes_per_token == 327_680  # 2 × 80 × 8 × 128 × 2
    assert plan.kv_bytes_per_session == 819_200_000  # 2,500 × 327,680
    assert plan.concurrent_sessions == 100
    assert plan.kv_bytes_total == 81_920_000_000
    assert plan.vram_bytes_total == 244_112_000_000  # (140e9 + 81.92e9) × 1.1
    assert plan.gpus_for_memory == 4  # ⌈244.112 / 80⌉
    assert plan.tokens_per_s_needed == 5000  # 10 × 500
    assert plan.gpus_for_throughput == 4  # ⌈5,000 / 1,500⌉
    assert plan.gpus == 4
    assert plan.monthly_usd == 13_140.0  # 4 × 730 × 4.50


def test_worked_example_throughput_bound() -> None:
    # An 8B model fits one GPU; 40 QPS × 500 tokens = 20,000 tok/s needs ⌈20,000/2,500⌉ = 8.
    eight = ModelShape(8, 32, 8, 128)
    plan = size(eight, Workload(1000, 500, sessions=16, peak_qps=40),
                Hardware(80, 2.0, tokens_per_s_per_gpu=2500))
    # KV/token 131,072; per session 1,500 × 131,072 = 196,608,000; × 16 = 3,145,728,000.
    assert plan.kv_bytes_total == 3_145_728_000
    assert plan.vram_bytes_total == round((16e9 + 3_145_728_000) * 1.1)
    assert (plan.gpus_for_memory, plan.gpus_for_throughput, plan.gpus) == (1, 8, 8)
    assert plan.monthly_usd == 8 * 730 * 2.0


def test_worked_example_tensor_parallel_replicas() -> None:
    # TP 4 on 80 GB GPUs with 10 % overhead: each GPU has 72.73 GB usable, a replica
    # 290.9 GB, of which 140 GB are weights: 150.9 GB of KV room. 81.92 GB fits one replica.
    plan = size(SEVENTY, CHAT, Hardware(80, 4.5, 1500, 0.1, tensor_parallel=4))
    assert plan.gpus_for_memory == 4 and plan.weights_bytes_per_gpu == 35_000_000_000
    assert plan.kv_headroom_bytes_per_gpu == 37_727_272_727  # 80e9 / 1.1 − 35e9
    # Three times the sessions need 245.76 GB of KV: two replicas, eight GPUs.
    busy = size(SEVENTY, Workload(2000, 500, sessions=300), Hardware(80, tensor_parallel=4))
    assert busy.gpus_for_memory == 8
    with pytest.raises(SizingError, match="do not fit"):
        size(SEVENTY, CHAT, Hardware(80, tensor_parallel=1))


def test_what_ifs_shrink_memory() -> None:
    found = dict(what_ifs(SEVENTY, CHAT, H100))
    fp8 = found["FP8 weights"]
    int4 = found["INT4 weights"]
    kv8 = found["FP8 KV cache"]
    assert not isinstance(fp8, str) and not isinstance(int4, str) and not isinstance(kv8, str)
    assert fp8.weights_bytes == 70_000_000_000 and fp8.gpus_for_memory == 3  # 167.1 GB
    assert int4.weights_bytes == 35_000_000_000 and int4.gpus_for_memory == 2  # 128.6 GB
    assert kv8.kv_bytes_per_token == 163_840 and kv8.gpus_for_memory == 3  # 199.1 GB


def test_context_cap_and_prefix_cache() -> None:
    # Capped at 1,000 tokens: 1,000 prompt, no room for output.
    capped = size(SEVENTY, Workload(2000, 500, sessions=1, context_cap=1000), H100)
    assert capped.kv_bytes_per_session == 1000 * 327_680
    # Half the prompt from a shared prefix: 1,000 + 500 tokens per session.
    shared = size(SEVENTY, Workload(2000, 500, sessions=1, prefix_hit_rate=0.5), H100)
    assert shared.kv_bytes_per_session == 1500 * 327_680


def test_deepseek_caches_a_compressed_latent() -> None:
    v3 = MODELS["deepseek-v3"]
    assert kv_bytes_per_token(v3) == 61 * 576 * 2  # 70,272 bytes, not 2 × 61 × 128 × 128 × 2
    assert size(v3, Workload(4000, 1000, sessions=64), Hardware(141)).weights_bytes == 671e9


def test_catalogue_entries_are_sane() -> None:
    assert {"llama-3.1-8b", "llama-3.1-70b", "llama-3.1-405b", "mixtral-8x7b",
            "deepseek-v3"} <= set(MODELS)
    assert kv_bytes_per_token(MODELS["llama-3.1-8b"]) == 131_072
    assert GPUS["H100"].memory_gb == 80 and GPUS["L4"].memory_gb == 24


LLAMA_8B_CONFIG = {
    "architectures": ["LlamaForCausalLM"], "hidden_size": 4096, "intermediate_size": 14336,
    "num_attention_heads": 32, "num_hidden_layers": 32, "num_key_value_heads": 8,
    "vocab_size": 128256, "torch_dtype": "bfloat16", "tie_word_embeddings": False,
    "max_position_embeddings": 131072,
}


def test_a_hugging_face_config_gives_the_shape_and_parameters() -> None:
    shape = shape_from_config(LLAMA_8B_CONFIG)
    assert (shape.layers, shape.kv_heads, shape.head_dim, shape.weight_bytes) == (32, 8, 128, 2)
    # 32 × (4096·128·(64 + 16) + 3·4096·14336) + 2·128256·4096 = 8.03e9, as published.
    assert estimated_params_b(LLAMA_8B_CONFIG) == pytest.approx(8.03, abs=0.01)
    mla = {**LLAMA_8B_CONFIG, "kv_lora_rank": 512, "qk_rope_head_dim": 64}
    assert shape_from_config(mla, params_b=671).kv_latent_dim == 576
    with pytest.raises(ConfigError, match="--params-b"):
        shape_from_config(mla)


def run(*args: str) -> str:
    result = CliRunner().invoke(cli, ["plan", *args], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


FLAGS = ("--params-b", "70", "--layers", "80", "--kv-heads", "8", "--head-dim", "128",
         "--weight-bytes", "2", "--kv-bytes", "2", "--gpu-memory-gb", "80", "--users", "1000",
         "--concurrency", "0.1", "--prompt-tokens", "2000", "--output-tokens", "500",
         "--overhead", "0.1", "--peak-qps", "10", "--tokens-per-s-per-gpu", "1500",
         "--gpu-hourly-usd", "4.5")


def test_the_cli_flags_and_json_keys() -> None:
    body = orjson.loads(run(*FLAGS, "--format", "json"))
    assert {k: body[k] for k in (
        "weights_bytes", "kv_bytes_per_token", "kv_bytes_per_session", "concurrent_sessions",
        "kv_bytes_total", "vram_bytes_total", "gpus_for_memory", "gpus_for_throughput", "gpus",
        "monthly_usd")} == {
        "weights_bytes": 140_000_000_000, "kv_bytes_per_token": 327_680,
        "kv_bytes_per_session": 819_200_000, "concurrent_sessions": 100,
        "kv_bytes_total": 81_920_000_000, "vram_bytes_total": 244_112_000_000,
        "gpus_for_memory": 4, "gpus_for_throughput": 4, "gpus": 4, "monthly_usd": 13_140.0}
    assert "GPUs for memory               4" in run(*FLAGS)


def test_the_cli_reads_catalogues_and_configs(tmp_path: Path) -> None:
    body = orjson.loads(run("--model", "Llama-3.1-8B", "--gpu", "L4", "--sessions", "4",
                            "--prompt-tokens", "1000", "--output-tokens", "200",
                            "--format", "json", "--what-ifs"))
    # 16.06 GB of weights + 4 × 1,200 × 131,072 of KV, × 1.1: 18.35 GB on one 24 GB L4.
    assert body["gpus"] == 1 and body["monthly_usd"] == 730 * 0.80
    assert [w["name"] for w in body["what_ifs"]][:2] == ["as given", "FP8 weights"]
    config = tmp_path / "config.json"
    config.write_text(json.dumps(LLAMA_8B_CONFIG))
    same = orjson.loads(run("--model-config", str(config), "--params-b", "8.03", "--gpu", "L4",
                            "--sessions", "4", "--prompt-tokens", "1000",
                            "--output-tokens", "200", "--format", "json"))
    assert same["vram_bytes_total"] == body["vram_bytes_total"]
    unknown = CliRunner().invoke(cli, ["plan", "--model", "gpt-9", "--gpu", "L4"])
    assert unknown.exit_code == 2 and "deepseek-v3" in unknown.output


@given(st.floats(0.5, 500), st.integers(1, 128), st.integers(1, 64), st.integers(0, 10**5),
       st.integers(0, 10**4), st.one_of(st.just(0.0), st.floats(0.001, 10**4)),
       st.sampled_from([24.0, 80.0, 141.0]))
def test_the_plan_always_holds_its_memory(params: float, layers: int, sessions: int,
                                          prompt: int, output: int, qps: float,
                                          memory: float) -> None:
    plan = size(ModelShape(params, layers, 8, 128), Workload(prompt, output, sessions=sessions,
                                                             peak_qps=qps),
                Hardware(memory, 1.0, tokens_per_s_per_gpu=1000))
    assert plan.gpus_for_memory * memory * 1e9 >= plan.vram_bytes_total
    assert (plan.gpus_for_memory - 1) * memory * 1e9 < plan.vram_bytes_total
    assert plan.gpus == max(plan.gpus_for_memory, plan.gpus_for_throughput)
    assert plan.gpus_for_throughput * 1000 >= qps * output


def test_every_gpu_backend_of_the_demo_can_be_sized() -> None:
    """The report page's capacity section and `plan --from-audit` size each deployment the
    demo pays GPUs for (qwen2.5-32b-instruct included), rather than one saying it cannot."""
    from gateway.capacity.audit_plan import DeploymentPlan
    from gateway.capacity.fleet_plan import DEFAULTS, plans
    from gateway.capacity.observed import ObservedLoad
    from gateway.package_data import demo_policy_path
    from gateway.policy.loader import load_policy

    policy = load_policy(demo_policy_path())
    owned = sorted(n for n, b in policy.backends.items()
                   if b.engine is not None and b.engine.gpu_hourly_usd is not None)
    loads = [ObservedLoad(n, 60, ((1.0, 10),), 0.5, 40.0, 800, 200, 300, 3_000_000)
             for n in owned]
    found = plans(policy, loads, DEFAULTS, None)
    assert owned == ["llama-8b", "qwen-32b"]
    assert all(isinstance(p, DeploymentPlan) for p in found), found
    # Both by what their GPUs can decode (memory bandwidth), not by the 40 tokens/s a quiet
    # busiest minute showed: demand that low needs one GPU's worth of throughput at most.
    assert all(p.plan.throughput_basis == "memory bandwidth" for p in found)
    assert all(p.plan.gpus_for_throughput <= p.plan.gpus_for_memory for p in found)


def test_decode_rate_is_the_bandwidth_bound_of_a_full_batch() -> None:
    # An 8B model on an H100: 80 GB / 1.1 − 16 GB leaves room for 288 sessions of 1,500
    # tokens (131,072 bytes each), capped at 256 in flight; each step reads the weights
    # and 256 sessions' KV at 1,000 + 250 tokens, at 60 % of 3,350 GB/s.
    eight = ModelShape(8, 32, 8, 128)
    work = Workload(1000, 500, sessions=1)
    hw = Hardware(80, 4.5, overhead=0.1, bandwidth_gb_s=3350)
    step_s = (16e9 + 256 * 1250 * 131_072) / (0.6 * 3350e9)
    assert decode_tokens_per_s_per_gpu(eight, work, hw) == pytest.approx(256 / step_s)
    # A replica of two GPUs (TP 2) holds the weights once: per GPU, half its rate.
    tp = decode_tokens_per_s_per_gpu(eight, work, Hardware(80, overhead=0.1, tensor_parallel=2,
                                                           bandwidth_gb_s=3350))
    assert tp == pytest.approx(256 / ((16e9 + 256 * 1250 * 131_072) / (2 * 0.6 * 3350e9)) / 2)
    # Unknown bandwidth, or no room for one session: no estimate, and a peak QPS says so.
    assert decode_tokens_per_s_per_gpu(eight, work, Hardware(80)) is None
    assert decode_tokens_per_s_per_gpu(eight, Workload(10**6, 0, sessions=1), hw) is None
    with pytest.raises(SizingError, match="tokens-per-s-per-gpu"):
        size(eight, Workload(1000, 500, sessions=1, peak_qps=1), Hardware(80))


def test_the_plan_sizes_throughput_from_the_gpu_it_is_given() -> None:
    # 40 QPS × 500 tokens = 20,000 tok/s on H100s with no rate given: the estimate sizes it.
    eight = ModelShape(8, 32, 8, 128)
    hw = Hardware(80, 4.5, overhead=0.1, bandwidth_gb_s=3350)
    plan = size(eight, Workload(1000, 500, sessions=16, peak_qps=40), hw)
    rate = decode_tokens_per_s_per_gpu(eight, Workload(1000, 500, sessions=16), hw)
    assert rate is not None and plan.throughput_basis == "memory bandwidth"
    assert plan.tokens_per_s_per_gpu == rate
    assert plan.gpus_for_throughput == -(-20_000 // rate)
    given = size(eight, Workload(1000, 500, sessions=16, peak_qps=40),
                 Hardware(80, 4.5, tokens_per_s_per_gpu=2500, bandwidth_gb_s=3350))
    assert (given.throughput_basis, given.gpus_for_throughput) == ("given", 8)
