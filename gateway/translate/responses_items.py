"""Front door: Responses API input items → chat messages (pure).

Message items become chat messages (`developer` as `system`, which every chat server
accepts), `function_call` items become assistant `tool_calls` (consecutive calls, and the
text before them, are one assistant turn), `function_call_output` items become `role: tool`
messages, and `reasoning` items are dropped (they mean something only to the model that
wrote them). Anything else is refused with a 400 naming the item. `listed_item` gives a
stored item back in the shape the input items list shows.
"""

from __future__ import annotations

from typing import Any

from gateway.errors import InvalidRequest

ROLES = {"user": "user", "system": "system", "developer": "system", "assistant": "assistant"}


class Untranslatable(InvalidRequest):
    """Valid Responses input that chat completions cannot carry: a backend that serves the
    Responses API itself may still take it (see gateway/api/responses.py)."""

    code = "unsupported_parameter"


def append_item(messages: list[dict[str, Any]], item: dict[str, Any], where: str, *,
                strict: bool = True) -> None:
    """`strict=False`: leave out what cannot be translated (the chat form is then only what
    classification reads; the request itself goes to a Responses API backend as sent)."""
    kind = item.get("type")
    if kind == "message":
        messages.append(_message(item, where))
    elif kind == "function_call":
        call = {"id": item.get("call_id"), "type": "function", "function": {
            "name": item.get("name"), "arguments": item.get("arguments") or "{}"}}
        last = messages[-1] if messages else None
        # Parallel calls (and the text before them) are one assistant turn in chat.
        if last is not None and last["role"] == "assistant":
            last.setdefault("tool_calls", []).append(call)
        else:
            messages.append({"role": "assistant", "content": None, "tool_calls": [call]})
    elif kind == "function_call_output":
        messages.append({"role": "tool", "tool_call_id": item.get("call_id"),
                         "content": _output_text(item.get("output"), where)})
    elif kind == "reasoning" or not strict:
        return
    else:
        raise Untranslatable(
            f"{where}.type: input item type {kind!r} cannot be translated to chat completions "
            "(only messages, function calls and their outputs can)", param=f"{where}.type")


def _message(item: dict[str, Any], where: str) -> dict[str, Any]:
    role = item.get("role")
    role = ROLES.get(role) if isinstance(role, str) else None
    if role is None:
        raise InvalidRequest(f"{where}.role: expected user, system, developer or assistant",
                             param=f"{where}.role")
    content = item.get("content")
    if isinstance(content, str):
        return {"role": role, "content": content}
    if not isinstance(content, list):
        raise InvalidRequest(f"{where}.content: expected a string or content parts",
                             param=f"{where}.content")
    parts = [_part(part, f"{where}.content[{j}]") for j, part in enumerate(content)]
    if role != "user" or all(p["type"] == "text" for p in parts):
        if any(p["type"] != "text" for p in parts):
            raise InvalidRequest(f"{where}.content: only a user message may carry images or "
                                 "files", param=f"{where}.content")
        return {"role": role, "content": "".join(p["text"] for p in parts)}
    return {"role": role, "content": parts}


def _part(part: Any, where: str) -> dict[str, Any]:
    kind = part.get("type") if isinstance(part, dict) else None
    if kind in ("input_text", "output_text"):
        return {"type": "text", "text": part.get("text") or ""}
    if kind == "refusal":
        return {"type": "text", "text": part.get("refusal") or ""}
    if kind == "input_image":
        url = part.get("image_url")
        if not isinstance(url, str) or not url:
            raise InvalidRequest(f"{where}: only images given by image_url (a URL or a data "
                                 "URL) can be translated; file_id names a file stored at "
                                 "OpenAI", param=f"{where}.image_url")
        image: dict[str, Any] = {"url": url}
        if part.get("detail") in ("low", "high", "auto"):
            image["detail"] = part["detail"]
        return {"type": "image_url", "image_url": image}
    if kind == "input_file":
        data = part.get("file_data")
        if not isinstance(data, str) or not data:
            raise InvalidRequest(f"{where}: only files given inline (file_data) can be "
                                 "translated", param=f"{where}.file_data")
        file: dict[str, Any] = {"file_data": data}
        if isinstance(part.get("filename"), str):
            file["filename"] = part["filename"]
        return {"type": "file", "file": file}
    raise InvalidRequest(f"{where}.type: content part type {kind!r} is not supported",
                         param=f"{where}.type")


def _output_text(output: Any, where: str) -> str:
    if isinstance(output, str):
        return output
    if isinstance(output, list) and all(
        isinstance(p, dict) and p.get("type") in ("input_text", "output_text") for p in output
    ):
        return "".join(p.get("text") or "" for p in output)
    raise InvalidRequest(f"{where}.output: only text function call outputs can be translated",
                         param=f"{where}.output")


def listed_item(item: dict[str, Any], key: str) -> dict[str, Any]:
    """A stored conversation item as the Responses API lists it: with an id (its own, or
    one of its type made from `key`), a message's status and its content as parts."""
    kind = item.get("type")
    prefix = {"message": "msg", "function_call": "fc", "function_call_output": "fco",
              "reasoning": "rs"}.get(str(kind), "item")
    listed = {**item, "id": item.get("id") or f"{prefix}_{key}"}
    if kind == "message":
        listed.setdefault("status", "completed")
        content = item.get("content")
        if isinstance(content, str):
            part = "output_text" if item.get("role") == "assistant" else "input_text"
            listed["content"] = [{"type": part, "text": content}]
    return listed
