"""decide(): a pure function from (profile, tenant, fleet, policy) to a route and its reasons.

The order of candidates is the policy's; `rotation` spreads load round-robin across the
healthy members of a pool. Unhealthy members are not dropped: they go last, so a fleet whose
breakers are all open still gets a try instead of a certain error.
"""

from __future__ import annotations

from gateway.errors import ModelNotFound, NoEligibleBackend, PermissionDenied
from gateway.policy.loader import PolicySet
from gateway.types import (
    Backend,
    FleetSnapshot,
    Profile,
    Rejection,
    RouteDecision,
    RouteRequest,
    TenantContext,
)

POOL_RULE = "model-pool"


def decide(
    request: RouteRequest,
    profile: Profile,
    tenant: TenantContext,
    fleet: FleetSnapshot,
    policy: PolicySet,
    rotation: int = 0,
) -> RouteDecision:
    allowed = policy.tenant_models.get(tenant.tenant_name)
    if allowed is not None and request.model not in allowed:
        raise PermissionDenied(
            f"tenant {tenant.tenant_name!r} may not use model {request.model!r}",
            param="model",
            code="model_not_allowed",
        )
    pool = policy.pool(request.model)
    if pool is None:
        raise ModelNotFound(
            f"The model '{request.model}' does not exist or you do not have access to it.",
            param="model",
        )

    rejected: list[Rejection] = []
    fits: list[Backend] = []
    needed = profile.prompt_tokens + (profile.max_output_tokens or 0)
    for backend in pool.backends:
        if profile.prompt_tokens > backend.context_window or needed > backend.context_window:
            rejected.append(
                Rejection(
                    backend.name,
                    f"context_window {backend.context_window} < prompt {profile.prompt_tokens}"
                    f" + max_tokens {profile.max_output_tokens or 0}",
                )
            )
            continue
        fits.append(backend)
    if not fits:
        raise NoEligibleBackend(
            f"no backend for model '{request.model}' can serve this request: "
            + "; ".join(f"{r.backend}: {r.reason}" for r in rejected),
            code="context_length_exceeded",
            status=400,
            error_type="invalid_request_error",
        )

    healthy = [b for b in fits if fleet.is_healthy(b.name)]
    sick = [b for b in fits if not fleet.is_healthy(b.name)]
    rejected.extend(Rejection(b.name, "unhealthy: circuit open") for b in sick)
    if healthy and pool.round_robin:
        start = rotation % len(healthy)
        ordered = healthy[start:] + healthy[:start] + sick
    else:
        ordered = healthy + sick
    return RouteDecision(
        primary=ordered[0], fallbacks=tuple(ordered[1:]), rule=POOL_RULE, rejected=tuple(rejected)
    )
