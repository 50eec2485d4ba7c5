"""Composition root: create_app(settings) and the lifespan that builds every long-lived object.

Nothing else constructs engines, clients, stores or writers; handlers reach them through
`app.state.components`. Tests build an app with whatever parts they want by passing settings
(and optionally a ready policy) here.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
from collections.abc import AsyncIterator
from concurrent.futures import ProcessPoolExecutor
from contextlib import asynccontextmanager
from datetime import timedelta
from multiprocessing import get_context
from pathlib import Path

import httpx
from fastapi import FastAPI
from pydantic import SecretStr

from gateway.api import admin, admin_fleet, admin_session, budgets, health, messages, openai
from gateway.api import responses as responses_api
from gateway.api.body_gate import BodyGate
from gateway.api.errors import RequestIdMiddleware, install_error_handlers
from gateway.api.feedback import router as feedback_router
from gateway.api.hot_path import HotPathApp
from gateway.api.openapi_document import truthful_openapi
from gateway.api.report_page import router as report_page_router
from gateway.api.reports import router as reports_router
from gateway.audit.admin_log import AdminLog, PolicyReloadAudit
from gateway.audit.deployments import DeploymentLog, DeploymentRecorder
from gateway.audit.gpu_minutes import GpuMinuteLog
from gateway.audit.journal import Journal
from gateway.audit.mirror import JsonLinesMirror
from gateway.audit.outcomes import OutcomeRepository
from gateway.audit.partitions import is_postgres, keep_partitions_ahead
from gateway.audit.repository import AuditRepository
from gateway.audit.spool import Spool
from gateway.audit.writer import AuditWriter
from gateway.budget.last_known_limits import RememberedOverrides
from gateway.budget.leasing import LeasingBudgetStore
from gateway.budget.limits import BudgetUnavailable
from gateway.budget.limits_repository import LimitsRepository
from gateway.budget.memory_store import MemoryBudgetStore
from gateway.budget.redis_store import RedisBudgetStore, make_client
from gateway.budget.store import BudgetStore
from gateway.classify.presidio import PresidioFinder, presidio_config
from gateway.classify.sensitivity import SensitivityScanner
from gateway.classify.standard import standard_classifier
from gateway.classify.workers import warm_worker
from gateway.components import Components
from gateway.conversations.repository import ResponseRepository
from gateway.conversations.retention import keep_purging
from gateway.db.engine import COMMAND_TIMEOUT_S, create_engine
from gateway.db.last_known import LastKnownFile
from gateway.db.migrate import upgrade
from gateway.policy.loader import PolicySet
from gateway.policy.store import PolicyStore
from gateway.policy.token_counting import extra_encodings
from gateway.providers.anthropic import AnthropicProvider
from gateway.providers.azure import AzureDialect
from gateway.providers.engine_tokens import EngineTokenCounter
from gateway.providers.openai_compat import OpenAICompatProvider, OpenAIDialect
from gateway.reports.gpus import declared_gpus
from gateway.routing.budgeting import BudgetGate
from gateway.routing.fleet_view import fleet_view
from gateway.routing.limits import LimitsResolver
from gateway.routing.service import RoutingService
from gateway.routing.shadow import ShadowJudge
from gateway.scraper.breaker import BreakerConfig
from gateway.scraper.dcgm_poller import DcgmPoller
from gateway.scraper.fleet import FleetState
from gateway.scraper.poller import MetricsPoller
from gateway.secret_files import GatewaySecrets, RotatingSecret
from gateway.secret_rotation import on_hangup, reread_everything, watch_secret_files
from gateway.settings import Settings
from gateway.telemetry.log_output import redact_gateway_logs, send_gateway_logs_to_stderr
from gateway.telemetry.metrics import GatewayMetrics
from gateway.telemetry.multiprocess import process_exited
from gateway.telemetry.otlp import start_tracing, traces_url
from gateway.tenancy.authenticator import KeyAuthenticator
from gateway.tenancy.key_changes import KeyChangeListener, listen_dsn
from gateway.tenancy.persisted import KeyFile
from gateway.tenancy.repository import TenantRepository
from gateway.upstream import Provider

log = logging.getLogger("gateway")


def create_app(
    settings: Settings | None = None, *, policy: PolicySet | None = None
) -> HotPathApp:
    settings = settings or Settings()
    send_gateway_logs_to_stderr(settings.log_level)
    # Checked now, so a gateway told to use Presidio without it installed never starts.
    presidio = presidio_config(
        settings.presidio_entities, settings.presidio_min_score, settings.presidio_model
    ) if settings.presidio else None

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        engine = create_engine(settings.database_url, command_timeout_s=COMMAND_TIMEOUT_S)
        if settings.is_embedded_db:
            await upgrade(engine)
        # The pepper is read once: it is part of every stored key hash.
        pepper = settings.key_pepper.get_secret_value().encode() if settings.key_pepper else None
        tenants = TenantRepository(engine, pepper)
        secrets = gateway_secrets(settings)
        metrics = GatewayMetrics()
        tracing = start_tracing(traces_url(  # off (no tracer provider) without an endpoint
            settings.otel_exporter_otlp_endpoint, settings.otel_exporter_otlp_traces_endpoint,
            sdk_disabled=settings.otel_sdk_disabled,
        ), settings.otel_service_name, app.version)
        policy_store = (
            PolicyStore.fixed(policy) if policy
            else PolicyStore(
                settings.policy_path,
                poll_interval_s=settings.policy_poll_interval_s,
                on_reload=metrics.policy_reloaded,
            )
        )
        redis = (
            make_client(settings.redis_url, settings.redis_timeout_s) if settings.redis_url
            else None
        )
        budget_store: BudgetStore = (
            RedisBudgetStore(redis, reservation_ttl_s=settings.budget_reservation_ttl_s,
                             op_timeout_s=2 * settings.redis_timeout_s)
            if redis is not None
            else MemoryBudgetStore(reservation_ttl_s=settings.budget_reservation_ttl_s)
        )
        if redis is not None and settings.budget_lease_s > 0:
            # Replicas admit from leased slices: one Redis call per lease, not per request.
            leasing = LeasingBudgetStore(budget_store, lease_s=settings.budget_lease_s)
            metrics.watch_budget_leases(leasing.stats.numbers)
            budget_store = leasing
        limits = {
            "connect_timeout_s": settings.upstream_connect_timeout_s,
            "read_timeout_s": settings.upstream_read_timeout_s,
            "max_connections": settings.upstream_max_connections,
        }
        compat = OpenAICompatProvider(**limits)
        providers: dict[str, Provider] = {
            "vllm": compat,
            "openai_compat": compat,
            "openai": OpenAICompatProvider(**limits, dialect=OpenAIDialect()),
            "azure": OpenAICompatProvider(**limits, dialect=AzureDialect()),
            "anthropic": AnthropicProvider(**limits),
        }
        fleet = FleetState(breaker=BreakerConfig(
            failures_to_open=settings.breaker_failures,
            error_rate_to_open=settings.breaker_error_rate,
            min_attempts=settings.breaker_min_attempts,
            cooldown_s=settings.breaker_cooldown_s,
        ))
        metrics.watch_fleet(lambda: fleet_view(fleet.details(), policy_store.current))
        audit = AuditWriter(
            AuditRepository(engine), Spool(settings.spool_dir),
            mirror=JsonLinesMirror(settings.audit_log_path) if settings.audit_log_path else None,
            journal=(Journal(fsync_interval_s=settings.audit_journal_fsync_s)
                     if settings.audit_journal else None),
            observer=metrics.requests.observe,
        )
        metrics.watch_audit(audit.numbers)
        # Large exact token counts run in other processes (the encoder holds the GIL); two,
        # so a 128K-token prompt is counted in halves in parallel.
        token_pool = ProcessPoolExecutor(max_workers=2, mp_context=get_context("spawn"))
        second_opinion = (PresidioFinder.in_processes(presidio, settings.presidio_workers)
                          if presidio is not None else None)
        classifier = standard_classifier(token_pool, parallelism=2, extra=second_opinion)
        log_scanner = SensitivityScanner()  # logs are no tenant's: the built-in detectors
        unredact_logs = redact_gateway_logs(
            lambda text: classifier.redact_text(text, log_scanner))
        # Start both processes, load their vocabularies and compile their detectors now, not
        # on a user's request.
        encodings = ("o200k_base", *extra_encodings(policy_store.current.backends.values()))
        classifier.load_encodings(encodings)
        warm_up = asyncio.gather(*(
            asyncio.get_running_loop().run_in_executor(token_pool, warm_worker, encoding)
            for encoding in encodings for _ in range(2)
        ), *([second_opinion.warm()] if second_opinion else []))
        # Backends' own token counts (vLLM /tokenize, Anthropic count_tokens) where the policy
        # asks for them.
        tokenize_client = httpx.AsyncClient(limits=httpx.Limits(max_connections=32))
        limits_repo = LimitsRepository(engine)
        responses = ResponseRepository(
            engine, timedelta(days=settings.responses_retention_days))
        # What the database last said (keys, admin limits), for a restart while it is down.
        last_known = (LastKnownFile(settings.spool_dir / "last-known.json")
                      if settings.key_cache_persist else None)
        if last_known is not None:
            await asyncio.to_thread(last_known.load)
            last_known.start()
        limits = LimitsResolver(
            RememberedOverrides(limits_repo.overrides, last_known, settings.key_cache_stale_s)
            if last_known is not None else limits_repo.overrides,
            ttl_s=settings.limits_cache_ttl_s)
        outcomes = OutcomeRepository(engine)
        shadow = ShadowJudge(policy_store, providers, outcomes)
        metrics.watch_shadow(shadow.numbers)
        routing = RoutingService(
            policy=policy_store,
            classifier=classifier,
            fleet=fleet,
            budget=BudgetGate(budget_store, metrics),
            limits=limits,
            providers=providers,
            audit=audit,
            tracing=tracing,
            engine_counter=EngineTokenCounter(tokenize_client),
            shadow=shadow,
        )
        key_file = KeyFile(last_known, pepper) if last_known is not None else None
        authenticator = KeyAuthenticator(tenants.lookup, ttl_s=settings.key_cache_ttl_s,
                                         stale_s=settings.key_cache_stale_s, persisted=key_file)
        dsn = listen_dsn(settings.database_url)
        key_changes = (KeyChangeListener(dsn, on_change=authenticator.forget,
                                         on_gap=authenticator.invalidate) if dsn else None)
        if key_changes is not None:
            key_changes.start()
        app.state.components = Components(
            settings=settings,
            secrets=secrets,
            engine=engine,
            tenants=tenants,
            authenticator=authenticator,
            policy=policy_store,
            fleet=fleet,
            audit=audit,
            routing=routing,
            classifier=classifier,
            metrics=metrics,
            budget_store=budget_store,
            limits=limits,
            limits_repo=limits_repo,
            redis=redis,
            key_changes=key_changes,
            responses=responses,
            outcomes=outcomes,
            shadow=shadow,
        )
        scrape_client = httpx.AsyncClient(limits=httpx.Limits(max_connections=64))
        telemetry = policy_store.current.telemetry
        poller = MetricsPoller(scrape_client, fleet, interval_s=telemetry.scrape_interval_s,
                               timeout_s=telemetry.scrape_timeout_s)

        # GPU utilisation and memory from DCGM exporters, where the policy names one.
        gpu_log = GpuMinuteLog(engine)
        dcgm = DcgmPoller(scrape_client, gpu_log)

        def follow(new_policy: PolicySet) -> None:
            poller.set_targets(new_policy.metrics_targets())
            dcgm.set_targets(new_policy.dcgm_targets())
            fleet.retain(new_policy.backends)

        follow(policy_store.current)
        policy_store.subscribe(follow)
        reload_audit = PolicyReloadAudit(AdminLog(engine), asyncio.get_running_loop())
        policy_store.subscribe(reload_audit)  # each policy put in force, in the admin chain
        # A policy reload re-reads provider key files; the gateway's own keys go with it.
        policy_store.subscribe(lambda _: secrets.refresh(force=True))
        background = [asyncio.create_task(watch_secret_files(
            secrets, settings.policy_poll_interval_s), name="secret-files")]
        if metrics.multiprocess_dir is not None:
            background.append(asyncio.create_task(
                metrics.publish_forever(lambda: audit.backlog), name="metrics-publish"))
        stop_hangup = on_hangup(lambda: reread_everything(secrets, policy_store))
        # GPU-hours are paid from when a policy first declares a deployment: record it now
        # and on every reload, so reports never charge for time before it existed.
        deployments = DeploymentRecorder(DeploymentLog(engine), asyncio.get_running_loop(),
                                         declared_gpus)
        await deployments.record(declared_gpus(policy_store.current))
        policy_store.subscribe(deployments)
        partitions = (asyncio.create_task(keep_partitions_ahead(engine), name="audit-partitions")
                      if is_postgres(engine) else None)
        scraping = asyncio.create_task(poller.run(), name="metrics-scraper")
        gpu_scraping = asyncio.create_task(dcgm.run(), name="dcgm-scraper")
        gpu_flushing = asyncio.create_task(gpu_log.run(), name="gpu-telemetry")
        purging = asyncio.create_task(keep_purging(responses), name="responses-retention")
        await audit.start()  # replays a spool an earlier run left
        await shadow.start()
        policy_store.start()
        # Everything built so far (tokenizer tables, the policy, models) lives as long as the
        # process: take it out of the cyclic collector's view, so a full collection walks
        # only what requests allocate.
        gc.collect()
        gc.freeze()
        try:
            yield
        finally:
            stop_hangup()
            await shadow.stop()
            for task in background:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
            poller.stop()
            purging.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await purging
            try:  # the scrape in flight ends on its own timeout; cancel only as a last resort
                await asyncio.wait_for(scraping, 2 * telemetry.scrape_timeout_s + 1)
            except (TimeoutError, asyncio.CancelledError):
                pass
            dcgm.stop()
            try:
                await asyncio.wait_for(gpu_scraping, 5)
            except (TimeoutError, asyncio.CancelledError):
                pass
            await gpu_log.close(gpu_flushing)
            await scrape_client.aclose()
            await tokenize_client.aclose()
            await policy_store.stop()
            if partitions is not None:
                partitions.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await partitions
            await reload_audit.drain()
            await deployments.drain()
            await audit.stop()
            if key_changes is not None:
                await key_changes.stop()
            if last_known is not None:
                await last_known.stop()
            for provider in set(providers.values()):
                await provider.aclose()
            warm_up.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await warm_up  # retrieve its outcome: a cancelled gather must not log noise
            token_pool.shutdown(wait=False, cancel_futures=True)
            if second_opinion is not None:
                second_opinion.close()
            with contextlib.suppress(BudgetUnavailable):
                await budget_store.close()  # settles open leases while Redis is still there
            if redis is not None:
                await redis.aclose()
            await engine.dispose()
            await asyncio.to_thread(tracing.shutdown)  # exports the spans still queued
            if metrics.multiprocess_dir is not None:
                process_exited(metrics.multiprocess_dir)  # its gauges leave the merged view
            unredact_logs()

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


def gateway_secrets(settings: Settings) -> GatewaySecrets:
    """The admin and metrics keys as handlers read them: re-read from their files (when given
    as files) on change, on SIGHUP and on every policy reload."""
    def secret(name: str, value: SecretStr | None, path: Path | None) -> RotatingSecret:
        # Settings has read the file once already (start-up errors surface there).
        return RotatingSecret(name, value.get_secret_value() if value else None, path)
    return GatewaySecrets(
        secret("GATEWAY_ADMIN_KEY", settings.admin_key, settings.admin_key_file),
        secret("GATEWAY_METRICS_KEY", settings.metrics_key, settings.metrics_key_file),
    )
