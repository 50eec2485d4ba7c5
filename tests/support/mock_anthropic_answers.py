"""The mock Anthropic API's request validation and its deterministic answers.

Validation messages follow the real API's ("max_tokens: Field required", "`tool_use` ids were
found without `tool_result` blocks immediately after ..."). Answers: a tool call when tools are
offered and the last user turn is not a tool result, otherwise a short text that quotes the
tool result or the user; stop sequences, max_tokens and prompt-cache reads are honoured.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import orjson

TOP_LEVEL = frozenset({"model", "max_tokens", "messages", "system", "stop_sequences",
                       "temperature", "top_p", "top_k", "stream", "tools", "tool_choice",
                       "metadata", "thinking", "service_tier"})
BLOCKS = {"user": {"text", "image", "document", "tool_result"},
          "assistant": {"text", "tool_use", "thinking", "redacted_thinking"}}
TOOL_KEYS = frozenset({"name", "description", "input_schema", "cache_control", "strict", "type"})
IMAGE_TYPES = frozenset({"image/jpeg", "image/png", "image/gif", "image/webp"})
CACHE_READ_TOKENS = 100
Problem = tuple[str, str]


def validate_body(body: Any) -> Problem | None:
    if not isinstance(body, dict):
        return "invalid_request_error", "body: Input should be a valid dictionary"
    for key in body:
        if key not in TOP_LEVEL:
            return "invalid_request_error", f"{key}: Extra inputs are not permitted"
    for key in ("model", "max_tokens", "messages"):
        if key not in body:
            return "invalid_request_error", f"{key}: Field required"
    if body["model"] == "claude-missing":
        return "not_found_error", f"model: {body['model']}"
    if not isinstance(body["max_tokens"], int) or body["max_tokens"] < 1:
        return "invalid_request_error", "max_tokens: Input should be greater than or equal to 1"
    temperature = body.get("temperature")
    if temperature is not None and not 0 <= temperature <= 1:
        return "invalid_request_error", "temperature: Input should be less than or equal to 1"
    if body.get("thinking") and temperature is not None:
        return "invalid_request_error", "temperature may only be set to 1 when thinking is enabled"
    for stop in body.get("stop_sequences") or ():
        if not stop.strip():
            return "invalid_request_error", "stop_sequences: each stop sequence must contain " \
                "non-whitespace"
    if set(body.get("metadata") or {}) - {"user_id"}:
        return "invalid_request_error", "metadata: Extra inputs are not permitted"
    system = body.get("system")
    if system is not None and not isinstance(system, str) and not all(
        b.get("type") == "text" and b.get("text") for b in system
    ):
        return "invalid_request_error", "system: text content blocks must be non-empty"
    return (_validate_tools(body) or _validate_messages(body["messages"])
            or _validate_thinking(body))


def _validate_thinking(body: dict[str, Any]) -> Problem | None:
    """As the real API: with thinking on, no forced tool use, and an assistant turn that used
    a tool starts with the thinking block (signature intact) that the model wrote for it."""
    thinking = body.get("thinking")
    if not isinstance(thinking, dict) or thinking.get("type") not in ("enabled", "adaptive"):
        return None
    if (body.get("tool_choice") or {}).get("type") in ("any", "tool"):
        return "invalid_request_error", "Thinking may not be enabled when tool_choice " \
            "forces tool use."
    for i, message in enumerate(body["messages"]):
        content = message.get("content")
        if message.get("role") != "assistant" or not isinstance(content, list) or not any(
            b.get("type") == "tool_use" for b in content
        ):
            continue
        first = content[0]
        if first.get("type") not in ("thinking", "redacted_thinking"):
            return "invalid_request_error", f"messages.{i}.content.0.type: Expected " \
                f"`thinking` or `redacted_thinking`, but found `{first.get('type')}`. When " \
                "`thinking` is enabled, a final `assistant` message must start with a " \
                "thinking block."
        if first.get("type") == "thinking" and not str(first.get("signature")).startswith(
            "sig_msg_mock"
        ):
            return "invalid_request_error", f"messages.{i}.content.0: Invalid `signature` " \
                "in `thinking` block"
    return None


def _validate_tools(body: dict[str, Any]) -> Problem | None:
    names = []
    for i, tool in enumerate(body.get("tools") or ()):
        if set(tool) - TOOL_KEYS:
            return "invalid_request_error", f"tools.{i}: Extra inputs are not permitted"
        if not re.fullmatch(r"[a-zA-Z0-9_-]{1,64}", str(tool.get("name"))):
            return "invalid_request_error", f"tools.{i}.name: String should match pattern"
        if (tool.get("input_schema") or {}).get("type") != "object":
            return "invalid_request_error", f"tools.{i}.input_schema.type: Input should be " \
                "'object'"
        names.append(tool["name"])
    choice = body.get("tool_choice")
    if choice is not None:
        if choice.get("type") not in ("auto", "any", "tool", "none"):
            return "invalid_request_error", "tool_choice.type: Input tag does not match"
        if choice["type"] == "tool" and choice.get("name") not in names:
            return "invalid_request_error", f"tool_choice.name: tool {choice.get('name')} " \
                "not found in tools"
        if choice["type"] == "none" and "disable_parallel_tool_use" in choice:
            return "invalid_request_error", "tool_choice.none.disable_parallel_tool_use: " \
                "Extra inputs are not permitted"
    return None


def _validate_messages(messages: Any) -> Problem | None:
    if not isinstance(messages, list) or not messages:
        return "invalid_request_error", "messages: at least one message is required"
    pending: list[str] = []  # tool_use ids the next turn must answer
    for i, message in enumerate(messages):
        role, content = message.get("role"), message.get("content")
        if role not in BLOCKS:
            return "invalid_request_error", f"messages.{i}.role: Input should be 'user' or " \
                "'assistant'"
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        answered = [b.get("tool_use_id") for b in blocks if b.get("type") == "tool_result"]
        if pending and sorted(answered) != sorted(pending):
            return "invalid_request_error", f"messages.{i}: `tool_use` ids were found without " \
                f"`tool_result` blocks immediately after: {', '.join(pending)}. Each " \
                "`tool_use` block must have a corresponding `tool_result` block in the next " \
                "message."
        for j, tool_use_id in enumerate(answered):
            if tool_use_id not in pending:
                return "invalid_request_error", f"messages.{i}.content.{j}: unexpected " \
                    f"`tool_use_id` found in `tool_result` blocks: {tool_use_id}. Each " \
                    "`tool_result` block must have a corresponding `tool_use` block in the " \
                    "previous message."
        for block in blocks:
            kind = block.get("type")
            if kind not in BLOCKS[role]:
                return "invalid_request_error", f"messages.{i}: block type {kind} not allowed"
            if kind == "text" and not block.get("text"):
                return "invalid_request_error", "messages: text content blocks must be non-empty"
            if kind == "text" and "TRIGGER_400" in block["text"]:
                return "invalid_request_error", "prompt is too long: 210000 tokens > 200000 " \
                    "maximum"
            source = block.get("source") or {}
            if kind == "image" and source.get("type") == "base64" and \
                    source.get("media_type") not in IMAGE_TYPES:
                return "invalid_request_error", f"messages.{i}: unsupported image type"
        pending = [b["id"] for b in blocks if b.get("type") == "tool_use"]
    if pending:
        return "invalid_request_error", "messages: the final assistant turn has unanswered " \
            "`tool_use` blocks"
    return None


@dataclass
class Answer:
    id: str
    model: str
    blocks: list[dict[str, Any]]
    stop_reason: str
    stop_sequence: str | None
    input_tokens: int
    cache_read: int
    cache_write: int = 0

    @property
    def output_tokens(self) -> int:
        return sum(len(self.text_pieces(b["text"])) if b["type"] == "text"
                   else len(self.text_pieces(b["thinking"])) if b["type"] == "thinking"
                   else len(self.json_pieces(b["input"])) for b in self.blocks)

    def usage(self) -> dict[str, int]:
        return {"input_tokens": self.input_tokens, "cache_creation_input_tokens": self.cache_write,
                "cache_read_input_tokens": self.cache_read, "output_tokens": self.output_tokens}

    def message(self) -> dict[str, Any]:
        return {"id": self.id, "type": "message", "role": "assistant", "model": self.model,
                "content": self.blocks, "stop_reason": self.stop_reason,
                "stop_sequence": self.stop_sequence, "usage": self.usage()}

    @staticmethod
    def text_pieces(text: str) -> list[str]:
        return re.findall(r"\s*\S+", text) or [text]

    @staticmethod
    def json_pieces(value: Any) -> list[str]:
        text = orjson.dumps(value).decode()
        return [text[i:i + 7] for i in range(0, len(text), 7)]


def plan_answer(body: dict[str, Any], message_id: str) -> Answer:
    tools = body.get("tools") or []
    choice = body.get("tool_choice") or {"type": "auto"}
    last = body["messages"][-1]
    content = last["content"]
    blocks_in = [{"type": "text", "text": content}] if isinstance(content, str) else content
    results = [b for b in blocks_in if b.get("type") == "tool_result"]
    user_text = " ".join(b.get("text", "") for b in blocks_in if b.get("type") == "text")
    system = body.get("system")
    cached = isinstance(system, list) and any("cache_control" in b for b in system)
    words = len(orjson.dumps(body["messages"]).split()) + len(str(system or "").split())
    answer = Answer(message_id, body["model"], [], "end_turn", None, words,
                    CACHE_READ_TOKENS if cached else 0)
    if (body.get("thinking") or {}).get("type") in ("enabled", "adaptive"):
        answer.blocks.append({"type": "thinking", "thinking": "Weighing the question first.",
                              "signature": f"sig_{message_id}"})
    if tools and choice["type"] != "none" and not results:
        name = choice["name"] if choice["type"] == "tool" else tools[0]["name"]
        schema = next(t for t in tools if t["name"] == name)["input_schema"]
        if choice["type"] == "auto":
            answer.blocks.append({"type": "text", "text": "Let me check."})
        answer.blocks.append({"type": "tool_use", "id": f"toolu_{message_id}", "name": name,
                              "input": sample(schema)})
        answer.stop_reason = "tool_use"
        return answer
    if results:
        said = results[0].get("content")
        said = said if isinstance(said, str) else " ".join(b["text"] for b in said)
        text = f"The tool said: {said}"
    else:
        text = "Hello from mock Claude. You said: " + " ".join(user_text.split()[:6])
    for stop in body.get("stop_sequences") or ():
        if stop in text:
            text, answer.stop_reason, answer.stop_sequence = text.split(stop)[0], \
                "stop_sequence", stop
            break
    pieces = Answer.text_pieces(text)
    if len(pieces) > body["max_tokens"]:
        text, answer.stop_reason = "".join(pieces[: body["max_tokens"]]), "max_tokens"
    answer.blocks.append({"type": "text", "text": text})
    return answer


def sample(schema: Any) -> Any:
    """A value that satisfies the simple schemas tests use."""
    kind = schema.get("type") if isinstance(schema, dict) else None
    if isinstance(schema, dict) and schema.get("enum"):
        return schema["enum"][0]
    if kind == "object":
        return {k: sample(v) for k, v in (schema.get("properties") or {}).items()}
    if kind == "array":
        return [sample(schema.get("items") or {"type": "string"})]
    return {"integer": 3, "number": 1.5, "boolean": True}.get(str(kind), "Paris")
