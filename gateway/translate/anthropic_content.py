"""OpenAI chat messages → Anthropic's top-level `system` blocks and user/assistant turns (pure).

`system` and `developer` messages become `system` blocks; assistant `tool_calls` become
`tool_use` blocks; `role: tool` results become `tool_result` blocks in a user turn; adjacent
turns of one role are merged, as Anthropic expects alternating roles.
"""

from __future__ import annotations

import re
from typing import Any

import orjson

from gateway.errors import InvalidRequest

Block = dict[str, Any]
IMAGE_TYPES = frozenset({"image/jpeg", "image/png", "image/gif", "image/webp"})
_DATA_URI = re.compile(r"^data:([\w.+-]+/[\w.+-]+);base64,(.*)$", re.DOTALL)


def unsupported(param: str, backend: str, detail: str | None = None) -> InvalidRequest:
    message = f"parameter '{param}' is not supported by backend {backend} (anthropic)"
    return InvalidRequest(message + (f": {detail}" if detail else ""), param=param,
                          code="unsupported_parameter")


def to_messages(messages: Any, backend: str) -> tuple[list[Block], list[dict[str, Any]]]:
    system: list[Block] = []
    turns: list[dict[str, Any]] = []
    for i, message in enumerate(messages):
        where = f"messages[{i}]"
        if not isinstance(message, dict):
            raise unsupported(where, backend, "each message must be an object")
        role = message.get("role")
        content = message.get("content")
        if role in ("system", "developer"):
            system.extend(_text_blocks(content, f"{where}.content", backend))
        elif role == "user":
            _append(turns, "user", _user_blocks(content, f"{where}.content", backend))
        elif role == "assistant":
            # Earlier thinking first, signed as Anthropic wrote it (tool use needs it back).
            blocks = [b for b in message.get("thinking_blocks") or ()
                      if isinstance(b, dict)
                      and b.get("type") in ("thinking", "redacted_thinking")]
            blocks += _text_blocks(content, f"{where}.content", backend)
            blocks += _tool_uses(message.get("tool_calls"), f"{where}.tool_calls", backend)
            _append(turns, "assistant", blocks)
        elif role == "tool":
            result: Block = {"type": "tool_result", "tool_use_id": message.get("tool_call_id")}
            result["content"] = content if isinstance(content, str) else _text_blocks(
                content, f"{where}.content", backend)
            _append(turns, "user", [result])
        else:
            raise unsupported(f"{where}.role", backend, f"role {role!r}")
    return system, turns


def _append(turns: list[dict[str, Any]], role: str, blocks: list[Block]) -> None:
    if not blocks:
        return  # Anthropic rejects empty turns; an empty OpenAI message says nothing
    if turns and turns[-1]["role"] == role:
        turns[-1]["content"].extend(blocks)
    else:
        turns.append({"role": role, "content": blocks})


def _text_blocks(content: Any, where: str, backend: str) -> list[Block]:
    if content is None:
        return []
    if isinstance(content, str):
        return [{"type": "text", "text": content}] if content else []
    if not isinstance(content, list):
        raise unsupported(where, backend, "expected a string or a list of parts")
    blocks: list[Block] = []
    for j, part in enumerate(content):
        kind = part.get("type") if isinstance(part, dict) else None
        if kind not in ("text", "refusal"):
            raise unsupported(f"{where}[{j}].type", backend, f"part type {kind!r} here")
        text = part.get(kind)
        if isinstance(text, str) and text:
            blocks.append(_with_cache_control({"type": "text", "text": text}, part))
    return blocks


def _user_blocks(content: Any, where: str, backend: str) -> list[Block]:
    if not isinstance(content, list):
        return _text_blocks(content, where, backend)
    blocks: list[Block] = []
    for j, part in enumerate(content):
        kind = part.get("type") if isinstance(part, dict) else None
        if kind == "text":
            blocks.extend(_text_blocks([part], where, backend))
        elif kind == "image_url":
            blocks.append(_with_cache_control(_image(part, f"{where}[{j}]", backend), part))
        elif kind == "file":
            blocks.append(_with_cache_control(_document(part, f"{where}[{j}]", backend), part))
        else:
            raise unsupported(f"{where}[{j}].type", backend, f"content part {kind!r}")
    return blocks


def _image(part: Block, where: str, backend: str) -> Block:
    image = part.get("image_url")
    url = image.get("url") if isinstance(image, dict) else image
    if not isinstance(url, str):
        raise unsupported(f"{where}.image_url", backend, "expected a URL")
    match = _DATA_URI.match(url)
    if match:
        if match.group(1) not in IMAGE_TYPES:
            raise unsupported(f"{where}.image_url", backend, f"image type {match.group(1)}")
        source = {"type": "base64", "media_type": match.group(1), "data": match.group(2)}
    elif url.startswith(("https://", "http://")):
        source = {"type": "url", "url": url}
    else:
        raise unsupported(f"{where}.image_url", backend, "expected an http(s) or data: URL")
    return {"type": "image", "source": source}


def _document(part: Block, where: str, backend: str) -> Block:
    file = part.get("file") if isinstance(part.get("file"), dict) else {}
    match = _DATA_URI.match(file.get("file_data") or "")
    if not match or match.group(1) != "application/pdf":
        raise unsupported(f"{where}.file", backend, "only inline PDF file_data is supported")
    source = {"type": "base64", "media_type": "application/pdf", "data": match.group(2)}
    return {"type": "document", "source": source}


def _tool_uses(calls: Any, where: str, backend: str) -> list[Block]:
    blocks: list[Block] = []
    for j, call in enumerate(calls or ()):
        function = call.get("function") if isinstance(call, dict) else None
        if not isinstance(function, dict):
            raise unsupported(f"{where}[{j}]", backend, "expected a function tool call")
        arguments = function.get("arguments") or "{}"
        try:
            parsed = orjson.loads(arguments) if isinstance(arguments, str) else arguments
        except orjson.JSONDecodeError:
            parsed = None
        if not isinstance(parsed, dict):
            raise InvalidRequest(
                f"{where}[{j}].function.arguments must be a JSON object to send to backend "
                f"{backend} (anthropic)", param=f"{where}[{j}].function.arguments")
        blocks.append({"type": "tool_use", "id": call.get("id"),
                       "name": function.get("name"), "input": parsed})
    return blocks


def _with_cache_control(block: Block, part: Block) -> Block:
    # Anthropic's prompt-caching marker, sent by clients that know the backend is Claude.
    if isinstance(part.get("cache_control"), dict):
        block["cache_control"] = part["cache_control"]
    return block
