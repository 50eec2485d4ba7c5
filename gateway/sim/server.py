"""The sim's ASGI app and its runner: create_sim_app(config) and run_sim(config, host, port).

The lifespan builds the SimRuntime (tokenizer, metrics, engine, hooks) and starts and stops the
engine's step loop; handlers find it in the request state.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import uvicorn
import uvloop
from fastapi import FastAPI, Request, Response

from gateway.sim import api_anthropic, api_openai, api_vllm, hooks
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
    if config.api == "anthropic":
        app.include_router(api_anthropic.router)
    else:
        app.include_router(api_openai.router)
    # /health on every kind (the demo waits on it); vLLM's own extras only where one is played
    app.include_router(api_vllm.router if config.api == "vllm" else api_vllm.health_router)
    app.include_router(hooks.router)
    app.add_middleware(hooks.SimHooksMiddleware)
    app.add_exception_handler(SimError, _sim_error)
    return app


async def _sim_error(request: Request, exc: Exception) -> Response:
    if not isinstance(exc, SimError):  # registered for SimError only
        raise exc
    return exc.to_response()


def _server_config(config: SimConfig, host: str, port: int) -> uvicorn.Config:
    return uvicorn.Config(
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


def run_sim(config: SimConfig, host: str, port: int) -> None:
    """Serve one sim until interrupted (blocking)."""
    uvicorn.Server(_server_config(config, host, port)).run()


def run_sims(sims: list[tuple[SimConfig, str, int]]) -> None:
    """Serve several sims from one process and one event loop until SIGTERM or SIGINT
    (blocking): the demo's fleet starts in the time of one import, not one per backend."""
    servers = [uvicorn.Server(_server_config(c, host, port)) for c, host, port in sims]
    for server in servers:
        # One process, one set of signal handlers (below) for all of them.
        server.capture_signals = contextlib.nullcontext  # type: ignore[method-assign]

    async def serve_all() -> None:
        loop = asyncio.get_running_loop()

        def stop() -> None:
            for server in servers:
                server.should_exit = True

        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, stop)
        await asyncio.gather(*(server.serve() for server in servers))

    uvloop.run(serve_all())
