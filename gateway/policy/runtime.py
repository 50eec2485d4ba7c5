"""The compiled policy the gateway runs on (`PolicySet`), and `RequestPolicy`: everything one
request needs from it, looked up once per request (cached per tenant, model, endpoint, tags
and max_tokens) and carried through classify, decide, reserve, dispatch, settle and record.

Nothing here is re-validated or re-parsed per request: lookups are dict hits.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any, Protocol

from gateway.policy.capacity import TelemetryPolicy
from gateway.policy.rules import Rule
from gateway.policy.schema import TenantSpec
from gateway.policy.simulation import SimulatorLaunch
from gateway.policy.tenants import TenantPolicy
from gateway.policy.token_counting import REFERENCE_ENCODING, extra_encodings, window_threshold
from gateway.types import (
    Backend,
    Endpoint,
    PricePerMTok,
    Profile,
    RouteRequest,
    TenantContext,
    TenantDetector,
)

MAX_CACHED_PLANS = 10_000  # bounded: model names and tags come from clients


class PoolStrategy(StrEnum):
    """How a model pool orders its backends (ModelPoolSpec.strategy, same spellings)."""

    LOAD_AWARE = "load_aware"
    ROUND_ROBIN = "round_robin"
    LEAST_IN_FLIGHT = "least_in_flight"
    PRIORITY = "priority"  # as listed: not balanced


@dataclass(frozen=True, slots=True)
class Pool:
    backends: tuple[Backend, ...]
    strategy: PoolStrategy = PoolStrategy.LOAD_AWARE


@dataclass(frozen=True, slots=True)
class Baseline:
    """The price every request is compared with in savings reports."""

    name: str
    price: PricePerMTok


@dataclass(frozen=True, slots=True)
class Shadow:
    """The policy's `shadow:` block (ShadowSpec) with its backends resolved at load."""

    sample: float  # share of eligible requests judged
    strong: Backend  # whose answer is the reference
    judge: Backend  # scores both answers
    daily_usd: float  # the most shadow judging may cost per UTC day


@dataclass(frozen=True, slots=True)
class Routers:
    """Which fitted router (a `gateway router fit` directory) scores a request's complexity:
    the tenant's, else the model group's, else none (the shipped model)."""

    by_tenant: Mapping[str, Path] = field(default_factory=dict)
    by_model: Mapping[str, Path] = field(default_factory=dict)

    def choose(self, tenant: str, model: str) -> Path | None:
        return self.by_tenant.get(tenant) or self.by_model.get(model)

    def directories(self) -> frozenset[Path]:
        return frozenset((*self.by_tenant.values(), *self.by_model.values()))


class ComplexityScorer(Protocol):
    """A fitted router (classify/'s RouterModel), as far as the policy cares: it scores in
    place of the shipped complexity model, with its own low/medium/high cut-offs."""

    @property
    def thresholds(self) -> tuple[float, float]: ...


class Profiler(Protocol):
    """What profiles a request (classify/'s RequestClassifier), as far as the policy cares."""

    async def profile(
        self,
        request: RouteRequest,
        thresholds: Sequence[int] = (),
        *,
        detectors: tuple[TenantDetector, ...] = (),
        other_encodings: Sequence[tuple[str, Sequence[int]]] = (),
        min_confidence: float = 0.0,
        **complexity: Any,
    ) -> Profile: ...


@dataclass(frozen=True, slots=True)
class RequestPolicy:
    """What the policy says about one kind of request (tenant, model, endpoint, tags,
    max_tokens): one value per request, the same object for every request of that kind."""

    policy: PolicySet  # the policy in force when the request arrived, to its end
    tenant_name: str
    tenant: TenantPolicy
    model_allowed: bool  # the tenant may use the requested model
    pool: Pool | None  # the requested model's backends (None: no such model)
    rules: tuple[Rule, ...]  # the rules whose identity conditions hold, in order
    # Prompt sizes where a routing decision changes (exact counting only matters near them),
    # in o200k and in each other encoding a backend of the pool counts in.
    token_thresholds: tuple[int, ...]
    other_encodings: tuple[tuple[str, tuple[int, ...]], ...]
    known_model: bool  # a pool or backend the policy defines (kept as sent in the audit row)
    router: Path | None = None  # the fitted router the policy names for this tenant or model

    async def classify(self, profiler: Profiler, request: RouteRequest,
                       router: ComplexityScorer | None = None) -> Profile:
        """Step 1 under this policy: tokens (exact only near the thresholds where the route
        changes, in every encoding the pool counts in), complexity, and what the tenant's
        detectors find. The live path, explain and the offline wing all classify here."""
        tenant = self.tenant
        # `router`: the loaded form of `self.router`, where the policy names one.
        complexity = ({} if router is None else
                      {"complexity_model": router, "complexity_thresholds": router.thresholds})
        return await profiler.profile(
            request, self.token_thresholds, detectors=tenant.detectors,
            other_encodings=self.other_encodings, min_confidence=tenant.min_confidence,
            **complexity,
        )


@dataclass(frozen=True, slots=True)
class PolicySet:
    """The runtime form the router reads: lookups are dict hits, nothing is re-validated."""

    backends: dict[str, Backend]
    pools: dict[str, Pool]
    tenant_models: dict[str, frozenset[str]] = field(default_factory=dict)
    simulators: dict[str, SimulatorLaunch] = field(default_factory=dict)  # the demo's
    source: str = "<memory>"
    rules: tuple[Rule, ...] = ()
    telemetry: TelemetryPolicy = field(default_factory=TelemetryPolicy)
    # The tenants as written, for operators' views (admin API, CLI); the request path reads
    # `tenants`, their compiled form.
    tenant_specs: dict[str, TenantSpec] = field(default_factory=dict)
    baseline: Baseline | None = None  # what savings are measured against
    tenants: dict[str, TenantPolicy] = field(default_factory=dict)  # compiled: see tenants.py
    # Every tenant the policy does not name: sensitivity.allow and min_confidence as set.
    default_tenant: TenantPolicy = field(default_factory=TenantPolicy)
    shadow: Shadow | None = None  # shadow judging (routing/shadow.py)
    routers: Routers = field(default_factory=Routers)  # `router:` directories
    # (model, tenant, endpoint, tags) → the rules whose identity conditions hold: most rules
    # name a tenant, model, endpoint or tag, so per request few need their content checked.
    _applicable: dict[tuple[str, str, str, tuple[str, ...]], tuple[Rule, ...]] = field(
        default_factory=dict, repr=False, compare=False
    )
    _plans: dict[tuple[str, str, Endpoint, tuple[str, ...], int | None], RequestPolicy] = (
        field(default_factory=dict, repr=False, compare=False)
    )

    def for_request(self, tenant: TenantContext, request: RouteRequest) -> RequestPolicy:
        """Everything this request needs from the policy, in one value (computed once per
        kind of request, then a dict hit)."""
        key = (tenant.tenant_name, request.model, request.endpoint, request.tags,
               request.max_output_tokens)
        plan = self._plans.get(key)
        if plan is None:
            if len(self._plans) >= MAX_CACHED_PLANS:
                self._plans.clear()
            plan = self._plans[key] = self._plan(*key)
        return plan

    def _plan(self, tenant_name: str, model: str, endpoint: Endpoint, tags: tuple[str, ...],
              max_output_tokens: int | None) -> RequestPolicy:
        tenant = self.tenant(tenant_name)
        return RequestPolicy(
            policy=self,
            tenant_name=tenant_name,
            tenant=tenant,
            model_allowed=tenant.models is None or model in tenant.models,
            pool=self.pool(model),
            rules=self.applicable_rules(model, tenant_name, endpoint.value, tags),
            token_thresholds=self.token_thresholds(model, max_output_tokens),
            other_encodings=self.other_encodings(model, max_output_tokens),
            known_model=model in self.pools or model in self.backends,
            router=self.routers.choose(tenant_name, model),
        )

    def tenant(self, name: str) -> TenantPolicy:
        """The tenant's compiled settings (the defaults for a tenant the policy names not)."""
        return self.tenants.get(name, self.default_tenant)

    def applicable_rules(
        self, model: str, tenant: str, endpoint: str, tags: tuple[str, ...] = ()
    ) -> tuple[Rule, ...]:
        key = (model, tenant, endpoint, tags)
        found = self._applicable.get(key)
        if found is None:
            if len(self._applicable) >= MAX_CACHED_PLANS:
                self._applicable.clear()
            found = tuple(r for r in self.rules if r.applies_to(model, tenant, endpoint, tags))
            self._applicable[key] = found
        return found

    def tenant_detectors(self, tenant: str) -> tuple[TenantDetector, ...]:
        """The tenant's own sensitivity detectors and the values allowed for it (empty for
        most tenants)."""
        return self.tenant(tenant).detectors

    def min_confidence(self, tenant: str) -> float:
        """Findings below this confidence do not make the tenant's requests sensitive."""
        return self.tenant(tenant).min_confidence

    def public_models(self) -> list[str]:
        """Names a client may send: virtual pools first, then every backend by name."""
        return [*self.pools, *(n for n in self.backends if n not in self.pools)]

    def token_thresholds(self, model: str, max_output_tokens: int | None) -> tuple[int, ...]:
        """Prompt sizes at which some routing decision for this model changes: each candidate's
        context window less the requested output. Token counting only needs to be exact when
        one of these could be crossed."""
        pool = self.pool(model)
        if pool is None:
            return ()
        reserve = max_output_tokens or 0
        return tuple(sorted({window_threshold(b, reserve) for b in pool.backends
                             if b.token_encoding in (None, REFERENCE_ENCODING)}))

    def other_encodings(
        self, model: str, max_output_tokens: int | None
    ) -> tuple[tuple[str, tuple[int, ...]], ...]:
        """Encodings besides o200k that backends of this model's pool count in exactly (cl100k
        for older OpenAI models), each with its thresholds in that encoding."""
        pool = self.pool(model)
        if pool is None:
            return ()
        reserve = max_output_tokens or 0
        return tuple(
            (encoding, tuple(sorted({window_threshold(b, reserve) for b in pool.backends
                                     if b.token_encoding == encoding})))
            for encoding in extra_encodings(pool.backends)
        )

    def metrics_targets(self) -> dict[str, str]:
        """Backend name → Prometheus URL, for every backend whose engine is scraped."""
        return {n: b.engine.metrics_url for n, b in self.backends.items()
                if b.engine is not None and b.engine.metrics_url}

    def dcgm_targets(self) -> dict[str, str]:
        """Backend name → DCGM exporter URL, for deployments whose GPUs are watched."""
        return {n: b.engine.dcgm_url for n, b in self.backends.items()
                if b.engine is not None and b.engine.dcgm_url}

    def pool(self, model: str) -> Pool | None:
        found = self.pools.get(model)
        if found is not None:
            return found
        backend = self.backends.get(model)
        return Pool((backend,)) if backend is not None else None
