"""Response bodies in the OpenAI/vLLM wire format: completions, chunks, usage, models, SSE.

Field sets follow what vLLM 0.32 emits, so a client or gateway tested against the sim sees
the same keys (including the nulls) as against the real server.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import orjson

from gateway.sim.answers import AnswerPlan
from gateway.sim.config import SimConfig
from gateway.sim.engine import EngineUsage

SSE_DONE = b"data: [DONE]\n\n"
SYSTEM_FINGERPRINT = "vllm-0.32.0-sim"


@dataclass(frozen=True)
class ResponseMeta:
    id: str
    created: int
    model: str


def sse(payload: dict[str, Any]) -> bytes:
    return b"data: " + orjson.dumps(payload) + b"\n\n"


def usage_json(usage: EngineUsage) -> dict[str, Any]:
    return {
        "prompt_tokens": usage.prompt_tokens,
        "total_tokens": usage.prompt_tokens + usage.completion_tokens,
        "completion_tokens": usage.completion_tokens,
        "prompt_tokens_details": {"cached_tokens": usage.cached_tokens},
        "completion_tokens_details": None,
    }


def chat_message(plan: AnswerPlan, num_tokens: int) -> dict[str, Any]:
    message: dict[str, Any] = {
        "role": "assistant",
        "content": plan.text(num_tokens),
        "refusal": None,
        "annotations": None,
        "audio": None,
        "function_call": None,
        "reasoning": None,
    }
    call = plan.tool_call
    if call is not None:
        message["content"] = None
        arguments = plan.text(num_tokens)
        function = {"name": call.name, "arguments": arguments}
        message["tool_calls"] = [{"id": call.call_id, "type": "function", "function": function}]
    return message


def chat_completion(meta: ResponseMeta, plan: AnswerPlan, usage: EngineUsage) -> dict[str, Any]:
    return {
        "id": meta.id,
        "object": "chat.completion",
        "created": meta.created,
        "model": meta.model,
        "choices": [
            {
                "index": 0,
                "message": chat_message(plan, usage.completion_tokens),
                "logprobs": None,
                "finish_reason": plan.api_finish_reason,
                "stop_reason": None,
                "token_ids": None,
            }
        ],
        "service_tier": None,
        "system_fingerprint": SYSTEM_FINGERPRINT,
        "usage": usage_json(usage),
        "prompt_logprobs": None,
        "prompt_token_ids": None,
        "kv_transfer_params": None,
    }


def chat_delta(plan: AnswerPlan, index: int) -> dict[str, Any]:
    """The delta carrying output token `index`, as OpenAI streams text and tool calls."""
    call = plan.tool_call
    if call is None:
        return {"content": plan.pieces[index]}
    if index == 0:  # the first fragment names the call; arguments follow in pieces
        function = {"name": call.name, "arguments": ""}
        fragment = {"index": 0, "id": call.call_id, "type": "function", "function": function}
    else:
        fragment = {"index": 0, "function": {"arguments": plan.pieces[index]}}
    return {"tool_calls": [fragment]}


def chat_chunk(
    meta: ResponseMeta,
    delta: dict[str, Any],
    finish_reason: str | None = None,
    usage: dict[str, Any] | None = None,
) -> dict[str, Any]:
    choice = {
        "index": 0,
        "delta": delta,
        "logprobs": None,
        "finish_reason": finish_reason,
        "token_ids": None,
    }
    if finish_reason is not None:
        choice["stop_reason"] = None
    chunk: dict[str, Any] = {
        "id": meta.id,
        "object": "chat.completion.chunk",
        "created": meta.created,
        "model": meta.model,
        "choices": [choice],
    }
    if usage is not None:
        chunk["usage"] = usage
    return chunk


def completion(meta: ResponseMeta, plan: AnswerPlan, usage: EngineUsage) -> dict[str, Any]:
    return {
        "id": meta.id,
        "object": "text_completion",
        "created": meta.created,
        "model": meta.model,
        "choices": [
            {
                "index": 0,
                "text": plan.text(usage.completion_tokens),
                "logprobs": None,
                "finish_reason": plan.api_finish_reason,
                "stop_reason": None,
                "token_ids": None,
                "prompt_logprobs": None,
                "prompt_token_ids": None,
            }
        ],
        "service_tier": None,
        "system_fingerprint": SYSTEM_FINGERPRINT,
        "usage": usage_json(usage),
        "kv_transfer_params": None,
    }


def completion_chunk(
    meta: ResponseMeta,
    text: str,
    finish_reason: str | None = None,
    usage: dict[str, Any] | None = None,
) -> dict[str, Any]:
    choice = {
        "index": 0,
        "text": text,
        "logprobs": None,
        "finish_reason": finish_reason,
        "stop_reason": None,
        "token_ids": None,
    }
    chunk: dict[str, Any] = {
        "id": meta.id,
        "object": "text_completion",
        "created": meta.created,
        "model": meta.model,
        "choices": [choice],
    }
    if usage is not None:
        chunk["usage"] = usage
    return chunk


def usage_chunk(meta: ResponseMeta, object_name: str, usage: EngineUsage) -> dict[str, Any]:
    """The extra chunk stream_options.include_usage asks for: no choices, the full usage."""
    return {
        "id": meta.id,
        "object": object_name,
        "created": meta.created,
        "model": meta.model,
        "choices": [],
        "usage": usage_json(usage),
        "system_fingerprint": SYSTEM_FINGERPRINT,
    }


def embeddings_response(
    meta: ResponseMeta, vectors: list[list[float] | str], prompt_tokens: int
) -> dict[str, Any]:
    return {
        "id": meta.id,
        "object": "list",
        "created": meta.created,
        "model": meta.model,
        "data": [
            {"index": i, "object": "embedding", "embedding": vector}
            for i, vector in enumerate(vectors)
        ],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "total_tokens": prompt_tokens,
            "completion_tokens": 0,
            "prompt_tokens_details": None,
        },
    }


def model_card(config: SimConfig, created: int) -> dict[str, Any]:
    """vLLM's ModelCard: OpenAI's model object plus root, parent and max_model_len (a sim
    playing OpenAI's API answers with OpenAI's four fields only)."""
    if config.api == "openai":
        return {"id": config.model_name, "object": "model", "created": created,
                "owned_by": config.owned_by}
    return {
        "id": config.model_name,
        "object": "model",
        "created": created,
        "owned_by": config.owned_by,
        "root": config.root,
        "parent": None,
        "max_model_len": config.max_model_len,
        "permission": [
            {
                "id": f"modelperm-{config.model_name}",
                "object": "model_permission",
                "created": created,
                "allow_create_engine": False,
                "allow_sampling": True,
                "allow_logprobs": True,
                "allow_search_indices": False,
                "allow_view": True,
                "allow_fine_tuning": False,
                "organization": "*",
                "group": None,
                "is_blocking": False,
            }
        ],
    }
