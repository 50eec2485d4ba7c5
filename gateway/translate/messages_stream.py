"""OpenAI chat.completion.chunk payloads → Anthropic's named stream events (pure): the
front door's stream for Claude clients.

`AnthropicEventEncoder`: OpenAI chunks in, `event: <type>\\ndata: <json>\\n\\n` out, in
Anthropic's order (message_start, ping, content_block_start/delta/stop per block,
message_delta with the usage, message_stop), or an `error` event when the stream broke.
"""

from __future__ import annotations

from typing import Any

import orjson

from gateway.translate.messages_reply import anthropic_usage, message_id, stop_reason, tool_use_id

TEXT, THINKING, TOOL = "text", "thinking", "tool"


def event(kind: str, data: dict[str, Any]) -> bytes:
    return b"event: " + kind.encode() + b"\ndata: " + orjson.dumps({"type": kind, **data}) + b"\n\n"


class AnthropicEventEncoder:
    __slots__ = ("_finish", "_matched", "_message_id", "_model", "_next_index", "_open",
                 "_started", "_tools", "_usage")

    def __init__(self, model: str, message_id: str) -> None:
        self._model = model
        self._message_id = message_id
        self._started = False
        self._open: tuple[str, int] | None = None  # (kind, block index) of the open block
        self._next_index = 0
        self._tools: dict[int, int] = {}  # OpenAI tool-call index → block index
        self._finish: str | None = None
        self._matched: Any = None
        self._usage: Any = None

    def feed(self, chunk: dict[str, Any]) -> list[bytes]:
        if not self._started and chunk.get("id"):
            self._message_id = message_id(chunk["id"])  # the same id a plain reply gets
        out = self._start()
        if chunk.get("usage"):
            self._usage = chunk["usage"]
        for choice in chunk.get("choices") or ():
            delta = choice.get("delta") or {}
            reasoning = delta.get("reasoning_content") or delta.get("reasoning")
            if isinstance(reasoning, str) and reasoning:
                out += self._block(THINKING, {"type": "thinking", "thinking": "", "signature": ""})
                out.append(self._delta({"type": "thinking_delta", "thinking": reasoning}))
            for block in delta.get("thinking_blocks") or ():
                out += self._thinking_block(block)
            text = delta.get("content")
            if isinstance(text, str) and text:
                out += self._block(TEXT, {"type": "text", "text": ""})
                out.append(self._delta({"type": "text_delta", "text": text}))
            for call in delta.get("tool_calls") or ():
                out += self._tool_fragment(call)
            if choice.get("finish_reason"):
                self._finish = choice["finish_reason"]
                self._matched = choice.get("stop_reason")
                out += self._close()
        return out

    def end(self) -> list[bytes]:
        out = self._start() + self._close()
        reason, sequence = stop_reason(self._finish, self._matched)
        out.append(event("message_delta", {
            "delta": {"stop_reason": reason, "stop_sequence": sequence},
            "usage": anthropic_usage(self._usage),
        }))
        out.append(event("message_stop", {}))
        return out

    def error(self, error: dict[str, Any]) -> list[bytes]:
        """The stream broke after its headers: Anthropic clients learn of it from an `error`
        event (`overloaded_error` when no backend had room, as Anthropic says it)."""
        kind = "overloaded_error" if error.get("code") == "overloaded" else "api_error"
        return [event("error", {"error": {"type": kind, "message": error.get("message") or ""}})]

    def _start(self) -> list[bytes]:
        if self._started:
            return []
        self._started = True
        message = {"id": self._message_id, "type": "message", "role": "assistant",
                   "model": self._model, "content": [], "stop_reason": None,
                   "stop_sequence": None, "usage": {"input_tokens": 0, "output_tokens": 0}}
        return [event("message_start", {"message": message}), event("ping", {})]

    def _block(self, kind: str, content_block: dict[str, Any]) -> list[bytes]:
        if self._open is not None and self._open[0] == kind:
            return []
        out = self._close()
        index = self._next_index
        self._next_index += 1
        self._open = (kind, index)
        out.append(event("content_block_start", {"index": index, "content_block": content_block}))
        return out

    def _tool_fragment(self, call: dict[str, Any]) -> list[bytes]:
        out: list[bytes] = []
        position = call.get("index", 0)
        function = call.get("function") or {}
        index = self._tools.get(position)
        if index is None:
            out += self._close()
            index = self._tools[position] = self._next_index
            self._next_index += 1
            self._open = (TOOL, index)
            block = {"type": "tool_use", "id": tool_use_id(call.get("id") or f"gw_{index}"),
                     "name": function.get("name") or "", "input": {}}
            out.append(event("content_block_start", {"index": index, "content_block": block}))
        arguments = function.get("arguments")
        if isinstance(arguments, str) and arguments:
            out.append(event("content_block_delta", {
                "index": index, "delta": {"type": "input_json_delta", "partial_json": arguments}}))
        return out

    def _thinking_block(self, block: Any) -> list[bytes]:
        """An Anthropic backend's thinking signature (closing its thinking block's deltas),
        or a redacted thinking block, which comes whole."""
        kind = block.get("type") if isinstance(block, dict) else None
        if kind == "thinking" and isinstance(block.get("signature"), str):
            out = self._block(THINKING, {"type": "thinking", "thinking": "", "signature": ""})
            out.append(self._delta({"type": "signature_delta", "signature": block["signature"]}))
            return out
        if kind == "redacted_thinking":
            out = self._close()
            index = self._next_index
            self._next_index += 1
            out.append(event("content_block_start", {"index": index, "content_block": {
                "type": "redacted_thinking", "data": block.get("data") or ""}}))
            out.append(event("content_block_stop", {"index": index}))
            return out
        return []

    def _delta(self, delta: dict[str, Any]) -> bytes:
        assert self._open is not None
        return event("content_block_delta", {"index": self._open[1], "delta": delta})

    def _close(self) -> list[bytes]:
        if self._open is None:
            return []
        index = self._open[1]
        self._open = None
        return [event("content_block_stop", {"index": index})]
