"""`gateway plan --from-audit` on SQLite and Postgres: requests with known start and end times
go through the audit repository into the load rollups, and the plan's every figure is checked
by hand."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import orjson
import pytest
from click.testing import CliRunner
from sqlalchemy.ext.asyncio import AsyncEngine

from gateway.audit.records import Chain, event_row
from gateway.audit.repository import AuditRepository
from gateway.audit.rollup import bucket_tokens, token_bucket
from gateway.cli.main import cli
from tests.support.audit_events import make_event

DAY = 1_795_000_000.0  # 2026-11-18T11:06:40Z
POLICY = """\
version: 1
backends:
  - name: llama-8b
    provider: vllm
    base_url: http://127.0.0.1:9/v1
    model: meta-llama/Llama-3.1-8B-Instruct
    context_window: 131072
    gpu: {type: L4, hourly_usd: 0.8, count: 1}
  - name: gpt-frontier
    provider: openai
    base_url: https://api.example.com/v1
    model: gpt-4o
    zone: external
    context_window: 8192
    price_per_mtok_usd: {input: 2.5, output: 10.0}
rules:
  - name: sensitive-stays-home
    when: {sensitivity: [pii, secret, phi]}
    allow_zones: [self_hosted]
"""


async def plan(engine: AsyncEngine, tmp_path: Path, *args: str) -> dict[str, Any]:
    path = tmp_path / "policy.yaml"
    path.write_text(POLICY)
    url = engine.url.render_as_string(hide_password=False)
    result = await asyncio.to_thread(
        CliRunner().invoke, cli,
        ["plan", "--from-audit", "--since", "2026-11-18", "--until", "2026-11-18",
         "--policy", str(path), "--database-url", url, "--format", "json", *args],
        env={"GATEWAY_DATABASE_URL": None}, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    body: dict[str, Any] = orjson.loads(result.stdout)
    return body


@pytest.fixture
async def traffic(engine: AsyncEngine) -> None:
    # Four 30-second requests from 11:10:00 (two in flight on average that minute), one of
    # 45 seconds from 11:20:00, and one to the API that is not sized.
    events = [make_event(ts_unix_s=DAY + 230, duration_s=30.0) for _ in range(4)]
    events += [make_event(ts_unix_s=DAY + 845, duration_s=45.0),
               make_event(ts_unix_s=DAY + 300, backend="gpt-frontier", zone="external")]
    chain = Chain("plan")
    await AuditRepository(engine).insert([chain.link(event_row(e)) for e in events])


async def test_the_plan_from_observed_traffic(engine: AsyncEngine, tmp_path: Path,
                                              traffic: None) -> None:
    body = await plan(engine, tmp_path)
    assert body["since"] == "2026-11-18T00:00:00+00:00" and body["headroom"] == 0.2
    (llama,) = body["deployments"]
    prompt_p90 = round(bucket_tokens(token_bucket(1200)))  # within 10 % above 1,200
    output_p90 = round(bucket_tokens(token_bucket(300)))
    assert llama["observed"] == {
        "peak_sessions": 2.0, "peak_qps": round(4 / 60, 3),
        "mean_qps": round(5 / 86_400, 6),  # the day's five requests: what break-even compares
        "prompt_tokens_p90": prompt_p90,
        "output_tokens_p90": output_p90, "requests": 5,
        "peak_output_tokens_per_s": 4 * 300 / 60,  # the busiest minute: demand, not capacity
    }
    # 2 in flight + 20 % headroom → 3 sessions; Llama 3.1 8B's catalogue shape on an L4.
    assert llama["concurrent_sessions"] == 3
    assert llama["weights_bytes"] == 16_060_000_000
    assert llama["kv_bytes_per_token"] == 131_072
    assert llama["kv_bytes_per_session"] == (prompt_p90 + output_p90) * 131_072
    assert llama["gpus_for_memory"] == 1  # (16.06 GB + 3 sessions' KV) × 1.1 < 24 GB
    # 4/60 QPS × 1.2 × p90 output tokens against what an L4 decodes with its batch full:
    # the KV headroom left beside 16.06 GB of weights holds 27 sessions, and each step reads
    # the weights and every session's KV (prompt + half the output) at 60 % of 300 GB/s.
    needed = 4 / 60 * 1.2 * output_p90
    assert llama["tokens_per_s_needed"] == pytest.approx(needed)
    room = 24e9 / 1.1 - 16.06e9
    batch = int(room // ((prompt_p90 + output_p90) * 131_072))
    step_s = (16.06e9 + batch * (prompt_p90 + output_p90 / 2) * 131_072) / (0.6 * 300e9)
    assert (batch, llama["throughput_basis"]) == (27, "memory bandwidth")
    assert llama["tokens_per_s_per_gpu"] == pytest.approx(batch / step_s)
    assert llama["gpus_for_throughput"] == 1
    assert llama["gpus"] == 1 and llama["monthly_usd"] == 730 * 0.8
    # Five requests at $0.006 on the baseline in one day: a month of it is 730/24 days.
    assert llama["baseline_monthly_usd"] == round(0.030 * 730 / 24, 2)
    assert llama["break_even_qps"] == round(584 / (0.006 * 730 * 3600), 4)
    one = llama["spill"][0]
    # The busiest 1 % of the day's minutes holds both busy minutes: all of it goes out, and
    # one GPU is still the least a deployment holds, so spilling only adds the API's cost.
    assert (one["top_share"], one["gpus"], one["spilled_share"]) == (0.01, 1, 1.0)
    assert one["api_monthly_usd"] == round(0.030 * 730 / 24, 2)
    assert one["saved_monthly_usd"] == round(-0.030 * 730 / 24, 2)


async def test_an_unknown_model_asks_for_its_size(engine: AsyncEngine, tmp_path: Path,
                                                  traffic: None) -> None:
    body = await plan(engine, tmp_path, "--model", "qwen2.5-7b", "--gpu", "H100",
                      "--backend", "llama-8b", "--tokens-per-s-per-gpu", "1000")
    (found,) = body["deployments"]
    assert found["weights_bytes"] == 15_240_000_000 and found["gpus"] == 1
    assert found["kv_bytes_per_token"] == 2 * 28 * 4 * 128 * 2


async def report_page(engine: AsyncEngine, tmp_path: Path) -> str:
    """`gateway report html` for the traffic's day, under POLICY: the page's HTML."""
    path = tmp_path / "policy.yaml"
    path.write_text(POLICY)
    out = tmp_path / "report.html"
    url = engine.url.render_as_string(hide_password=False)
    result = await asyncio.to_thread(
        CliRunner().invoke, cli,
        ["report", "html", "--out", str(out), "--since", "2026-11-18", "--until", "2026-11-18",
         "--policy", str(path), "--database-url", url],
        env={"GATEWAY_DATABASE_URL": None}, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return out.read_text()


async def test_the_report_page_has_the_same_plan(engine: AsyncEngine, tmp_path: Path,
                                                 traffic: None) -> None:
    page = await report_page(engine, tmp_path)
    path, url = tmp_path / "policy.yaml", engine.url.render_as_string(hide_password=False)
    section = page[page.index('<section id="capacity">'):]
    # The same figures as the plan above: 1 GPU at $584 a month for llama-8b.
    assert "<td>llama-8b</td><td>2.00</td><td>0.067</td>" in section
    assert "<td>1</td><td>$584.00</td>" in section
    # Break-even beside the mean QPS in the same (sustained) unit, as the CLI states both.
    text = await asyncio.to_thread(
        CliRunner().invoke, cli,
        ["plan", "--from-audit", "--since", "2026-11-18", "--until", "2026-11-18",
         "--policy", str(path), "--database-url", url],
        env={"GATEWAY_DATABASE_URL": None}, catch_exceptions=False)
    break_even = f"{584 / (0.006 * 730 * 3600):,.4f}"
    mean = f"{5 / 86_400:,.4f}"
    assert f"<td>{mean}</td><td>{break_even}</td>" in section
    assert f"above {break_even} QPS sustained (observed mean {mean} QPS)" in text.output
    assert "$584.00 a month" in text.output and "$584.00" in section
    # A spill that only adds the API's cost says so with the sign first, as the page does.
    assert "saves -$0.91 a month" in text.output
