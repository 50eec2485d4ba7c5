"""Anthropic Messages response and errors → OpenAI: pure, no fixtures."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from gateway.providers.anthropic_errors import anthropic_error
from gateway.translate.anthropic_reply import openai_usage, to_chat_completion
from gateway.translate.anthropic_request import JsonMode

USAGE = {"input_tokens": 10, "output_tokens": 7, "cache_read_input_tokens": 100,
         "cache_creation_input_tokens": 20}


def message(*blocks: dict[str, Any], stop: str = "end_turn", **extra: Any) -> dict[str, Any]:
    return {"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-x",
            "content": list(blocks), "stop_reason": stop, "stop_sequence": None,
            "usage": USAGE, **extra}


def completion(msg: dict[str, Any], json_mode: JsonMode | None = None) -> dict[str, Any]:
    body, _ = to_chat_completion(msg, json_mode, 1700000000)
    return orjson.loads(body)


def test_text_reply_and_usage_that_counts_cached_tokens_as_openai_does():
    body, usage = to_chat_completion(
        message({"type": "text", "text": "Hel"}, {"type": "text", "text": "lo"}), None, 17)
    out = orjson.loads(body)
    assert out["object"] == "chat.completion" and out["created"] == 17
    assert out["id"] == "chatcmpl-msg_1" and out["model"] == "claude-x"
    choice = out["choices"][0]
    assert choice["message"] == {"role": "assistant", "content": "Hello"}
    assert choice["finish_reason"] == "stop"
    assert out["usage"] == {"prompt_tokens": 130, "completion_tokens": 7, "total_tokens": 137,
                            "prompt_tokens_details": {"cached_tokens": 100,
                                                      "cache_write_tokens": 20}}
    assert (usage.prompt_tokens, usage.completion_tokens, usage.cached_tokens) == (130, 7, 100)


def test_tool_use_becomes_tool_calls_with_json_string_arguments():
    out = completion(message(
        {"type": "text", "text": "Let me check."},
        {"type": "tool_use", "id": "toolu_1", "name": "get", "input": {"city": "Oslo", "n": [1]}},
        stop="tool_use"))
    choice = out["choices"][0]
    assert choice["finish_reason"] == "tool_calls"
    call = choice["message"]["tool_calls"][0]
    assert call == {"id": "toolu_1", "type": "function", "function": {
        "name": "get", "arguments": '{"city":"Oslo","n":[1]}'}}
    assert choice["message"]["content"] == "Let me check."
    only_tool = completion(message({"type": "tool_use", "id": "t", "name": "get", "input": {}},
                                   stop="tool_use"))
    assert only_tool["choices"][0]["message"]["content"] is None


@pytest.mark.parametrize("wrapped,tool_input,content", [
    (False, {"a": 1}, '{"a":1}'),
    (True, {"value": [1, 2]}, "[1,2]"),
])
def test_the_forced_answer_tool_turns_back_into_content(wrapped: bool, tool_input: Any,
                                                        content: str):
    mode = JsonMode("json_response", wrapped)
    out = completion(message({"type": "tool_use", "id": "t", "name": "json_response",
                              "input": tool_input}, stop="tool_use"), mode)
    choice = out["choices"][0]
    assert choice["message"] == {"role": "assistant", "content": content}
    assert choice["finish_reason"] == "stop"


@pytest.mark.parametrize("stop,finish", [
    ("end_turn", "stop"), ("stop_sequence", "stop"), ("max_tokens", "length"),
    ("tool_use", "stop"), ("refusal", "content_filter"), ("pause_turn", "stop"),
    ("model_context_window_exceeded", "length"), ("something_new", "stop"), (None, "stop"),
])
def test_stop_reasons(stop: str | None, finish: str):
    out = completion(message({"type": "text", "text": "x"}, stop=stop))  # type: ignore[arg-type]
    assert out["choices"][0]["finish_reason"] == finish


def test_thinking_is_reasoning_content_and_the_matched_stop_sequence_is_kept():
    out = completion(message({"type": "thinking", "thinking": "hmm", "signature": "s"},
                             {"type": "text", "text": "ok"}, stop="stop_sequence",
                             stop_sequence="END"))
    assert out["choices"][0]["message"]["reasoning_content"] == "hmm"
    assert out["choices"][0]["stop_reason"] == "END"


def test_usage_without_cache_fields():
    assert openai_usage({"input_tokens": 5, "output_tokens": 1})["prompt_tokens"] == 5
    assert openai_usage(None)["total_tokens"] == 0


def error(kind: str, text: str = "boom") -> bytes:
    return orjson.dumps({"type": "error", "error": {"type": kind, "message": text},
                         "request_id": "req_1"})


@pytest.mark.parametrize("status,kind,client_status,client_type,code", [
    (400, "invalid_request_error", 400, "invalid_request_error", None),
    (413, "request_too_large", 413, "invalid_request_error", "request_too_large"),
])
def test_request_errors_keep_their_status(status: int, kind: str, client_status: int,
                                          client_type: str, code: str | None):
    err, retryable = anthropic_error(status, error(kind), "claude")
    assert not retryable
    assert err.to_dict() == {"error": {"message": "boom", "type": client_type, "param": None,
                                       "code": code}}
    assert err.status == client_status


@pytest.mark.parametrize("status,kind,client_status,code", [
    (429, "rate_limit_error", 429, "rate_limit_exceeded"),
    (529, "overloaded_error", 502, "overloaded"),
    (500, "api_error", 502, "upstream_unavailable"),
    (401, "authentication_error", 502, "upstream_misconfigured"),
    (403, "permission_error", 502, "upstream_misconfigured"),
    (404, "not_found_error", 502, "upstream_misconfigured"),
])
def test_what_another_candidate_may_serve_fails_over(status: int, kind: str,
                                                     client_status: int, code: str):
    err, retryable = anthropic_error(status, error(kind, "secret-free message"), "claude")
    assert retryable and err.status == client_status and err.code == code
    assert "claude" in err.message


def test_a_plain_text_error_body():
    err, retryable = anthropic_error(400, b"bad gateway config", "claude")
    assert not retryable and err.message == "bad gateway config"
