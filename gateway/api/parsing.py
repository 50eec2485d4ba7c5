"""Request JSON → RouteRequest: validate only what routing needs; the rest travels untouched."""

from __future__ import annotations

import asyncio
import secrets
from typing import Any

import orjson
from starlette.requests import Request

from gateway.api.body_gate import BodyGate, BodyHold
from gateway.errors import InvalidRequest, PayloadTooLarge
from gateway.types import Endpoint, RouteRequest

# orjson reads JSON nested up to 1,024 levels but writes at most 254: a body between the two
# would be taken and then fail (a 500) where the gateway writes it on to a backend.
MAX_WRITABLE_DEPTH = 254

REQUIRED_INPUT = {
    Endpoint.CHAT: "messages",
    Endpoint.COMPLETIONS: "prompt",
    Endpoint.EMBEDDINGS: "input",
}


def new_request_id() -> str:
    return "req_" + secrets.token_hex(12)


async def read_body(request: Request, limit: int, timeout_s: float, gate: BodyGate) -> bytes:
    """The body, refused with a 413 past `limit` bytes (before reading any of it when
    Content-Length says so), with a 408 when it has not all arrived within `timeout_s` (the
    server itself times out only idle connections, so a client trickling its body would
    otherwise hold a connection and its buffered bytes for ever), and with a 503 when the
    bodies held at once would pass the gate's cap. The bytes stay held until the response
    is over (body_gate.releasing_holds, around every inference request)."""
    hold = gate.hold()
    try:
        async with asyncio.timeout(timeout_s):
            return await _read_body(request, limit, hold)
    except TimeoutError:
        hold.release()
        # The connection closes with the answer: what is left of the body is still on its
        # way, and would otherwise be read as the start of the next request.
        raise InvalidRequest(f"the request body did not arrive within {timeout_s:g} s",
                             status=408, code="request_timeout",
                             headers={"connection": "close"}) from None
    except BaseException:
        hold.release()
        raise


async def _read_body(request: Request, limit: int, hold: BodyHold) -> bytes:
    length = request.headers.get("content-length")
    if length is not None:
        try:
            declared = int(length)
        except ValueError:
            raise InvalidRequest("invalid Content-Length header") from None
        if declared > limit:
            raise PayloadTooLarge(
                f"request body of {declared} bytes exceeds the {limit}-byte limit"
            )
        hold.take(declared)
        return await request.body()
    size = 0
    chunks: list[bytes] = []
    async for chunk in request.stream():  # chunked upload: count as we go
        size += len(chunk)
        if size > limit:
            raise PayloadTooLarge(f"request body exceeds the {limit}-byte limit")
        hold.take(len(chunk))
        chunks.append(chunk)
    return b"".join(chunks)


def load_json(body: bytes) -> Any:
    """A request body as JSON (None when empty); malformed JSON is the client's 400."""
    try:
        return orjson.loads(body) if body else None
    except orjson.JSONDecodeError as exc:
        raise InvalidRequest(f"the request body is not valid JSON: {exc}") from None


def parse_route_request(
    body: bytes,
    endpoint: Endpoint,
    request_id: str,
    tags_header: str | None = None,
    session_id: str | None = None,
) -> RouteRequest:
    if not body:
        raise InvalidRequest("the request body is empty; expected a JSON object")
    payload = load_json(body)
    if not isinstance(payload, dict):
        raise InvalidRequest("the request body must be a JSON object")
    check_writable(body, payload)

    model = payload.get("model")
    if not isinstance(model, str) or not model:
        raise InvalidRequest("you must provide a model parameter", param="model",
                             code="missing_required_parameter" if model is None else None)
    field = REQUIRED_INPUT[endpoint]
    value = payload.get(field)
    if value is None:
        raise InvalidRequest(f"missing required parameter: '{field}'", param=field,
                             code="missing_required_parameter")
    if endpoint is Endpoint.CHAT and (not isinstance(value, list) or not value):
        raise InvalidRequest("'messages' must be a non-empty array", param="messages")

    stream = payload.get("stream", False)
    if stream is None:
        stream = False
    if not isinstance(stream, bool):
        raise InvalidRequest("'stream' must be a boolean", param="stream")
    if endpoint is Endpoint.EMBEDDINGS and stream:
        raise InvalidRequest("embeddings cannot be streamed", param="stream")
    options = payload.get("stream_options")
    if options is not None and not isinstance(options, dict):
        raise InvalidRequest("'stream_options' must be an object", param="stream_options")
    include_usage = bool(options.get("include_usage")) if options else False

    max_tokens = _max_tokens(payload)
    tags = tuple(t.strip() for t in tags_header.split(",") if t.strip()) if tags_header else ()
    return RouteRequest(
        request_id=request_id,
        endpoint=endpoint,
        model=model,
        payload=payload,
        stream=stream,
        include_usage=include_usage,
        max_output_tokens=max_tokens,
        tags=tags,
        session_id=session_id[:256] if session_id else None,
    )


def check_writable(body: bytes, payload: dict[str, Any]) -> None:
    """Refuse, naming the field, a body nested deeper than the gateway can write back out.
    Counting brackets (memchr speed) clears nearly every body without looking further (with
    a margin for the few levels a translation between API formats adds)."""
    if body.count(b"[") + body.count(b"{") < MAX_WRITABLE_DEPTH - 8:
        return
    try:
        orjson.dumps(payload)
    except orjson.JSONEncodeError:
        param = next((key for key, value in payload.items() if not _writable({key: value})),
                     None)
        raise InvalidRequest(
            f"the request body is nested too deeply: at most {MAX_WRITABLE_DEPTH - 1} levels of "
            "arrays and objects are accepted", param=param, code="too_deeply_nested",
        ) from None


def _writable(value: object) -> bool:
    try:
        orjson.dumps(value)
    except orjson.JSONEncodeError:
        return False
    return True


def _max_tokens(payload: dict[str, Any]) -> int | None:
    found: int | None = None
    for name in ("max_completion_tokens", "max_tokens"):
        value = payload.get(name)
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise InvalidRequest(f"'{name}' must be a positive integer", param=name)
        found = value if found is None else found
    return found
