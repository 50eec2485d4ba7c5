"""Composition root: create_app(settings, overrides) and the lifespan that builds every
long-lived object.

Nothing else constructs engines, clients, stores or writers: gateway/assembly/ builds them on
one AsyncExitStack (each part registers its own close), and handlers reach the typed services
through `app.state.components`. Tests build an app with whatever parts they want by passing
settings and overrides (a fixed policy, their own providers or HTTP transports) here.
"""

from __future__ import annotations

import gc
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import replace

from fastapi import FastAPI

from gateway.api import admin, admin_fleet, admin_session, budgets, health, messages, openai
from gateway.api import responses as responses_api
from gateway.api.body_gate import BodyGate
from gateway.api.errors import RequestIdMiddleware, install_error_handlers
from gateway.api.feedback import router as feedback_router
from gateway.api.hot_path import HotPathApp
from gateway.api.openapi_document import truthful_openapi
from gateway.api.report_page import router as report_page_router
from gateway.api.reports import router as reports_router
from gateway.assembly.overrides import Overrides
from gateway.assembly.parent_watch import follow_parent
from gateway.assembly.parts import assemble
from gateway.classify.presidio import presidio_config
from gateway.policy.loader import PolicySet
from gateway.settings import Settings
from gateway.telemetry.log_output import send_gateway_logs_to_stderr


def create_app(
    settings: Settings | None = None, *, overrides: Overrides | None = None,
    policy: PolicySet | None = None,
) -> HotPathApp:
    """`policy` is short for `overrides=Overrides(policy=...)`, as most tests want only that."""
    settings = settings or Settings()
    overrides = overrides or Overrides()
    if policy is not None:
        if overrides.policy is not None:
            raise ValueError("a policy is given twice: as `policy` and in `overrides`")
        overrides = replace(overrides, policy=policy)
    send_gateway_logs_to_stderr(settings.log_level)
    follow_parent()  # a worker of `gateway serve --workers N` dies with it
    # Checked now, so a gateway told to use Presidio without it installed never starts.
    presidio = presidio_config(
        settings.presidio_entities, settings.presidio_min_score, settings.presidio_model
    ) if settings.presidio else None

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        async with AsyncExitStack() as stack:
            app.state.components = await assemble(
                stack, settings, overrides, version=app.version, presidio=presidio)
            # Everything built so far (tokenizer tables, the policy, models) lives as long as
            # the process: take it out of the cyclic collector's view, so a full collection
            # walks only what requests allocate.
            gc.collect()
            gc.freeze()
            yield

    app = FastAPI(
        title="LLM routing gateway",
        version="0.1.0",
        lifespan=lifespan,
        docs_url="/docs",
        redoc_url=None,
        # FastAPI's built-in OpenTelemetry hook asks the global tracer provider on every
        # request (an os.environ lookup): ~10% of the event loop's CPU in the profile. The
        # gateway emits its own telemetry instead.
        telemetry={"tracing": False, "metrics": False, "logs": False},
    )
    install_error_handlers(app)
    app.state.body_gate = BodyGate(settings.max_inflight_body_bytes)
    app.include_router(openai.router)
    app.include_router(messages.router)
    app.include_router(admin_session.router)
    app.include_router(responses_api.router)
    app.include_router(admin.router)
    app.include_router(admin_fleet.router)
    app.include_router(report_page_router)
    app.include_router(reports_router)
    app.include_router(budgets.tenant_router)
    app.include_router(feedback_router)
    app.include_router(budgets.admin_router)
    app.include_router(health.router)
    app.openapi = truthful_openapi(app)  # type: ignore[method-assign]
    app.add_middleware(RequestIdMiddleware)
    return HotPathApp(app, {**openai.HOT_ROUTES, **messages.HOT_ROUTES,
                            **responses_api.HOT_ROUTES})
