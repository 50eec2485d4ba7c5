"""vLLM's own endpoints: /health, /version, /load, /metrics, /tokenize, /detokenize."""

from __future__ import annotations

from typing import Any

import orjson
from fastapi import APIRouter, Request, Response

from gateway.sim.errors import bad_request
from gateway.sim.metrics import METRICS_CONTENT_TYPE
from gateway.sim.protocol import check_model, decode_json, turns_of
from gateway.sim.runtime import runtime_of

VLLM_VERSION = "0.32.0+sim"  # the vLLM release whose API and metrics the sim reproduces

router = APIRouter()
health_router = APIRouter()  # /health alone, for the sims that play a commercial API


def _json(payload: object) -> Response:
    return Response(orjson.dumps(payload), media_type="application/json")


async def health(request: Request) -> Response:
    return Response(status_code=200 if runtime_of(request).engine.alive else 503)


router.add_api_route("/health", health, methods=["GET"])
health_router.add_api_route("/health", health, methods=["GET"])


@router.get("/version")
async def version() -> Response:
    return _json({"version": VLLM_VERSION})


@router.get("/load")
async def load(request: Request) -> Response:
    scheduler = runtime_of(request).engine.scheduler
    return _json({"server_load": len(scheduler.running) + len(scheduler.waiting)})


@router.get("/metrics")
async def metrics(request: Request) -> Response:
    return Response(runtime_of(request).metrics.render(), media_type=METRICS_CONTENT_TYPE)


@router.post("/tokenize")
async def tokenize(request: Request) -> Response:
    runtime = runtime_of(request)
    body = decode_json(await request.body())
    check_model(runtime.config, body.get("model"))
    tokenizer = runtime.tokenizer
    if "messages" in body:
        tools = body.get("tools")
        ids = tokenizer.apply_chat_template(
            turns_of(body["messages"]),
            tools_text=orjson.dumps(tools).decode() if tools else None,
            add_generation_prompt=body.get("add_generation_prompt", True) is not False,
        )
    elif isinstance(body.get("prompt"), str):
        add_special = body.get("add_special_tokens", True) is not False
        ids = tokenizer.encode(body["prompt"], add_special_tokens=add_special)
    else:
        raise bad_request("Give either `prompt` (a string) or `messages`", "prompt")
    payload: dict[str, Any] = {
        "count": len(ids),
        "max_model_len": runtime.config.max_model_len,
        "tokens": ids,
        "token_strs": [tokenizer.token_str(t) for t in ids]
        if body.get("return_token_strs")
        else None,
    }
    return _json(payload)


@router.post("/detokenize")
async def detokenize(request: Request) -> Response:
    runtime = runtime_of(request)
    body = decode_json(await request.body())
    check_model(runtime.config, body.get("model"))
    tokens = body.get("tokens")
    if not isinstance(tokens, list) or not all(isinstance(t, int) for t in tokens):
        raise bad_request("`tokens` must be a list of integers", "tokens")
    return _json({"prompt": runtime.tokenizer.decode(tokens)})
