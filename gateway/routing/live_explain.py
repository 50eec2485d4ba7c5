"""`POST /admin/policy/explain` against the running gateway: its classifier, the policy in
force and the fleet as it is now, through the same explain as `gateway policy explain`."""

from __future__ import annotations

from typing import Any

from gateway.classify.profiler import RequestClassifier
from gateway.classify.router_registry import FittedRouters
from gateway.policy.store import PolicyStore
from gateway.routing.explain import explain
from gateway.scraper.fleet import FleetState
from gateway.types import RouteRequest, TenantContext


class LiveExplainer:
    def __init__(self, classifier: RequestClassifier, policy: PolicyStore,
                 fleet: FleetState, routers: FittedRouters | None = None) -> None:
        self._classifier = classifier
        self._routers = routers
        self._policy = policy
        self._fleet = fleet

    async def explain(self, tenant: TenantContext, request: RouteRequest) -> dict[str, Any]:
        return await explain(self._classifier, self._policy.current, tenant, request,
                             self._fleet.snapshot(), self._routers)
