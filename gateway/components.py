"""The long-lived parts of a running gateway, built once by the composition root (app.py and
gateway/assembly/): the typed services handlers receive, never the engine or Redis client
behind them. Handlers reach them through one typed accessor (gateway/api/parts.py)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol

from gateway.audit.admin_repository import AdminLog
from gateway.audit.writer import AuditWriter
from gateway.budget.limits_repository import LimitsRepository
from gateway.budget.store import BudgetStore
from gateway.classify.profiler import RequestClassifier
from gateway.conversations.repository import ResponseRepository
from gateway.outcomes.repository import OutcomeRepository
from gateway.policy.loader import PolicySet
from gateway.policy.store import PolicyStore
from gateway.reports.reader import ReportReader
from gateway.routing.limits import LimitsResolver
from gateway.routing.service import RoutingService
from gateway.routing.shadow import ShadowJudge
from gateway.scraper.fleet import FleetState
from gateway.secret_files import GatewaySecrets
from gateway.telemetry.metrics import GatewayMetrics
from gateway.tenancy.authenticator import KeyAuthenticator
from gateway.tenancy.key_changes import KeyChangeListener
from gateway.tenancy.login_throttle import LoginThrottle
from gateway.tenancy.repository import TenantRepository
from gateway.types import RouteRequest, TenantContext


class Probe(Protocol):
    """One dependency's readiness: returns when it answered, raises when it did not."""

    async def ping(self) -> None: ...


class RouteExplainer(Protocol):
    """What the running gateway would do with a request, and why (routing/explain.py, bound
    to the live classifier, policy and fleet)."""

    async def explain(self, tenant: TenantContext, request: RouteRequest) -> dict[str, Any]: ...


class CapacitySection(Protocol):
    """The report page's capacity section (GPUs each deployment's busiest minute needs)."""

    async def section(self, policy: PolicySet, start: datetime, end: datetime) -> str: ...


@dataclass(frozen=True, slots=True)
class EdgeLimits:
    """The settings the HTTP edge applies itself (handlers never read Settings)."""

    max_body_bytes: int
    body_read_timeout_s: float
    key_cache_ttl_s: float  # how late a revocation may apply without the push channel


@dataclass(slots=True)
class Components:
    edge: EdgeLimits
    secrets: GatewaySecrets  # the admin and metrics keys, re-read when their files change
    tenants: TenantRepository
    authenticator: KeyAuthenticator
    policy: PolicyStore
    fleet: FleetState
    audit: AuditWriter
    admin_log: AdminLog
    routing: RoutingService
    classifier: RequestClassifier
    metrics: GatewayMetrics
    budget_store: BudgetStore
    limits: LimitsResolver
    limits_repo: LimitsRepository
    reports: ReportReader
    outcomes: OutcomeRepository  # feedback and shadow judgements
    capacity: CapacitySection
    explainer: RouteExplainer
    database: Probe
    redis: Probe | None = None  # None without GATEWAY_REDIS_URL: budgets in memory
    key_changes: KeyChangeListener | None = None  # None on SQLite: no push channel
    responses: ResponseRepository | None = None  # stored Responses API responses
    shadow: ShadowJudge | None = None
    login_throttle: LoginThrottle = field(default_factory=LoginThrottle)  # wrong admin keys
