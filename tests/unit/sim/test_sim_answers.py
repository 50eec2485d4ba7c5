"""What the sim answers: deterministic text, max_tokens caps, tool calls and JSON that conform
to the caller's schema."""

from __future__ import annotations

import json
from typing import Any

import pytest

from gateway.sim.answers import plan_chat, plan_text
from gateway.sim.config import SimConfig
from gateway.sim.placeholders import placeholder
from gateway.sim.protocol import ChatRequest, parse_chat

CONFIG = SimConfig(output_tokens_min=10, output_tokens_max=20)
PROMPT = [300, 301, 302]


def chat(**fields: Any) -> ChatRequest:
    return parse_chat({"messages": [{"role": "user", "content": "hi"}], **fields})


def test_text_is_deterministic_per_prompt_and_seed() -> None:
    options = chat().options
    first = plan_text(CONFIG, options, PROMPT, 100)
    assert first == plan_text(CONFIG, options, PROMPT, 100)
    assert first != plan_text(CONFIG, options, [*PROMPT, 303], 100)
    assert first != plan_text(CONFIG, chat(seed=7).options, PROMPT, 100)
    assert first.finish_reason == "stop" and 10 <= len(first.pieces) <= 20
    assert first.text(len(first.pieces)).endswith(".")


def test_max_tokens_cuts_the_answer_with_length() -> None:
    plan = plan_text(CONFIG, chat().options, PROMPT, 3)
    assert len(plan.pieces) == 3 and plan.finish_reason == "length"


def test_ignore_eos_generates_exactly_max_tokens() -> None:
    plan = plan_text(CONFIG, chat(ignore_eos=True).options, PROMPT, 200)
    assert len(plan.pieces) == 200 and plan.finish_reason == "length"


WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "parameters": {
            "type": "object",
            "properties": {
                "city": {"type": "string"},
                "days": {"type": "integer", "minimum": 3},
                "unit": {"enum": ["celsius", "fahrenheit"]},
                "hourly": {"type": "boolean"},
            },
            "required": ["city", "days", "unit"],
        },
    },
}


@pytest.mark.parametrize(
    "tool_choice", ["required", {"type": "function", "function": {"name": "get_weather"}}]
)
def test_forced_tool_call_has_schema_conforming_arguments(tool_choice: Any) -> None:
    other = {"type": "function", "function": {"name": "other", "parameters": {}}}
    tools = [WEATHER] if tool_choice == "required" else [other, WEATHER]
    plan = plan_chat(CONFIG, chat(tools=tools, tool_choice=tool_choice), PROMPT, 100)
    assert plan.tool_call is not None and plan.tool_call.name == "get_weather"
    assert plan.tool_call.call_id.startswith("chatcmpl-tool-")
    assert plan.api_finish_reason == "tool_calls"
    arguments = json.loads(plan.text(len(plan.pieces)))
    assert arguments == {"city": "example_city", "days": 3, "unit": "celsius"}


def test_auto_tool_choice_answers_in_text() -> None:
    plan = plan_chat(CONFIG, chat(tools=[WEATHER], tool_choice="auto"), PROMPT, 100)
    assert plan.tool_call is None and plan.api_finish_reason == "stop"


def test_json_schema_answer_is_a_conforming_document() -> None:
    schema = {
        "type": "object",
        "properties": {
            "title": {"type": "string", "minLength": 12},
            "tags": {"type": "array", "items": {"type": "string"}, "minItems": 2},
            "when": {"type": "string", "format": "date"},
            "owner": {"$ref": "#/$defs/person"},
            "score": {"anyOf": [{"type": "null"}, {"type": "number", "maximum": 0.5}]},
            "optional": {"type": "string"},
        },
        "required": ["title", "tags", "when", "owner", "score"],
        "$defs": {
            "person": {
                "type": "object",
                "properties": {"id": {"type": "integer"}},
                "required": ["id"],
            }
        },
    }
    response_format = {"type": "json_schema", "json_schema": {"name": "doc", "schema": schema}}
    plan = plan_chat(CONFIG, chat(response_format=response_format), PROMPT, 500)
    document = json.loads(plan.text(len(plan.pieces)))
    assert set(document) == {"title", "tags", "when", "owner", "score"}
    assert isinstance(document["title"], str) and len(document["title"]) >= 12
    assert len(document["tags"]) == 2 and all(isinstance(t, str) for t in document["tags"])
    assert document["when"] == "2024-01-01"
    assert document["owner"] == {"id": 1}
    assert document["score"] == 0.5


def test_json_object_answer_is_valid_json() -> None:
    plan = plan_chat(CONFIG, chat(response_format={"type": "json_object"}), PROMPT, 500)
    assert isinstance(json.loads(plan.text(len(plan.pieces))), dict)


def test_placeholder_stops_on_recursive_schemas() -> None:
    schema = {
        "$defs": {
            "node": {
                "type": "object",
                "properties": {"next": {"$ref": "#/$defs/node"}},
                "required": ["next"],
            }
        },
        "$ref": "#/$defs/node",
    }
    value = placeholder(schema)
    depth = 0
    while isinstance(value, dict):
        value, depth = value["next"], depth + 1
    assert value is None and depth < 10
