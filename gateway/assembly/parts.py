"""assemble(): every part of a running gateway, built in the order they depend on each other.

Read top to bottom it is the start-up; read bottom to top it is the shutdown, because each
builder registers its part's close on the exit stack as soon as the part exists. So the
policy watch and the background tasks stop first, the routing service drains its stream
ends before the audit writer, budget store and providers it records, settles and
dispatches with are closed, and the metrics and traces that watch all of it close last."""

from __future__ import annotations

from contextlib import AsyncExitStack
from datetime import timedelta

from gateway.assembly.audit import open_audit
from gateway.assembly.classification import open_classifier, open_engine_counter
from gateway.assembly.fleet import open_fleet, start_scrapers
from gateway.assembly.observability import open_observability, publish_metrics
from gateway.assembly.overrides import Overrides
from gateway.assembly.policy import open_policy, record_policy_changes, watch_policy
from gateway.assembly.providers import open_providers
from gateway.assembly.secrets import gateway_secrets, keep_secrets_fresh
from gateway.assembly.shadow import open_shadow_judge
from gateway.assembly.storage import (
    open_budget_store,
    open_database,
    open_redis,
    open_spend_guard,
)
from gateway.assembly.tasks import keep_running
from gateway.assembly.tenancy import open_last_known, open_tenancy
from gateway.audit.admin_repository import AdminLog
from gateway.audit.partition_repository import is_postgres, keep_partitions_ahead
from gateway.budget.redis_probe import RedisProbe
from gateway.classify.presidio import PresidioConfig
from gateway.components import Components, EdgeLimits
from gateway.conversations.repository import ResponseRepository
from gateway.conversations.retention import keep_purging
from gateway.db.probe import DatabaseProbe
from gateway.outcomes.repository import OutcomeRepository
from gateway.reports.capacity_html import CapacityReport
from gateway.reports.reader import ReportReader
from gateway.routing.budgeting import BudgetGate
from gateway.routing.live_explain import LiveExplainer
from gateway.routing.service import RoutingService
from gateway.settings import Settings


async def assemble(stack: AsyncExitStack, settings: Settings, overrides: Overrides, *,
                   version: str, presidio: PresidioConfig | None) -> Components:
    observability = open_observability(stack, settings, version)
    metrics = observability.metrics
    secrets = gateway_secrets(settings)
    policy = open_policy(settings, overrides.policy, metrics)
    classifier = open_classifier(stack, settings, presidio, policy.current)
    engine = await open_database(stack, settings)
    redis = open_redis(stack, settings)
    budget_store = open_budget_store(stack, settings, redis, metrics)
    providers = open_providers(stack, settings, overrides.providers)
    engine_counter = open_engine_counter(stack, overrides.tokenize_transport)
    last_known = await open_last_known(stack, settings)
    tenancy = open_tenancy(stack, settings, engine, last_known)
    fleet = open_fleet(settings, policy, metrics)
    audit = await open_audit(stack, settings, engine, metrics)
    outcomes = OutcomeRepository(engine)
    shadow = await open_shadow_judge(stack, providers, fleet, outcomes, metrics)
    routing = RoutingService(
        policy=policy,
        classifier=classifier,
        fleet=fleet,
        budget=BudgetGate(budget_store, metrics, open_spend_guard(settings, redis, engine)),
        limits=tenancy.limits,
        providers=providers,
        audit=audit,
        tracing=observability.tracing,
        engine_counter=engine_counter,
        shadow=shadow,
    )
    # Closed before everything above: a stream that ended as the server stopped still
    # settles its budget and lands its audit row.
    stack.push_async_callback(routing.aclose)
    admin_log = AdminLog(engine)
    await record_policy_changes(stack, policy, admin_log, engine)
    start_scrapers(stack, fleet, policy, engine, overrides.scrape_transport)
    responses = ResponseRepository(engine, timedelta(days=settings.responses_retention_days))
    keep_running(stack, keep_purging(responses), "responses-retention")
    if is_postgres(engine):
        keep_running(stack, keep_partitions_ahead(engine), "audit-partitions")
    keep_secrets_fresh(stack, settings, secrets, policy)
    publish_metrics(stack, metrics, audit)
    watch_policy(stack, policy)
    return Components(
        edge=EdgeLimits(settings.max_body_bytes, settings.body_read_timeout_s,
                        settings.key_cache_ttl_s),
        secrets=secrets,
        tenants=tenancy.tenants,
        authenticator=tenancy.authenticator,
        policy=policy,
        fleet=fleet,
        audit=audit,
        admin_log=admin_log,
        routing=routing,
        classifier=classifier,
        metrics=metrics,
        budget_store=budget_store,
        limits=tenancy.limits,
        limits_repo=tenancy.limits_repo,
        reports=ReportReader(engine),
        outcomes=outcomes,
        capacity=CapacityReport(engine),
        explainer=LiveExplainer(classifier, policy, routing.pipeline),
        database=DatabaseProbe(engine),
        redis=RedisProbe(redis) if redis is not None else None,
        key_changes=tenancy.key_changes,
        responses=responses,
        shadow=shadow,
    )
