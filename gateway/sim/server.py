"""The sim's ASGI app and its runner: create_sim_app(config) and run_sim(config, host, port).

The lifespan builds the SimRuntime (tokenizer, metrics, engine, hooks) and starts and stops the
engine's step loop; handlers find it in the request state.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import uvicorn
from fastapi import FastAPI, Request, Response

from gateway.sim import api_openai, api_vllm, hooks
from gateway.sim.config import SimConfig
from gateway.sim.delivery import QuietStreamAborts
from gateway.sim.errors import SimError
from gateway.sim.runtime import STATE_KEY, SimRuntime


def create_sim_app(config: SimConfig) -> FastAPI:
    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[dict[str, SimRuntime]]:
        runtime = SimRuntime.build(config)
        quiet = QuietStreamAborts()
        uvicorn_errors = logging.getLogger("uvicorn.error")
        uvicorn_errors.addFilter(quiet)
        await runtime.engine.start()
        try:
            yield {STATE_KEY: runtime}
        finally:
            await runtime.engine.stop()
            uvicorn_errors.removeFilter(quiet)

    app = FastAPI(
        title=f"gateway sim ({config.model_name})",
        lifespan=lifespan,
        docs_url=None,
        redoc_url=None,
        openapi_url=None,
    )
    app.include_router(api_openai.router)
    app.include_router(api_vllm.router)
    app.include_router(hooks.router)
    app.add_middleware(hooks.SimHooksMiddleware)
    app.add_exception_handler(SimError, _sim_error)
    return app


async def _sim_error(request: Request, exc: Exception) -> Response:
    if not isinstance(exc, SimError):  # registered for SimError only
        raise exc
    return exc.to_response()


def run_sim(config: SimConfig, host: str, port: int) -> None:
    """Serve one sim until interrupted (blocking)."""
    uvicorn.run(
        create_sim_app(config),
        host=host,
        port=port,
        loop="uvloop",
        http="httptools",
        ws="none",
        lifespan="on",
        log_level="warning",
        access_log=False,
        timeout_graceful_shutdown=5,
    )
