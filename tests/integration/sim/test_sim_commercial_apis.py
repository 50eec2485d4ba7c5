"""The sim playing the demo's commercial backends: Anthropic's Messages API driven by the
official anthropic SDK (replies, named stream events, tool use, errors in Anthropic's shape),
and OpenAI's API with an API's latency and an honest owned_by."""

from __future__ import annotations

import time
from collections.abc import Iterator

import anthropic
import httpx
import openai
import pytest

from gateway.sim import SimConfig
from tests.integration.sim.conftest import serve_sim

ANTHROPIC = SimConfig(model_name="claude-sim", api="anthropic", time_scale=0.05, seed=3,
                      owned_by="simulated Anthropic API")
OPENAI = SimConfig(model_name="gpt-sim", api="openai", response_delay_s=0.3,
                   decode_step_base_s=0.001, owned_by="simulated OpenAI API")


@pytest.fixture(scope="module")
def claude() -> Iterator[anthropic.Anthropic]:
    with serve_sim(ANTHROPIC) as url, anthropic.Anthropic(
            base_url=url, api_key="any", max_retries=0) as client:
        yield client


def test_a_message_comes_back_in_anthropics_shape(claude: anthropic.Anthropic) -> None:
    reply = claude.messages.create(model="claude-sim", max_tokens=12, system="be brief",
                                   messages=[{"role": "user", "content": "hello"}])
    assert reply.id.startswith("msg_") and reply.role == "assistant"
    assert reply.stop_reason in ("end_turn", "max_tokens")
    assert reply.content[0].type == "text" and reply.content[0].text
    assert reply.usage.output_tokens <= 12 and reply.usage.input_tokens > 0


def test_a_stream_has_anthropics_events_in_order(claude: anthropic.Anthropic) -> None:
    with claude.messages.stream(model="claude-sim", max_tokens=30,
                                messages=[{"role": "user", "content": "tell me more"}]) as s:
        kinds = [event.type for event in s]
        final = s.get_final_message()
    assert kinds[0] == "message_start" and kinds[-1] == "message_stop"
    assert kinds.index("content_block_start") < kinds.index("content_block_delta")
    assert kinds[-3:-1] == ["content_block_stop", "message_delta"]
    assert final.content[0].text and final.usage.output_tokens == kinds.count(
        "content_block_delta")


def test_a_forced_tool_call_is_a_tool_use_block(claude: anthropic.Anthropic) -> None:
    tool = {"name": "get_weather", "description": "weather",
            "input_schema": {"type": "object", "properties": {"city": {"type": "string"}},
                             "required": ["city"]}}
    reply = claude.messages.create(
        model="claude-sim", max_tokens=200, tools=[tool],  # type: ignore[list-item]
        tool_choice={"type": "tool", "name": "get_weather"},
        messages=[{"role": "user", "content": "weather in Oslo?"}])
    block = reply.content[0]
    assert reply.stop_reason == "tool_use" and block.type == "tool_use"
    assert block.id.startswith("toolu_") and block.name == "get_weather"
    assert isinstance(block.input, dict) and "city" in block.input


def test_errors_are_anthropics(claude: anthropic.Anthropic) -> None:
    with pytest.raises(anthropic.NotFoundError) as missing:
        claude.messages.create(model="nope", max_tokens=5,
                               messages=[{"role": "user", "content": "hi"}])
    assert missing.value.body["error"]["type"] == "not_found_error"  # type: ignore[index]
    with pytest.raises(anthropic.BadRequestError):
        claude.messages.create(model="claude-sim", max_tokens=5,
                               messages=[{"role": "system", "content": "hi"}])  # type: ignore[list-item, misc]


def test_the_openai_api_sim_says_what_it_is_and_answers_like_an_api() -> None:
    with serve_sim(OPENAI) as url, openai.OpenAI(base_url=f"{url}/v1", api_key="any",
                                                  max_retries=0) as client:
        card = client.models.retrieve("gpt-sim")
        assert card.owned_by == "simulated OpenAI API"
        assert set(card.model_dump(exclude_none=True)) == {"id", "object", "created",
                                                           "owned_by"}
        started = time.perf_counter()
        reply = client.chat.completions.create(
            model="gpt-sim", max_tokens=3, messages=[{"role": "user", "content": "hi"}])
        assert time.perf_counter() - started >= 0.3  # an API's network and queueing
        assert reply.choices[0].message.content
        # A commercial API has no vLLM extras.
        assert httpx.get(f"{url}/metrics", timeout=5).status_code == 404
