"""`gateway policy replay` reports capacity: the GPUs each self-hosted deployment needs for
the busiest minute, as recorded and as the new policy would route the traffic, and the
monthly cost of the difference; checked by hand."""

from __future__ import annotations

from pathlib import Path

import orjson
from sqlalchemy.ext.asyncio import AsyncEngine

from gateway.audit.rollup import bucket_tokens, token_bucket
from tests.integration.test_policy_replay import gateway, recorded_rows, replay_args, store
from tests.support.replay_policies import IN_HOUSE

# The same fleet with real model names and GPUs: big-a and big-b are Llama 3.1 70B on four
# H100s ($4.50 each an hour), small is Llama 3.1 8B on one L4.
WITH_GPUS = IN_HOUSE.replace(
    "model: m-big\n",
    "model: meta-llama/Llama-3.1-70B-Instruct\n    gpu: {type: H100, hourly_usd: 4.5, count: 4}\n",
).replace("model: m-small\n",
          "model: meta-llama/Llama-3.1-8B-Instruct\n    gpu: {type: L4, hourly_usd: 0.8}\n")


async def test_moving_hard_requests_in_house_needs_gpus(engine: AsyncEngine,
                                                        tmp_path: Path) -> None:
    await store(engine, recorded_rows())
    policy = tmp_path / "in-house.yaml"
    policy.write_text(WITH_GPUS)
    result = await gateway(*replay_args(engine, policy, "--format", "json"))
    assert result.exit_code == 0, result.output
    capacity = {c["backend"]: c for c in orjson.loads(result.stdout)["capacity"]}
    assert set(capacity) == {"big-a", "small"}  # big-b carries nothing; frontier is an API
    big = capacity["big-a"]
    assert big["before"] is None  # nothing was recorded on it
    # After: the 12 hard requests, each 1.25 s, all in the minute 11:06: 15 request-seconds
    # (0.25 in flight, +20 % → 1 session) and 12 arrivals (0.2 QPS). Memory: 141.2 GB of
    # weights + one session's KV, × 1.1 → 2 H100s. Throughput: 0.2 × 1.2 × p90 output
    # tokens/s, far below what two H100s decode (their memory bandwidth bounds it), so the
    # memory decides; the minute's 60 tok/s is what was asked of them, not what they can do.
    output_p90 = round(bucket_tokens(token_bucket(300)))
    assert 0.2 * 1.2 * output_p90 < 100
    gpus = 2
    assert big["after"] == {"peak_sessions": 0.25, "peak_qps": 0.2, "gpus": gpus,
                            "monthly_usd": gpus * 730 * 4.5}
    assert big["gpus_delta"] == gpus and big["monthly_usd_delta"] == gpus * 730 * 4.5
    small = capacity["small"]
    assert small["before"] == small["after"] and small["gpus_delta"] == 0  # it kept its load

    table = await gateway(*replay_args(engine, policy))
    assert f"big-a: 0 -> {gpus:.0f} GPUs, $0.00 -> ${gpus * 730 * 4.5:,.2f} a month" \
        in table.stdout
