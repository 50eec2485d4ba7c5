"""The long-lived parts of a running gateway, built once by the composition root (app.py)."""

from __future__ import annotations

from dataclasses import dataclass

from redis.asyncio import Redis
from sqlalchemy.ext.asyncio import AsyncEngine

from gateway.audit.outcomes import OutcomeRepository
from gateway.audit.writer import AuditWriter
from gateway.budget.limits_repository import LimitsRepository
from gateway.budget.store import BudgetStore
from gateway.classify.profiler import RequestClassifier
from gateway.conversations.repository import ResponseRepository
from gateway.policy.store import PolicyStore
from gateway.routing.limits import LimitsResolver
from gateway.routing.service import RoutingService
from gateway.routing.shadow import ShadowJudge
from gateway.scraper.fleet import FleetState
from gateway.secret_files import GatewaySecrets
from gateway.settings import Settings
from gateway.telemetry.metrics import GatewayMetrics
from gateway.tenancy.authenticator import KeyAuthenticator
from gateway.tenancy.key_changes import KeyChangeListener
from gateway.tenancy.repository import TenantRepository


@dataclass(slots=True)
class Components:
    settings: Settings
    secrets: GatewaySecrets  # the admin and metrics keys, re-read when their files change
    engine: AsyncEngine
    tenants: TenantRepository
    authenticator: KeyAuthenticator
    policy: PolicyStore
    fleet: FleetState
    audit: AuditWriter
    routing: RoutingService
    classifier: RequestClassifier
    metrics: GatewayMetrics
    budget_store: BudgetStore
    limits: LimitsResolver
    limits_repo: LimitsRepository
    redis: Redis | None = None
    key_changes: KeyChangeListener | None = None  # None on SQLite: no push channel
    responses: ResponseRepository | None = None  # stored Responses API responses
    outcomes: OutcomeRepository | None = None  # feedback and shadow judgements
    shadow: ShadowJudge | None = None
