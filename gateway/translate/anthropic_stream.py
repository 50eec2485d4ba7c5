"""Anthropic stream events → OpenAI chat.completion.chunk payloads (pure, one object per stream).

message_start → the role chunk; content_block_start/delta/stop → content, `tool_calls`
fragments (id and name first, then `arguments` pieces) or `reasoning_content`; message_delta
→ the finish chunk; message_stop → the usage chunk (`choices: []`); ping → nothing; error →
an OpenAI error payload, or a failover if nothing has been committed to the client yet.

The stream is committed at `message_start`, as an OpenAI-compatible stream is at its first
(role) chunk: the gateway then sets up the client's response while the model thinks, instead
of after its first token (waiting for content cost 0.4 ms of TTFT, benchmarks/anthropic_path.py).
An `error` before or together with `message_start` still fails over.
"""

from __future__ import annotations

from typing import Any

import orjson

from gateway.errors import UpstreamFailed
from gateway.translate.anthropic_reply import answer_text, finish_reason, openai_usage
from gateway.translate.anthropic_request import JsonMode
from gateway.upstream import DispatchError

TEXT, TOOL, ANSWER, THINKING, OTHER = "text", "tool", "answer", "thinking", "other"


class AnthropicStreamTranslator:
    __slots__ = ("_answer", "_backend", "_blocks", "_created", "_finished", "_id", "_json_mode",
                 "_model", "_ready", "_stop_reason", "_tools", "_usage")

    def __init__(self, json_mode: JsonMode | None, created: int, backend: str) -> None:
        self._json_mode = json_mode
        self._created = created
        self._backend = backend
        self._id = "chatcmpl-"
        self._model = ""
        self._usage: dict[str, Any] = {}
        self._blocks: dict[int, tuple[str, int]] = {}  # Anthropic index → (kind, tool index)
        self._tools = 0
        self._answer: list[str] = []  # a wrapped answer is unwrapped once complete
        self._stop_reason: str | None = None
        self._ready = False
        self._finished = False

    @property
    def ready(self) -> bool:
        return self._ready

    def feed(self, data: bytes) -> list[bytes]:
        event = orjson.loads(data)
        kind = event.get("type") if isinstance(event, dict) else None
        if kind == "content_block_delta":
            return self._delta(event["index"], event.get("delta") or {})
        if kind == "content_block_start":
            return self._start(event["index"], event.get("content_block") or {})
        if kind == "content_block_stop":
            return self._stop(event["index"])
        if kind == "message_start":
            message = event.get("message") or {}
            self._id = f"chatcmpl-{message.get('id') or ''}"
            self._model = message.get("model") or ""
            self._merge_usage(message.get("usage"))
            chunk = self._chunk({"role": "assistant", "content": ""})
            self._ready = True
            return [chunk]
        if kind == "message_delta":
            self._ready = True
            delta = event.get("delta") or {}
            self._stop_reason = delta.get("stop_reason")
            self._merge_usage(event.get("usage"))
            finish = finish_reason(self._stop_reason, self._tools)
            return [self._chunk({}, finish, delta.get("stop_sequence"))]
        if kind == "message_stop":
            self._ready = self._finished = True
            return [self._payload([], usage=openai_usage(self._usage))]
        if kind == "error":
            return self._error(event.get("error") or {})
        return []  # ping, and event types newer than this gateway

    def finish(self) -> list[bytes]:
        if not self._finished:
            raise DispatchError(
                UpstreamFailed(f"backend {self._backend} ended the stream before message_stop"),
                retryable=not self._ready,
            )
        return []

    def _start(self, index: int, block: dict[str, Any]) -> list[bytes]:
        kind = block.get("type")
        if kind == "text":
            self._blocks[index] = (TEXT, -1)
            return self._content(block.get("text") or "")
        if kind == "tool_use":
            mode = self._json_mode
            if mode is not None and block.get("name") == mode.tool_name:
                self._blocks[index] = (ANSWER, -1)
                return []
            tool = self._tools
            self._tools += 1
            self._blocks[index] = (TOOL, tool)
            self._ready = True
            call = {"index": tool, "id": block.get("id"), "type": "function",
                    "function": {"name": block.get("name"), "arguments": ""}}
            return [self._chunk({"tool_calls": [call]})]
        if kind == "thinking":
            self._blocks[index] = (THINKING, -1)
            return self._reasoning(block.get("thinking") or "")
        if kind == "redacted_thinking":
            self._blocks[index] = (OTHER, -1)
            self._ready = True
            return [self._chunk({"thinking_blocks": [
                {"type": "redacted_thinking", "data": block.get("data") or ""}]})]
        self._blocks[index] = (OTHER, -1)
        return []

    def _delta(self, index: int, delta: dict[str, Any]) -> list[bytes]:
        kind, tool = self._blocks.get(index, (OTHER, -1))
        dtype = delta.get("type")
        if dtype == "text_delta":
            return self._content(delta.get("text") or "")
        if dtype == "input_json_delta":
            piece = delta.get("partial_json") or ""
            if not piece:
                return []
            if kind == TOOL:
                call = {"index": tool, "function": {"arguments": piece}}
                return [self._chunk({"tool_calls": [call]})]
            if kind == ANSWER:
                assert self._json_mode is not None
                if self._json_mode.wrapped:
                    self._answer.append(piece)
                    return []
                return self._content(piece)
            return []
        if dtype == "thinking_delta":
            return self._reasoning(delta.get("thinking") or "")
        if dtype == "signature_delta" and delta.get("signature"):
            # Claude clients must hand the signed block back; others ignore the field.
            self._ready = True
            return [self._chunk({"thinking_blocks": [
                {"type": "thinking", "thinking": "", "signature": delta["signature"]}]})]
        return []  # citations_delta: nothing OpenAI-shaped to say

    def _stop(self, index: int) -> list[bytes]:
        kind, _ = self._blocks.get(index, (OTHER, -1))
        if kind != ANSWER or not self._answer:
            return []
        assert self._json_mode is not None
        raw, self._answer = "".join(self._answer), []
        try:
            return self._content(answer_text(orjson.loads(raw), self._json_mode))
        except orjson.JSONDecodeError:
            return self._content(raw)

    def _content(self, text: str) -> list[bytes]:
        if not text:
            return []
        self._ready = True
        return [self._chunk({"content": text})]

    def _reasoning(self, text: str) -> list[bytes]:
        if not text:
            return []
        self._ready = True
        return [self._chunk({"reasoning_content": text})]

    def _error(self, error: dict[str, Any]) -> list[bytes]:
        kind = error.get("type") or "api_error"
        message = f"backend {self._backend} failed mid-stream ({kind}): {error.get('message')}"
        if not self._ready:
            # Nothing is committed to the client yet: another backend may serve.
            raise DispatchError(UpstreamFailed(message, code=kind), retryable=True)
        code = "overloaded" if kind == "overloaded_error" else kind
        body = {"message": message, "type": "upstream_error", "param": None, "code": code}
        return [orjson.dumps({"error": body})]

    def _merge_usage(self, usage: Any) -> None:
        if isinstance(usage, dict):
            # message_delta counts are cumulative totals: they replace, not add.
            self._usage.update({k: v for k, v in usage.items() if v is not None})

    def _chunk(self, delta: dict[str, Any], finish: str | None = None,
               matched: str | None = None) -> bytes:
        choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
        if matched is not None:
            choice["stop_reason"] = matched  # vLLM's field for the stop string that matched
        return self._payload([choice])

    def _payload(self, choices: list[dict[str, Any]], **extra: Any) -> bytes:
        return orjson.dumps({"id": self._id, "object": "chat.completion.chunk",
                             "created": self._created, "model": self._model,
                             "choices": choices, **extra})
