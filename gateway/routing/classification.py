"""Step 1, classify: a request's profile under the policy that applies to it. The live path
and `policy explain` both profile here, so explain says what the gateway would do."""

from __future__ import annotations

from gateway.policy.runtime import RequestPolicy
from gateway.routing.seams import Classifier
from gateway.types import Profile, RouteRequest


async def classify(classifier: Classifier, plan: RequestPolicy, request: RouteRequest) -> Profile:
    """Tokens (exact only near the thresholds where the route changes, in every encoding the
    pool counts in), complexity and the sensitive spans the tenant's detectors find."""
    tenant = plan.tenant
    return await classifier.profile(
        request, plan.token_thresholds, detectors=tenant.detectors,
        other_encodings=plan.other_encodings, min_confidence=tenant.min_confidence,
    )
