"""The Anthropic front door's thinking, beta, cache breakpoints and tool ids (pure), and how
the OpenAI family is kept clear of them."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from gateway.errors import InvalidRequest
from gateway.providers.openai_hygiene import drop_cache_control
from gateway.translate.messages_extensions import for_openai_family
from gateway.translate.messages_reply import to_anthropic_message
from gateway.translate.messages_request import to_chat_payload
from gateway.translate.messages_stream import AnthropicEventEncoder
from gateway.types import Backend

SIGNED = {"type": "thinking", "thinking": "t", "signature": "sig"}
REASONS = Backend("o3", "openai", "http://x/v1", "o3", "external", 200_000, 4)
QUIET = Backend("gpt", "openai", "http://x/v1", "gpt-4.1", "external", 200_000, 4,
                takes_reasoning_effort=False)
TOOL_TURN = {"role": "assistant", "content": [
    SIGNED, {"type": "tool_use", "id": "toolu_1", "name": "f", "input": {}}]}


def payload(beta: str | None = None, **body: Any) -> dict[str, Any]:
    return to_chat_payload({"model": "m", "max_tokens": 4096,
                            "messages": [{"role": "user", "content": "hi"}], **body}, beta)


def test_thinking_is_passed_on_and_disabled_thinking_is_not() -> None:
    assert payload(thinking={"type": "enabled", "budget_tokens": 2048})["thinking"] == {
        "type": "enabled", "budget_tokens": 2048}
    assert "thinking" not in payload(thinking={"type": "disabled"})
    for bad in ({"type": "enabled", "budget_tokens": 100}, {"type": "sometimes"}):
        with pytest.raises(InvalidRequest):
            payload(thinking=bad)


def test_signed_thinking_blocks_travel_only_while_thinking_is_on() -> None:
    turns = [{"role": "user", "content": "q"}, TOOL_TURN,
             {"role": "user", "content": [
                 {"type": "tool_result", "tool_use_id": "toolu_1", "content": "r"}]}]
    on = payload(messages=turns, thinking={"type": "enabled", "budget_tokens": 2048})
    assert on["messages"][1]["thinking_blocks"] == [SIGNED]
    off = payload(messages=turns)
    assert "thinking_blocks" not in off["messages"][1]


def test_anthropic_beta_is_checked_and_carried() -> None:
    assert payload("a-2025-01-01, b-2025")["anthropic_beta"] == "a-2025-01-01, b-2025"
    with pytest.raises(InvalidRequest) as refused:
        payload("bad value\r\nx: y")
    assert refused.value.param == "anthropic-beta"


def test_cache_breakpoints_stay_on_their_parts() -> None:
    mark = {"type": "ephemeral"}
    out = payload(system=[{"type": "text", "text": "s", "cache_control": mark}],
                  messages=[{"role": "user", "content": [
                      {"type": "text", "text": "u", "cache_control": mark}]}])
    assert out["messages"] == [
        {"role": "system", "content": [{"type": "text", "text": "s", "cache_control": mark}]},
        {"role": "user", "content": [{"type": "text", "text": "u", "cache_control": mark}]}]


def test_the_openai_family_never_sees_anthropic_fields_and_the_client_list_is_kept() -> None:
    messages = [{"role": "system", "content": [
                    {"type": "text", "text": "s", "cache_control": {"type": "ephemeral"}}]},
                {"role": "assistant", "content": "a", "thinking_blocks": [SIGNED]}]
    original = orjson.dumps(messages)
    extended = {"messages": messages, "thinking": {"type": "enabled", "budget_tokens": 4096},
                "anthropic_beta": "x"}
    body = for_openai_family(extended, REASONS)
    drop_cache_control(body)
    assert body["reasoning_effort"] == "high"
    assert not {"thinking", "anthropic_beta"} & set(body)
    assert body["messages"] == [{"role": "system", "content": [{"type": "text", "text": "s"}]},
                                {"role": "assistant", "content": "a"}]
    assert orjson.dumps(messages) == original  # fallbacks to Anthropic still get it all
    assert set(extended) == {"messages", "thinking", "anthropic_beta"}
    quiet = {"messages": [], "thinking": {"type": "adaptive"}}
    assert for_openai_family(quiet, QUIET) == {"messages": []}


def test_replies_keep_signed_blocks_and_give_tool_ids_the_toolu_form() -> None:
    completion = {"id": "chatcmpl-1", "choices": [{"finish_reason": "tool_calls", "message": {
        "role": "assistant", "content": None, "reasoning_content": "t",
        "thinking_blocks": [SIGNED, {"type": "redacted_thinking", "data": "x"}],
        "tool_calls": [{"id": "call_9", "type": "function",
                        "function": {"name": "f", "arguments": "{}"}}]}}]}
    content = to_anthropic_message(completion, "m")["content"]
    assert content == [SIGNED, {"type": "redacted_thinking", "data": "x"},
                       {"type": "tool_use", "id": "toolu_call_9", "name": "f", "input": {}}]


def test_stream_encoder_emits_signature_and_redacted_blocks() -> None:
    encoder = AnthropicEventEncoder("m", "msg_1")

    def delta(**fields: Any) -> dict[str, Any]:
        return {"id": "c", "choices": [{"index": 0, "delta": fields}]}

    frames = [*encoder.feed(delta(reasoning_content="hm")),
              *encoder.feed(delta(thinking_blocks=[{"type": "thinking", "thinking": "",
                                                    "signature": "sig"}])),
              *encoder.feed(delta(thinking_blocks=[{"type": "redacted_thinking",
                                                    "data": "x"}])),
              *encoder.feed(delta(content="ok")), *encoder.end()]
    events = [orjson.loads(f.split(b"data: ", 1)[1]) for f in b"".join(frames).split(b"\n\n")
              if f]
    kinds = [(e["type"], (e.get("delta") or e.get("content_block") or {}).get("type"))
             for e in events]
    assert kinds[2:10] == [
        ("content_block_start", "thinking"), ("content_block_delta", "thinking_delta"),
        ("content_block_delta", "signature_delta"), ("content_block_stop", None),
        ("content_block_start", "redacted_thinking"), ("content_block_stop", None),
        ("content_block_start", "text"), ("content_block_delta", "text_delta")]
