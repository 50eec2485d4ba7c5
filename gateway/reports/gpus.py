"""What self-hosted GPUs each report charges for: the deployments the policy declares (as the
gateway records them when a policy comes into force), and the spans the record holds."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from sqlalchemy.ext.asyncio import AsyncConnection

from gateway.budget.pricing import MICRO_PER_USD
from gateway.deployments.repository import (
    DeclaredGpus,
    PaidSpan,
    first_traffic,
    paid_spans,
    recorded_backends,
)
from gateway.policy.loader import PolicySet


def declared_gpus(policy: PolicySet) -> list[DeclaredGpus]:
    """Every backend with a `gpu:` block, priced for the whole deployment."""
    declared = []
    for name, backend in sorted(policy.backends.items()):
        engine = backend.engine
        if engine is not None and engine.gpu_hourly_usd is not None:
            declared.append(DeclaredGpus(name, round(engine.gpu_hourly_usd * MICRO_PER_USD),
                                         engine.gpu_count or 1))
    return declared


async def spans_for(conn: AsyncConnection, declared: Sequence[DeclaredGpus], start: datetime,
                    end: datetime) -> list[PaidSpan]:
    """The recorded spans overlapping [start, end). A deployment the policy declares but the
    record has never seen (the gateway has not run since migration 0005, or a report of a
    policy that never ran) is charged from its first traffic on, never before."""
    spans = await paid_spans(conn, start, end)
    known = await recorded_backends(conn)
    missing = [d for d in declared if d.backend not in known]
    first = await first_traffic(conn, [d.backend for d in missing])
    for d in missing:
        since = first.get(d.backend)
        if since is not None and since < end:
            spans.append(PaidSpan(d.backend, since, None, d.hourly_micro_usd, d.gpu_count))
    return spans
