"""Responses API ⇄ chat completions, both directions, and the stream encoder (pure)."""

from __future__ import annotations

from typing import Any

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from gateway.errors import InvalidRequest
from gateway.translate.responses import (
    ResponsesEventEncoder,
    Untranslatable,
    native_payload,
    parse_responses_request,
    to_chat_payload,
    to_response,
)

IMAGE = "data:image/png;base64,iVBORw0KGgo="


def chat(body: dict[str, Any], history: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    return to_chat_payload(parse_responses_request(body), history or [])


def test_string_input_instructions_and_settings() -> None:
    payload = chat({"model": "m", "input": "Hi", "instructions": "Be brief.",
                    "max_output_tokens": 50, "temperature": 0.3, "top_p": 0.8, "user": "u",
                    "reasoning": {"effort": "low", "summary": "auto"},
                    "metadata": {"k": "v"}, "store": True, "parallel_tool_calls": False})
    assert payload == {
        "model": "m", "messages": [{"role": "system", "content": "Be brief."},
                                   {"role": "user", "content": "Hi"}],
        "max_tokens": 50, "temperature": 0.3, "top_p": 0.8, "user": "u",
        "reasoning_effort": "low", "parallel_tool_calls": False,
    }


def test_items_become_chat_turns() -> None:
    payload = chat({"model": "m", "input": [
        {"role": "developer", "content": "Rules."},
        {"type": "message", "role": "user", "content": [
            {"type": "input_text", "text": "What is this?"},
            {"type": "input_image", "image_url": IMAGE, "detail": "low"}]},
        {"type": "reasoning", "id": "rs_1", "summary": []},
        {"type": "message", "role": "assistant", "content": [
            {"type": "output_text", "text": "Let me look.", "annotations": []}]},
        {"type": "function_call", "call_id": "call_1", "name": "look", "arguments": "{}"},
        {"type": "function_call", "call_id": "call_2", "name": "zoom", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "call_1", "output": "a cat"},
        {"type": "function_call_output", "call_id": "call_2",
         "output": [{"type": "input_text", "text": "big"}]},
    ]})
    assert payload["messages"] == [
        {"role": "system", "content": "Rules."},
        {"role": "user", "content": [
            {"type": "text", "text": "What is this?"},
            {"type": "image_url", "image_url": {"url": IMAGE, "detail": "low"}}]},
        {"role": "assistant", "content": "Let me look.", "tool_calls": [
            {"id": "call_1", "type": "function", "function": {"name": "look",
                                                               "arguments": "{}"}},
            {"id": "call_2", "type": "function", "function": {"name": "zoom",
                                                               "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "call_1", "content": "a cat"},
        {"role": "tool", "tool_call_id": "call_2", "content": "big"},
    ]


def test_history_comes_before_input_and_instructions_first() -> None:
    history = [{"type": "message", "role": "user", "content": "Earlier"},
               {"type": "message", "role": "assistant", "id": "msg_1", "status": "completed",
                "content": [{"type": "output_text", "text": "Noted", "annotations": []}]}]
    payload = chat({"model": "m", "input": "Now", "instructions": "Sys"}, history)
    assert [m["content"] for m in payload["messages"]] == ["Sys", "Earlier", "Noted", "Now"]


def test_tools_tool_choice_and_formats() -> None:
    tool = {"type": "function", "name": "f", "description": "d",
            "parameters": {"type": "object"}, "strict": True}
    payload = chat({"model": "m", "input": "x", "tools": [tool],
                    "tool_choice": {"type": "function", "name": "f"},
                    "text": {"format": {"type": "json_schema", "name": "n",
                                        "schema": {"type": "object"}, "strict": True}}})
    assert payload["tools"] == [{"type": "function", "function": {
        "name": "f", "description": "d", "parameters": {"type": "object"}, "strict": True}}]
    assert payload["tool_choice"] == {"type": "function", "function": {"name": "f"}}
    assert payload["response_format"] == {"type": "json_schema", "json_schema": {
        "name": "n", "schema": {"type": "object"}, "strict": True}}
    assert chat({"model": "m", "input": "x", "tools": [tool],
                 "tool_choice": "required"})["tool_choice"] == "required"
    # Without tools, a tool_choice says nothing (and OpenAI refuses it).
    assert "tool_choice" not in chat({"model": "m", "input": "x", "tool_choice": "none"})
    assert chat({"model": "m", "input": "x", "text": {"format": {"type": "json_object"}}})[
        "response_format"] == {"type": "json_object"}
    assert "response_format" not in chat({"model": "m", "input": "x",
                                          "text": {"format": {"type": "text"}}})


def test_streaming_asks_for_usage_and_gateway_fields_stay_home() -> None:
    payload = chat({"model": "m", "input": "x", "stream": True, "store": False,
                    "metadata": {"a": "b"}, "include": ["reasoning.encrypted_content"]})
    assert payload["stream_options"] == {"include_usage": True}
    assert not {"store", "metadata", "include", "previous_response_id"} & set(payload)


@pytest.mark.parametrize(("body", "param"), [
    ({"input": "x"}, "model"),
    ({"model": "m"}, "input"),
    ({"model": "m", "input": []}, "input"),
    ({"model": "m", "input": "x", "nonsense": 1}, "nonsense"),
    ({"model": "m", "input": "x", "tools": [{"type": "web_search"}]}, "tools[0].type"),
    ({"model": "m", "input": "x", "tool_choice": {"type": "web_search_preview"}},
     "tool_choice"),
    ({"model": "m", "input": "x", "background": True}, "background"),
    ({"model": "m", "input": "x", "conversation": "conv_1"}, "conversation"),
    ({"model": "m", "input": "x", "max_output_tokens": 0}, "max_output_tokens"),
    ({"model": "m", "input": "x", "metadata": {"k": 1}}, "metadata"),
    ({"model": "m", "input": [{"type": "item_reference", "id": "msg_1"}]}, "input[0].type"),
    ({"model": "m", "input": [{"role": "user", "content": [
        {"type": "input_image", "file_id": "file_1"}]}]}, "input[0].content[0].image_url"),
    ({"model": "m", "input": [{"role": "tool", "content": "x"}]}, "input[0].role"),
    ({"model": "m", "input": "x", "text": {"format": {"type": "json_schema"}}}, "text.format"),
])
def test_untranslatable_requests_are_refused_naming_the_parameter(
    body: dict[str, Any], param: str
) -> None:
    with pytest.raises(InvalidRequest) as refused:
        chat(body)
    assert refused.value.param == param


def completion(message: dict[str, Any], finish: str = "stop") -> dict[str, Any]:
    return {"id": "chatcmpl-1", "created": 1700000000, "choices": [
        {"index": 0, "message": message, "finish_reason": finish}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15,
                  "prompt_tokens_details": {"cached_tokens": 4},
                  "completion_tokens_details": {"reasoning_tokens": 2}}}


def test_reply_with_reasoning_text_and_tool_calls() -> None:
    request = parse_responses_request({"model": "auto", "input": "x"})
    response = to_response(completion({
        "role": "assistant", "content": "Checking.", "reasoning_content": "think",
        "tool_calls": [{"id": "call_9", "type": "function",
                        "function": {"name": "f", "arguments": "{\"a\":1}"}}]},
        "tool_calls"), "resp_1", request.echo, "auto", store=True)
    assert [item["type"] for item in response["output"]] == [
        "reasoning", "message", "function_call"]
    assert response["output"][0]["content"] == [{"type": "reasoning_text", "text": "think"}]
    assert response["output"][1]["content"][0]["text"] == "Checking."
    call = response["output"][2]
    assert (call["call_id"], call["name"], call["arguments"]) == ("call_9", "f", "{\"a\":1}")
    assert response["status"] == "completed" and response["incomplete_details"] is None
    assert response["usage"] == {
        "input_tokens": 10,
        "input_tokens_details": {"cached_tokens": 4, "cache_write_tokens": 0},
        "output_tokens": 5, "output_tokens_details": {"reasoning_tokens": 2},
        "total_tokens": 15}
    assert response["created_at"] == 1700000000 and response["tool_choice"] == "auto"


@pytest.mark.parametrize(("finish", "reason"), [("length", "max_output_tokens"),
                                                 ("content_filter", "content_filter")])
def test_cut_short_replies_are_incomplete_with_the_reason(finish: str, reason: str) -> None:
    request = parse_responses_request({"model": "auto", "input": "x"})
    response = to_response(completion({"role": "assistant", "content": "Par"}, finish),
                           "resp_1", request.echo, "auto", store=False)
    assert response["status"] == "incomplete"
    assert response["incomplete_details"] == {"reason": reason}
    assert response["output"][0]["status"] == "incomplete" and response["store"] is False


def events(frames: list[bytes]) -> list[dict[str, Any]]:
    out = []
    for frame in b"".join(frames).split(b"\n\n"):
        if frame:
            name, data = frame.split(b"\n", 1)
            event = orjson.loads(data.removeprefix(b"data: "))
            assert name == b"event: " + event["type"].encode()
            out.append(event)
    return out


def delta(**fields: Any) -> dict[str, Any]:
    return {"id": "c", "choices": [{"index": 0, "delta": fields, "finish_reason": None}]}


def test_stream_reasoning_then_text_then_parallel_tools() -> None:
    encoder = ResponsesEventEncoder("resp_1", {}, "auto", store=True)
    frames = [
        *encoder.feed(delta(role="assistant", reasoning_content="hmm")),
        *encoder.feed(delta(content="Hi")),
        *encoder.feed(delta(tool_calls=[{"index": 0, "id": "call_a", "type": "function",
                                         "function": {"name": "f", "arguments": "{\"x\""}}])),
        *encoder.feed(delta(tool_calls=[{"index": 0, "function": {"arguments": ":1}"}}])),
        *encoder.feed(delta(tool_calls=[{"index": 1, "id": "call_b", "type": "function",
                                         "function": {"name": "g", "arguments": "{}"}}])),
        *encoder.feed({"id": "c", "choices": [{"index": 0, "delta": {},
                                               "finish_reason": "tool_calls"}]}),
        *encoder.feed({"id": "c", "choices": [], "usage": {"prompt_tokens": 3,
                                                           "completion_tokens": 4}}),
        *encoder.end(),
    ]
    seen = events(frames)
    assert [e["type"] for e in seen] == [
        "response.created", "response.in_progress",
        "response.output_item.added", "response.content_part.added",
        "response.reasoning_text.delta", "response.reasoning_text.done",
        "response.content_part.done", "response.output_item.done",
        "response.output_item.added", "response.content_part.added",
        "response.output_text.delta", "response.output_text.done",
        "response.content_part.done", "response.output_item.done",
        "response.output_item.added", "response.function_call_arguments.delta",
        "response.function_call_arguments.delta", "response.function_call_arguments.done",
        "response.output_item.done",
        "response.output_item.added", "response.function_call_arguments.delta",
        "response.function_call_arguments.done", "response.output_item.done",
        "response.completed",
    ]
    assert [e["sequence_number"] for e in seen] == list(range(len(seen)))
    final = seen[-1]["response"]
    assert [i["type"] for i in final["output"]] == ["reasoning", "message", "function_call",
                                                   "function_call"]
    assert final["output"][2]["arguments"] == "{\"x\":1}"
    assert final["output"][3]["call_id"] == "call_b"
    assert final["usage"]["output_tokens"] == 4 and final["status"] == "completed"
    assert encoder.final == final


def test_a_broken_stream_ends_with_error_and_response_failed() -> None:
    encoder = ResponsesEventEncoder("resp_1", {}, "auto", store=True)
    frames = [*encoder.feed(delta(content="Hal")),
              *encoder.error({"message": "upstream died", "code": "upstream_error"})]
    seen = events(frames)
    assert [e["type"] for e in seen][-2:] == ["error", "response.failed"]
    assert seen[-2]["message"] == "upstream died"
    failed = seen[-1]["response"]
    assert failed["status"] == "failed" and failed["error"]["code"] == "upstream_error"
    assert failed["output"][0]["status"] == "incomplete"


@given(st.lists(st.text(min_size=1, max_size=8), min_size=1, max_size=20))
def test_streamed_text_adds_up_to_the_final_output(pieces: list[str]) -> None:
    encoder = ResponsesEventEncoder("resp_1", {}, "auto", store=True)
    frames = [frame for piece in pieces for frame in encoder.feed(delta(content=piece))]
    seen = events([*frames, *encoder.end()])
    streamed = "".join(e["delta"] for e in seen if e["type"] == "response.output_text.delta")
    assert streamed == "".join(pieces)
    assert seen[-1]["response"]["output"][0]["content"][0]["text"] == streamed


def test_what_only_a_responses_backend_can_serve_is_left_out_of_the_chat_form() -> None:
    body = {"model": "m", "tools": [{"type": "web_search"}, {"type": "function", "name": "f"}],
            "tool_choice": {"type": "web_search"}, "max_tool_calls": 2,
            "input": [{"type": "item_reference", "id": "msg_1"},
                      {"role": "user", "content": "Find it."}]}
    with pytest.raises(Untranslatable) as strict:
        parse_responses_request(body)
    assert strict.value.param == "max_tool_calls"  # the first thing only a backend can take
    lenient = parse_responses_request(body, strict=False)
    payload = to_chat_payload(lenient, [], strict=False)
    assert [t["function"]["name"] for t in payload["tools"]] == ["f"]
    assert "tool_choice" not in payload and "max_tool_calls" not in payload
    assert payload["messages"] == [{"role": "user", "content": "Find it."}]
    assert native_payload(lenient, [])["tools"] == body["tools"]
