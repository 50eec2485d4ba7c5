"""The OpenAI-compatible endpoints: chat and text completions (plain and SSE), embeddings,
models. Each handler: parse, tokenize, check the context, plan the answer, run it through the
engine, deliver."""

from __future__ import annotations

from collections.abc import Sequence

import orjson
from fastapi import APIRouter, Request, Response

from gateway.sim.answers import AnswerPlan, plan_chat, plan_text
from gateway.sim.delivery import (
    EngineStreamResponse,
    finish_or_disconnect,
    stream_chat,
    stream_completion,
)
from gateway.sim.embeddings import embedding_vector, encode_base64, truncate_dimensions
from gateway.sim.errors import bad_request, prompt_too_long
from gateway.sim.payloads import (
    ResponseMeta,
    chat_completion,
    completion,
    embeddings_response,
    model_card,
)
from gateway.sim.protocol import (
    GenerationOptions,
    check_model,
    check_token_ids,
    decode_json,
    model_not_found,
    parse_chat,
    parse_completion,
    parse_embedding,
    resolve_max_tokens,
)
from gateway.sim.runtime import SimRuntime, runtime_of

# vLLM (like OpenAI's legacy API) gives /v1/completions 16 tokens when max_tokens is absent.
COMPLETIONS_DEFAULT_MAX_TOKENS = 16

router = APIRouter()


def _json(payload: object) -> Response:
    return Response(orjson.dumps(payload), media_type="application/json")


@router.post("/v1/chat/completions")
async def chat_completions(request: Request) -> Response:
    runtime = runtime_of(request)
    chat = parse_chat(decode_json(await request.body()))
    check_model(runtime.config, chat.model)
    prompt_ids = runtime.tokenizer.apply_chat_template(chat.turns, tools_text=chat.tools_text)
    max_tokens = resolve_max_tokens(runtime.config, len(prompt_ids), chat.options.max_tokens)
    plan = plan_chat(runtime.config, chat, prompt_ids, max_tokens)
    meta = runtime.response_meta(request, "chatcmpl")
    return await _generate(
        request, runtime, prompt_ids, plan, max_tokens, meta, chat.options, chat=True
    )


@router.post("/v1/completions")
async def completions(request: Request) -> Response:
    runtime = runtime_of(request)
    parsed = parse_completion(decode_json(await request.body()))
    check_model(runtime.config, parsed.model)
    prompt = parsed.prompt
    if isinstance(prompt, str):
        prompt_ids = runtime.tokenizer.encode(prompt, add_special_tokens=True)
    else:
        check_token_ids(runtime.config, prompt)
        prompt_ids = list(prompt)
    requested = parsed.options.max_tokens
    if requested is None:
        requested = min(COMPLETIONS_DEFAULT_MAX_TOKENS, runtime.config.max_model_len)
    max_tokens = resolve_max_tokens(runtime.config, len(prompt_ids), requested)
    plan = plan_text(runtime.config, parsed.options, prompt_ids, max_tokens)
    meta = runtime.response_meta(request, "cmpl")
    return await _generate(
        request, runtime, prompt_ids, plan, max_tokens, meta, parsed.options, chat=False
    )


async def _generate(
    request: Request,
    runtime: SimRuntime,
    prompt_ids: Sequence[int],
    plan: AnswerPlan,
    max_tokens: int,
    meta: ResponseMeta,
    options: GenerationOptions,
    *,
    chat: bool,
) -> Response:
    output_ids = runtime.tokenizer.encode_pieces(plan.pieces)
    await runtime.api_delay()
    handle = runtime.engine.submit(prompt_ids, output_ids, plan.finish_reason, max_tokens)
    if options.stream:
        abort_after = runtime.faults.take_stream_abort(request.url.path)
        stream = stream_chat if chat else stream_completion
        return EngineStreamResponse(stream(handle, plan, meta, options, abort_after), handle)
    if await finish_or_disconnect(handle, request.receive) is None:
        return Response(status_code=499)  # the client is gone; nobody reads this
    render = chat_completion if chat else completion
    return _json(render(meta, plan, handle.usage))


@router.post("/v1/embeddings")
async def embeddings(request: Request) -> Response:
    runtime = runtime_of(request)
    config = runtime.config
    parsed = parse_embedding(decode_json(await request.body()))
    check_model(config, parsed.model)
    if parsed.dimensions is not None and parsed.dimensions > config.embedding_dim:
        raise bad_request(
            f"dimensions must be at most {config.embedding_dim} for this model", "dimensions"
        )
    vectors: list[list[float] | str] = []
    prompt_tokens = 0
    for item in parsed.inputs:
        if not isinstance(item, str):
            check_token_ids(config, item)
        count = len(runtime.tokenizer.encode(item)) if isinstance(item, str) else len(item)
        if count > config.max_model_len:
            raise prompt_too_long(config.max_model_len, count)
        prompt_tokens += count
        vector = embedding_vector(item, config.embedding_dim, config.seed)
        if parsed.dimensions is not None:
            vector = truncate_dimensions(vector, parsed.dimensions)
        vectors.append(encode_base64(vector) if parsed.base64 else vector)
    meta = runtime.response_meta(request, "embd")
    return _json(embeddings_response(meta, vectors, prompt_tokens))


@router.get("/v1/models")
async def list_models(request: Request) -> Response:
    runtime = runtime_of(request)
    return _json({"object": "list", "data": [model_card(runtime.config, runtime.created)]})


@router.get("/v1/models/{model:path}")
async def get_model(model: str, request: Request) -> Response:
    runtime = runtime_of(request)
    if model != runtime.config.model_name:
        raise model_not_found(runtime.config, model)
    return _json(model_card(runtime.config, runtime.created))
