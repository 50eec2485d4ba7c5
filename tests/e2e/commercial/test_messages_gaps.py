"""The Anthropic front door's fidelity: extended thinking both ways (signed blocks handed back
across a tool call), anthropic-beta passed to Anthropic backends only, tool ids in `toolu_`
form from any backend."""

from __future__ import annotations

import time
from typing import Any

from tests.e2e.commercial.conftest import Rig
from tests.support.audit_mirror import mirror_rows

THINKING = {"type": "enabled", "budget_tokens": 2048}
WEATHER = {"name": "get_weather", "description": "weather for a city",
           "input_schema": {"type": "object", "properties": {"city": {"type": "string"}},
                            "required": ["city"]}}


def test_thinking_reaches_claude_and_comes_back_signed(gw: Rig) -> None:
    message = gw.anthropic().messages.create(
        model="claude", max_tokens=4096, thinking=THINKING,  # type: ignore[arg-type]
        messages=[{"role": "user", "content": "Think, then answer."}])
    assert gw.claude.last().body["thinking"] == THINKING
    thinking = message.content[0]
    assert thinking.type == "thinking" and thinking.signature.startswith("sig_msg_mock")
    assert message.content[-1].type == "text"


def test_streamed_thinking_carries_its_signature(gw: Rig) -> None:
    with gw.anthropic().messages.stream(
        model="claude", max_tokens=4096, thinking=THINKING,  # type: ignore[arg-type]
        messages=[{"role": "user", "content": "Think, then answer."}],
    ) as stream:
        final = stream.get_final_message()
    thinking = final.content[0]
    assert thinking.type == "thinking" and thinking.thinking
    assert thinking.signature.startswith("sig_msg_mock")


def test_signed_thinking_goes_back_with_the_tool_result(gw: Rig) -> None:
    client = gw.anthropic()
    turn: list[dict[str, Any]] = [{"role": "user", "content": "Weather in Paris?"}]
    first = client.messages.create(model="claude", max_tokens=4096, thinking=THINKING,  # type: ignore[arg-type]
                                   tools=[WEATHER], messages=turn)  # type: ignore[list-item]
    call = next(block for block in first.content if block.type == "tool_use")
    assert call.id.startswith("toolu_")
    turn += [{"role": "assistant", "content": [b.model_dump() for b in first.content]},
             {"role": "user", "content": [
                 {"type": "tool_result", "tool_use_id": call.id, "content": "18C"}]}]
    # The mock refuses an assistant tool turn without its signed thinking block first.
    second = client.messages.create(model="claude", max_tokens=4096, thinking=THINKING,  # type: ignore[arg-type]
                                    tools=[WEATHER], messages=turn)  # type: ignore[arg-type]
    assert second.content[-1].type == "text"
    sent = gw.claude.last().body["messages"][1]["content"][0]
    assert sent["type"] == "thinking" and sent["signature"] == first.content[0].signature


def test_thinking_becomes_reasoning_effort_for_an_openai_reasoning_model(gw: Rig) -> None:
    client = gw.anthropic()
    client.messages.create(model="gpt-o3", max_tokens=4096, thinking=THINKING,  # type: ignore[arg-type]
                           messages=[{"role": "user", "content": "Hi"}])
    sent = gw.gpt.last().body
    assert sent["reasoning_effort"] == "medium" and "thinking" not in sent
    client.messages.create(model="gpt", max_tokens=64, thinking=THINKING,  # type: ignore[arg-type]
                           messages=[{"role": "user", "content": "Hi"}])
    assert "reasoning_effort" not in gw.gpt.last().body  # gpt-4.1 would refuse it


def test_anthropic_beta_reaches_anthropic_backends_only(gw: Rig) -> None:
    beta = {"anthropic-beta": "context-1m-2025-08-07,fine-grained-tool-streaming-2025-05-14"}
    client = gw.anthropic()
    client.messages.create(model="claude", max_tokens=32, extra_headers=beta,
                           messages=[{"role": "user", "content": "Hi"}])
    assert gw.claude.last().headers["anthropic-beta"] == beta["anthropic-beta"]
    client.messages.create(model="gpt", max_tokens=32, extra_headers=beta,
                           messages=[{"role": "user", "content": "Hi"}])
    sent = gw.gpt.last()
    assert "anthropic-beta" not in sent.headers and "anthropic_beta" not in sent.body


def test_tool_ids_from_an_openai_backend_take_the_toolu_form(gw: Rig) -> None:
    client = gw.anthropic()
    message = client.messages.create(
        model="local", max_tokens=200, tools=[WEATHER],  # type: ignore[list-item]
        tool_choice={"type": "tool", "name": "get_weather"},
        messages=[{"role": "user", "content": "Weather in Paris?"}])
    call = next(block for block in message.content if block.type == "tool_use")
    assert call.id.startswith("toolu_")
    with client.messages.stream(
        model="local", max_tokens=200, tools=[WEATHER],  # type: ignore[list-item]
        tool_choice={"type": "tool", "name": "get_weather"},
        messages=[{"role": "user", "content": "Weather in Oslo?"}],
    ) as stream:
        final = stream.get_final_message()
    assert next(b for b in final.content if b.type == "tool_use").id.startswith("toolu_")


def test_a_finished_stream_is_recorded_as_served(gw: Rig) -> None:
    with gw.anthropic().messages.with_streaming_response.create(
        model="claude", max_tokens=64, stream=True,
        messages=[{"role": "user", "content": "Hi"}],
    ) as raw:
        request_id = raw.headers["x-request-id"]
        assert b"message_stop" in b"".join(raw.iter_bytes())
    deadline = time.monotonic() + 10  # the audit writer flushes in batches
    while not (rows := [r for r in mirror_rows(gw.audit_path) if r["request_id"] == request_id]):
        assert time.monotonic() < deadline, "the request never reached the audit log"
        time.sleep(0.05)
    assert rows[0]["outcome"] == "ok"
