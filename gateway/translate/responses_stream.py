"""Front door: OpenAI chat chunks → the Responses API's semantic stream events.

`ResponsesEventEncoder` is pure: chunks in, `event: <type>\\ndata: <json>\\n\\n` out, every
event numbered by `sequence_number`, in the documented order: `response.created`,
`response.in_progress`, then per output item `response.output_item.added`, (for text and
reasoning) `response.content_part.added`, its deltas, `...done` events, the part and item
`done`, and at the end `response.completed` (or `response.incomplete`) with the whole
response. An upstream failure after the headers ends the stream with `error` and
`response.failed`. One item is open at a time: a new kind of output closes the previous.
The response body that feeds it from the relay is gateway/api/translated_stream.py.
"""

from __future__ import annotations

import time
from typing import Any

import orjson

from gateway.translate.responses_reply import (
    INCOMPLETE,
    function_call_item,
    message_item,
    new_id,
    reasoning_item,
    response_object,
    response_usage,
)


class ResponsesEventEncoder:
    __slots__ = ("_created_at", "_echo", "_finish", "_items", "_model", "_open", "_seq",
                 "_started", "_store", "_tools", "_usage", "final", "response_id")

    def __init__(self, response_id: str, echo: dict[str, Any], model: str, *,
                 store: bool) -> None:
        self.response_id = response_id
        self._echo = echo
        self._model = model
        self._store = store
        self._created_at = int(time.time())
        self._seq = 0
        self._started = False
        self._items: list[dict[str, Any]] = []  # output items in output_index order
        self._open: int | None = None  # output_index of the open item
        self._tools: dict[int, int] = {}  # chat tool-call index → output_index
        self._finish: str | None = None
        self._usage: Any = None
        self.final: dict[str, Any] | None = None  # the whole response, once it ended

    def feed(self, chunk: dict[str, Any]) -> list[bytes]:
        out = self._start()
        if chunk.get("usage"):
            self._usage = chunk["usage"]
        for choice in chunk.get("choices") or ():
            delta = choice.get("delta") or {}
            reasoning = delta.get("reasoning_content") or delta.get("reasoning")
            if isinstance(reasoning, str) and reasoning:
                out += self._text("reasoning", reasoning)
            text = delta.get("content")
            if isinstance(text, str) and text:
                out += self._text("message", text)
            for call in delta.get("tool_calls") or ():
                out += self._tool_fragment(call)
            if choice.get("finish_reason"):
                self._finish = choice["finish_reason"]
        return out

    def end(self) -> list[bytes]:
        out = self._start() + self._close()
        reason = INCOMPLETE.get(self._finish or "")
        self.final = self._response("incomplete" if reason else "completed",
                                    usage=response_usage(self._usage), incomplete_reason=reason)
        kind = "response.incomplete" if reason else "response.completed"
        out.append(self._event(kind, {"response": self.final}))
        return out

    def error(self, error: dict[str, Any]) -> list[bytes]:
        """The stream broke after its headers: an `error` event, then `response.failed`."""
        out = self._start()
        code = error.get("code") or "server_error"
        message = error.get("message") or "the upstream stream failed"
        out.append(self._event("error", {"code": code, "message": message,
                                         "param": error.get("param")}))
        for item in self._items:
            if item.get("status") == "in_progress":
                item["status"] = "incomplete"
        self.final = self._response("failed", usage=response_usage(self._usage),
                                    error={"code": code, "message": message})
        out.append(self._event("response.failed", {"response": self.final}))
        return out

    def _event(self, kind: str, data: dict[str, Any]) -> bytes:
        body = orjson.dumps({"type": kind, "sequence_number": self._seq, **data})
        self._seq += 1
        return b"event: " + kind.encode() + b"\ndata: " + body + b"\n\n"

    def _response(self, status: str, **extra: Any) -> dict[str, Any]:
        return response_object(self.response_id, self._echo, self._model,
                               created_at=self._created_at, status=status,
                               output=[dict(i) for i in self._items], store=self._store,
                               **extra)

    def _start(self) -> list[bytes]:
        if self._started:
            return []
        self._started = True
        snapshot = self._response("in_progress", usage=None)
        return [self._event("response.created", {"response": snapshot}),
                self._event("response.in_progress", {"response": snapshot})]

    def _add(self, item: dict[str, Any]) -> list[bytes]:
        out = self._close()
        index = len(self._items)
        self._items.append(item)
        self._open = index
        out.append(self._event("response.output_item.added",
                               {"output_index": index, "item": item}))
        return out

    def _text(self, kind: str, text: str) -> list[bytes]:
        out: list[bytes] = []
        if self._open is None or self._items[self._open]["type"] != kind:
            if kind == "message":
                item = message_item(new_id("msg"), "", "in_progress")
                item["content"] = []
                part = {"type": "output_text", "text": "", "annotations": [], "logprobs": []}
            else:
                item = reasoning_item(new_id("rs"), "")
                item["content"] = []
                item["status"] = "in_progress"
                part = {"type": "reasoning_text", "text": ""}
            out += self._add(item)
            item["content"].append(part)
            out.append(self._event("response.content_part.added", {
                "item_id": item["id"], "output_index": self._open, "content_index": 0,
                "part": dict(part)}))
        assert self._open is not None
        item = self._items[self._open]
        item["content"][0]["text"] += text
        delta: dict[str, Any] = {"item_id": item["id"], "output_index": self._open,
                                 "content_index": 0, "delta": text}
        if kind == "message":
            delta["logprobs"] = []
            out.append(self._event("response.output_text.delta", delta))
        else:
            out.append(self._event("response.reasoning_text.delta", delta))
        return out

    def _tool_fragment(self, call: dict[str, Any]) -> list[bytes]:
        out: list[bytes] = []
        position = call.get("index", 0)
        function = call.get("function") or {}
        index = self._tools.get(position)
        if index is None:
            item = function_call_item(new_id("fc"), call.get("id") or new_id("call"),
                                      function.get("name") or "", "", "in_progress")
            out += self._add(item)
            index = self._tools[position] = len(self._items) - 1
        item = self._items[index]
        arguments = function.get("arguments")
        if isinstance(arguments, str) and arguments:
            item["arguments"] += arguments
            out.append(self._event("response.function_call_arguments.delta", {
                "item_id": item["id"], "output_index": index, "delta": arguments}))
        return out

    def _close(self) -> list[bytes]:
        if self._open is None:
            return []
        index, self._open = self._open, None
        item = self._items[index]
        status = "incomplete" if self._finish in INCOMPLETE else "completed"
        out: list[bytes] = []
        if item["type"] == "function_call":
            out.append(self._event("response.function_call_arguments.done", {
                "item_id": item["id"], "output_index": index, "name": item["name"],
                "arguments": item["arguments"]}))
        else:
            part = item["content"][0]
            where = {"item_id": item["id"], "output_index": index, "content_index": 0}
            if item["type"] == "message":
                out.append(self._event("response.output_text.done",
                                       {**where, "text": part["text"], "logprobs": []}))
            else:
                out.append(self._event("response.reasoning_text.done",
                                       {**where, "text": part["text"]}))
            out.append(self._event("response.content_part.done", {**where, "part": part}))
        item["status"] = status
        out.append(self._event("response.output_item.done",
                               {"output_index": index, "item": item}))
        return out

