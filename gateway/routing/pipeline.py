"""Steps 1 to 2 of the request path as one call: classify under the request's policy, add
the engines' own prompt counts where the policy asks for them (1b), and decide on one fleet
snapshot with the tenant's soft-budget flag. The routing service and explain both route
here, so what explain says is what the gateway does."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from gateway.classify.router_registry import FittedRouters
from gateway.policy.engine import decide_for
from gateway.policy.runtime import Profiler, RequestPolicy
from gateway.routing.engine_counts import EngineCounter, with_engine_counts
from gateway.routing.trace import Route
from gateway.telemetry.tracing import NO_SPANS, Spans
from gateway.types import FleetSnapshot, Profile, RouteRequest, TenantContext


class FleetView(Protocol):
    def snapshot(self) -> FleetSnapshot: ...


class SoftLimits(Protocol):
    """Whether a tenant's last admission crossed a soft budget limit (the budget gate)."""

    def over_soft_limit(self, tenant_id: str) -> bool: ...


class NoSoftLimits:
    """Offline (`gateway policy explain`): no budget store, so no tenant is over a limit."""

    def over_soft_limit(self, tenant_id: str) -> bool:
        return False


@dataclass(frozen=True, slots=True)
class FixedFleet:
    """One snapshot for every decision (offline explain: the fleet as given, or empty)."""

    fleet: FleetSnapshot

    def snapshot(self) -> FleetSnapshot:
        return self.fleet


@dataclass(frozen=True, slots=True)
class Routed:
    """What classify → count → decide found: the profile always, and the route or what
    refused one (kept until `route()`, so the caller chooses where a refusal surfaces)."""

    profile: Profile
    fleet: FleetSnapshot
    over_soft_limit: bool
    decided: Route | None
    refusal: Exception | None = None

    def route(self) -> Route:
        if self.refusal is not None:
            raise self.refusal
        assert self.decided is not None
        return self.decided


class RoutePipeline:
    def __init__(self, classifier: Profiler, fleet: FleetView,
                 soft_limits: SoftLimits | None = None, counter: EngineCounter | None = None,
                 routers: FittedRouters | None = None) -> None:
        self._classifier = classifier
        self._fleet = fleet
        self._soft_limits = soft_limits or NoSoftLimits()
        self._counter = counter  # None: engines are never asked (offline, or not wired)
        self.routers = routers or FittedRouters()  # the `router:` models the policy names
        self._turn = 0  # equal candidates take turns, one turn per routed request

    async def route(self, plan: RequestPolicy, tenant: TenantContext, request: RouteRequest,
                    spans: Spans = NO_SPANS, *, take_turn: bool = True) -> Routed:
        """`take_turn=False` (explain) decides with the turn the next request will get,
        and leaves it to that request."""
        profile = spans.classified(await plan.classify(  # 1 classify
            self._classifier, request, self.routers.get(plan.router)))
        profile = await with_engine_counts(profile, request, plan, self._counter)  # 1b count
        fleet = self._fleet.snapshot()
        over_soft_limit = self._soft_limits.over_soft_limit(tenant.tenant_id)
        turn = self._turn
        if take_turn:
            self._turn += 1
        try:
            decision = decide_for(plan, request, profile, fleet, turn, over_soft_limit)  # 2
        except Exception as exc:  # a refusal, or a bug: raised by route() where the caller asks
            return Routed(profile, fleet, over_soft_limit, None, exc)
        return Routed(profile, fleet, over_soft_limit,
                      Route(spans.decided(decision), fleet, over_soft_limit))
