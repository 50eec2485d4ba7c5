"""Request parsing and the 400/404s the sim returns in vLLM's envelope; fault bookkeeping."""

from __future__ import annotations

from typing import Any

import pytest

from gateway.sim.config import SimConfig
from gateway.sim.errors import SimError, error_body
from gateway.sim.faults import SimFaults
from gateway.sim.protocol import (
    check_model,
    check_token_ids,
    content_text,
    parse_chat,
    parse_completion,
    parse_embedding,
    resolve_max_tokens,
)

CONFIG = SimConfig(max_model_len=1024, default_max_tokens=100)
USER = [{"role": "user", "content": "hi"}]


def status_of(call: Any) -> int:
    with pytest.raises(SimError) as info:
        call()
    return info.value.status


def test_envelope_has_an_integer_code_like_vllm() -> None:
    assert error_body(400, "bad") == {
        "error": {"message": "bad", "type": "BadRequestError", "param": None, "code": 400}
    }


def test_max_completion_tokens_wins_over_max_tokens() -> None:
    parsed = parse_chat({"messages": USER, "max_tokens": 5, "max_completion_tokens": 9})
    assert parsed.options.max_tokens == 9


def test_context_length_rules_follow_vllm_0_32() -> None:
    assert resolve_max_tokens(CONFIG, 1000, None) == 24  # the room left, under the default
    assert resolve_max_tokens(CONFIG, 10, None) == 100
    assert resolve_max_tokens(CONFIG, 1000, 500) == 24  # overrunning the room is cut, not refused
    with pytest.raises(SimError, match="maximum context length is 1024 tokens") as info:
        resolve_max_tokens(CONFIG, 1024, None)
    assert (info.value.status, info.value.param) == (400, "input_tokens")
    with pytest.raises(SimError, match="max_tokens=2000 cannot be greater than") as info:
        resolve_max_tokens(CONFIG, 10, 2000)
    assert (info.value.status, info.value.param) == (400, "max_tokens")


def test_reject_mode_refuses_an_overrun_like_older_vllm() -> None:
    strict = SimConfig(max_model_len=1024, context_overflow="reject")
    with pytest.raises(SimError, match=r"you requested 1025 tokens \(1000 in the messages"):
        resolve_max_tokens(strict, 1000, 25)
    assert resolve_max_tokens(strict, 1000, 24) == 24


@pytest.mark.parametrize(
    "body",
    [
        {"messages": []},
        {"messages": [{"content": "no role"}]},
        {"messages": USER, "n": 2},
        {"messages": USER, "max_tokens": 0},
        {"messages": USER, "max_tokens": "10"},
        {"messages": USER, "stream_options": {"include_usage": True}},
        {"messages": USER, "tool_choice": "required"},
        {
            "messages": USER,
            "tools": [{"type": "function", "function": {"name": "f"}}],
            "tool_choice": {"type": "function", "function": {"name": "g"}},
        },
        {"messages": USER, "response_format": {"type": "yaml"}},
    ],
)
def test_bad_chat_requests_are_400(body: dict[str, Any]) -> None:
    assert status_of(lambda: parse_chat(body)) == 400


def test_token_ids_must_be_in_the_vocabulary() -> None:
    check_token_ids(CONFIG, (0, CONFIG.vocab_size - 1))
    assert status_of(lambda: check_token_ids(CONFIG, (CONFIG.vocab_size,))) == 400
    assert status_of(lambda: check_token_ids(CONFIG, (-1,))) == 400


def test_unknown_model_is_404() -> None:
    check_model(CONFIG, None)
    check_model(CONFIG, CONFIG.model_name)
    assert status_of(lambda: check_model(CONFIG, "gpt-9")) == 404


def test_content_parts_and_tool_calls_count_as_text() -> None:
    parts = [{"type": "text", "text": "look: "}, {"type": "image_url", "image_url": {"url": "x"}}]
    assert content_text(parts) == "look: <image_url>"
    call = {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
    parsed = parse_chat(
        {"messages": [{"role": "assistant", "content": None, "tool_calls": [call]}]}
    )
    assert '"name":"f"' in parsed.turns[0][1]


def test_prompt_and_input_forms() -> None:
    assert parse_completion({"prompt": [1, 2, 3]}).prompt == (1, 2, 3)
    assert parse_completion({"prompt": ["one"]}).prompt == "one"
    assert status_of(lambda: parse_completion({"prompt": ["a", "b"]})) == 400
    embedding = parse_embedding({"input": ["a", [5, 6]], "encoding_format": "base64"})
    assert embedding.inputs == ("a", (5, 6)) and embedding.base64


def test_status_fault_lasts_count_requests_on_its_paths_only() -> None:
    faults = SimFaults()
    faults.configure({"status": 503, "count": 2})
    assert faults.take("/health").status is None
    assert [faults.take("/v1/chat/completions").status for _ in range(3)] == [503, 503, None]


def test_faults_without_count_last_until_cleared() -> None:
    faults = SimFaults()
    faults.configure({"delay_s": 0.5, "abort_stream_after_tokens": 3})
    for _ in range(3):
        assert faults.take("/v1/completions").delay_s == 0.5
        assert faults.take_stream_abort("/v1/completions") == 3
    faults.clear()
    assert faults.take("/v1/completions").delay_s == 0.0
    assert faults.take_stream_abort("/v1/completions") is None


@pytest.mark.parametrize(
    "spec", [{"status": 200}, {"status": 503, "count": 0}, {"delay_s": -1}, {"bogus": 1}]
)
def test_bad_fault_specs_are_refused(spec: dict[str, Any]) -> None:
    with pytest.raises(ValueError):
        SimFaults().configure(spec)
