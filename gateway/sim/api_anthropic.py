"""A simulated Anthropic Messages API (`POST /v1/messages`), for the demo's commercial backend.

It speaks Anthropic's wire format (named SSE events in Anthropic's order, `tool_use` blocks
with `toolu_` ids, usage whose `input_tokens` excludes cache reads, errors as
`{"type": "error", "error": {...}}`) and answers through the same engine as the OpenAI
endpoints: the request is read into the sim's chat form, planned and generated, then rendered
as Anthropic replies.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from typing import Any

import orjson
from fastapi import APIRouter, Request, Response

from gateway.sim.answers import AnswerPlan, plan_chat
from gateway.sim.delivery import EngineStreamResponse, finish_or_disconnect, token_events
from gateway.sim.engine import EngineUsage, RequestHandle
from gateway.sim.errors import SimError
from gateway.sim.protocol import decode_json, parse_chat, resolve_max_tokens
from gateway.sim.runtime import SimRuntime, runtime_of

router = APIRouter()

STOP_REASONS = {"stop": "end_turn", "length": "max_tokens"}
ERROR_TYPES = {400: "invalid_request_error", 401: "authentication_error",
               403: "permission_error", 404: "not_found_error", 413: "request_too_large",
               429: "rate_limit_error", 500: "api_error", 529: "overloaded_error"}


class AnthropicError(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message

    def to_response(self) -> Response:
        body = {"type": "error", "error": {
            "type": ERROR_TYPES.get(self.status, "api_error"), "message": self.message},
            "request_id": f"req_sim{uuid.uuid4().hex[:20]}"}
        return Response(orjson.dumps(body), status_code=self.status,
                        media_type="application/json")


@router.post("/v1/messages")
async def messages(request: Request) -> Response:
    runtime = runtime_of(request)
    try:
        return await _messages(request, runtime)
    except AnthropicError as exc:
        return exc.to_response()
    except SimError as exc:  # the engine's own checks (context length) in Anthropic's shape
        return AnthropicError(exc.status, exc.message).to_response()


async def _messages(request: Request, runtime: SimRuntime) -> Response:
    body = decode_json(await request.body())
    if not request.headers.get("anthropic-version"):
        raise AnthropicError(400, "anthropic-version: header is required")
    model = body.get("model")
    if model != runtime.config.model_name:
        raise AnthropicError(404, f"model: {model}")
    max_tokens = body.get("max_tokens")
    if not isinstance(max_tokens, int) or isinstance(max_tokens, bool) or max_tokens < 1:
        raise AnthropicError(400, "max_tokens: Field required (a positive integer)")
    chat = parse_chat(as_chat(body))
    prompt_ids = runtime.tokenizer.apply_chat_template(chat.turns, tools_text=chat.tools_text)
    max_tokens = resolve_max_tokens(runtime.config, len(prompt_ids), max_tokens)
    plan = plan_chat(runtime.config, chat, prompt_ids, max_tokens)
    await runtime.api_delay()
    handle = runtime.engine.submit(
        prompt_ids, runtime.tokenizer.encode_pieces(plan.pieces), plan.finish_reason, max_tokens
    )
    message_id = f"msg_sim{uuid.uuid4().hex[:20]}"
    if body.get("stream"):
        return EngineStreamResponse(_stream(handle, plan, message_id, model), handle)
    if await finish_or_disconnect(handle, request.receive) is None:
        return Response(status_code=499)
    return Response(orjson.dumps(_message(plan, handle, message_id, model)),
                    media_type="application/json")


def as_chat(body: dict[str, Any]) -> dict[str, Any]:
    """The Messages request in the chat shape the sim plans answers from."""
    messages: list[dict[str, Any]] = []
    system = body.get("system")
    if system:
        messages.append({"role": "system", "content": _text(system)})
    turns = body.get("messages")
    if not isinstance(turns, list) or not turns:
        raise AnthropicError(400, "messages: at least one message is required")
    for i, turn in enumerate(turns):
        if not isinstance(turn, dict) or turn.get("role") not in ("user", "assistant"):
            raise AnthropicError(400, f"messages.{i}.role: must be 'user' or 'assistant'")
        messages.append({"role": turn["role"], "content": _text(turn.get("content"))})
    chat: dict[str, Any] = {"messages": messages, "max_tokens": body.get("max_tokens")}
    tools = body.get("tools") or []
    if tools:
        chat["tools"] = [{"type": "function", "function": {
            "name": t.get("name"), "description": t.get("description", ""),
            "parameters": t.get("input_schema") or {"type": "object"}}} for t in tools]
    choice = body.get("tool_choice") or {}
    if choice.get("type") == "tool":
        chat["tool_choice"] = {"type": "function", "function": {"name": choice.get("name")}}
    elif choice.get("type") == "any" and len(tools) == 1:
        chat["tool_choice"] = {"type": "function", "function": {"name": tools[0].get("name")}}
    return chat


def _text(content: Any) -> str:
    """Text of a string or a list of blocks; tool blocks count as their JSON (the prompt's
    size is what matters to the engine)."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        raise AnthropicError(400, "content: must be a string or a list of content blocks")
    parts = []
    for block in content:
        if not isinstance(block, dict):
            raise AnthropicError(400, "content: every block must be an object")
        if block.get("type") == "text":
            parts.append(str(block.get("text", "")))
        else:
            parts.append(orjson.dumps(block).decode())
    return "\n".join(parts)


def _usage(usage: EngineUsage) -> dict[str, Any]:
    return {"input_tokens": usage.prompt_tokens - usage.cached_tokens,
            "output_tokens": usage.completion_tokens,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": usage.cached_tokens}


def _stop_reason(plan: AnswerPlan, engine_reason: str) -> str:
    if plan.tool_call is not None and engine_reason == "stop":
        return "tool_use"
    return STOP_REASONS.get(engine_reason, "end_turn")


def _tool_id(plan: AnswerPlan) -> str:
    assert plan.tool_call is not None
    return "toolu_sim" + plan.tool_call.call_id.rsplit("-", 1)[-1][:20]


def _message(plan: AnswerPlan, handle: RequestHandle, message_id: str,
             model: str) -> dict[str, Any]:
    produced = handle.usage.completion_tokens
    if plan.tool_call is not None:
        arguments = plan.text(produced)
        try:
            tool_input = orjson.loads(arguments)
        except orjson.JSONDecodeError:
            tool_input = {}  # cut short by max_tokens: Anthropic sends what parsed, here none
        content = [{"type": "tool_use", "id": _tool_id(plan), "name": plan.tool_call.name,
                    "input": tool_input}]
    else:
        content = [{"type": "text", "text": plan.text(produced)}]
    return {"id": message_id, "type": "message", "role": "assistant", "model": model,
            "content": content, "stop_reason": _stop_reason(plan, handle.finish_reason or "stop"),
            "stop_sequence": None, "usage": _usage(handle.usage)}


def _event(kind: str, payload: dict[str, Any]) -> bytes:
    return b"event: " + kind.encode() + b"\ndata: " + orjson.dumps(
        {"type": kind, **payload}) + b"\n\n"


async def _stream(handle: RequestHandle, plan: AnswerPlan, message_id: str,
                  model: str) -> AsyncIterator[bytes]:
    start = {"id": message_id, "type": "message", "role": "assistant", "model": model,
             "content": [], "stop_reason": None, "stop_sequence": None,
             "usage": {**_usage(handle.usage), "output_tokens": 1}}
    yield _event("message_start", {"message": start})
    if plan.tool_call is not None:
        block: dict[str, Any] = {"type": "tool_use", "id": _tool_id(plan),
                                 "name": plan.tool_call.name, "input": {}}
    else:
        block = {"type": "text", "text": ""}
    yield _event("content_block_start", {"index": 0, "content_block": block})
    yield _event("ping", {})
    reason = None
    async for event in token_events(handle, None):
        reason = event.finish_reason
        if plan.tool_call is not None:
            if event.index == 0:
                continue  # the call's header token: its name is in content_block_start
            delta = {"type": "input_json_delta", "partial_json": plan.pieces[event.index]}
        else:
            delta = {"type": "text_delta", "text": plan.pieces[event.index]}
        yield _event("content_block_delta", {"index": 0, "delta": delta})
    if handle.finish_reason == "abort":
        return  # engine shut down: the stream ends without message_stop, as a dropped one
    yield _event("content_block_stop", {"index": 0})
    yield _event("message_delta", {
        "delta": {"stop_reason": _stop_reason(plan, reason or "stop"), "stop_sequence": None},
        "usage": {"output_tokens": handle.usage.completion_tokens}})
    yield _event("message_stop", {})
