"""`POST /admin/policy/explain` against the running gateway: its classifier, the policy in
force, and the routing service's own pipeline (the fleet as it is now, the engines' counts,
the budget gate's soft-limit flags), through the same explain as `gateway policy explain`."""

from __future__ import annotations

from typing import Any

from gateway.classify.profiler import RequestClassifier
from gateway.routing.explain import explain_route
from gateway.routing.pipeline import RoutePipeline
from gateway.routing.seams import PolicySource
from gateway.types import RouteRequest, TenantContext


class LiveExplainer:
    def __init__(self, classifier: RequestClassifier, policy: PolicySource,
                 pipeline: RoutePipeline) -> None:
        self._classifier = classifier
        self._policy = policy
        self._pipeline = pipeline

    async def explain(self, tenant: TenantContext, request: RouteRequest) -> dict[str, Any]:
        plan = self._policy.current.for_request(tenant, request)
        return await explain_route(self._pipeline, self._classifier, plan, tenant, request)
