"""All SQL for judged outcomes (request_outcomes): a tenant's feedback, shadow judgements,
the shadow budget's spend and the cost report's shadow line, and the outcomes a router is
fitted on, on Postgres or SQLite."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from gateway.db.audit_tables import audit_content, audit_log
from gateway.db.dialect import dialect_insert
from gateway.db.outcome_tables import FEEDBACK, SHADOW, request_outcomes


@dataclass(frozen=True, slots=True)
class Judgement:
    """A shadow judgement: the served (cheaper) answer and the strong backend's, scored 0-1."""

    request_id: str
    tenant_id: str
    served_backend: str
    strong_backend: str
    judge_backend: str
    weak_score: float | None  # None: a call or the verdict failed (the cost still counts)
    strong_score: float | None
    cost_micro_usd: int


@dataclass(frozen=True, slots=True)
class StoredOutcome:
    """One stored outcome with what training needs from its request: the prompt (only where
    the tenant stores content) and the backend that served it."""

    request_id: str
    source: str
    prompt: str | None
    backend: str | None
    score: float | None
    weak_score: float | None
    strong_score: float | None
    strong_backend: str | None


class OutcomeRepository:
    def __init__(self, engine: AsyncEngine) -> None:
        self._engine = engine

    async def request_tenant(self, request_id: str) -> str | None:
        """The tenant id of a request whose audit row is in the database, else None."""
        async with self._engine.connect() as conn:
            return await conn.scalar(  # type: ignore[no-any-return]
                select(audit_log.c.tenant_id).where(audit_log.c.request_id == request_id)
                .limit(1))

    async def save_feedback(self, request_id: str, tenant_id: str, score: float,
                            label: str | None) -> None:
        """The latest feedback on a request replaces the earlier one."""
        row = {"request_id": request_id, "source": FEEDBACK, "tenant_id": tenant_id,
               "ts": datetime.now(UTC), "score": score, "label": label}
        async with self._engine.begin() as conn:
            stmt = dialect_insert(conn, request_outcomes).values(row)
            await conn.execute(stmt.on_conflict_do_update(
                index_elements=["request_id", "source"],
                set_={"ts": stmt.excluded.ts, "score": stmt.excluded.score,
                      "label": stmt.excluded.label}))

    async def save_judgement(self, judgement: Judgement) -> None:
        row = {"request_id": judgement.request_id, "source": SHADOW,
               "tenant_id": judgement.tenant_id, "ts": datetime.now(UTC),
               "served_backend": judgement.served_backend,
               "strong_backend": judgement.strong_backend,
               "judge_backend": judgement.judge_backend,
               "weak_score": judgement.weak_score, "strong_score": judgement.strong_score,
               "cost_micro_usd": judgement.cost_micro_usd}
        async with self._engine.begin() as conn:
            await conn.execute(dialect_insert(conn, request_outcomes).values(row)
                               .on_conflict_do_nothing())

    async def shadow_spend_micro_usd(self, since: datetime) -> int:
        """What shadow judging has cost since then (all tenants: one budget)."""
        async with self._engine.connect() as conn:
            total = await conn.scalar(
                select(func.coalesce(func.sum(request_outcomes.c.cost_micro_usd), 0))
                .where(request_outcomes.c.source == SHADOW, request_outcomes.c.ts >= since))
        return int(total or 0)

    async def stored_outcomes(self, tenant_id: str, since: datetime) -> list[StoredOutcome]:
        """The tenant's outcomes since then, oldest first, each with its stored prompt."""
        o = request_outcomes
        query = (
            select(o.c.request_id, o.c.source, o.c.score, o.c.weak_score, o.c.strong_score,
                   o.c.served_backend, o.c.strong_backend, audit_content.c.prompt,
                   audit_log.c.backend)
            .select_from(
                o.outerjoin(audit_content, audit_content.c.request_id == o.c.request_id)
                .outerjoin(audit_log, audit_log.c.request_id == o.c.request_id))
            .where(o.c.tenant_id == tenant_id, o.c.ts >= since)
            .order_by(o.c.ts, o.c.request_id, o.c.source)
        )
        async with self._engine.connect() as conn:
            rows = (await conn.execute(query)).all()
        return [StoredOutcome(r.request_id, r.source, r.prompt,
                              r.backend or r.served_backend, r.score, r.weak_score,
                              r.strong_score, r.strong_backend) for r in rows]


async def prompts_and_judgements(
    engine: AsyncEngine, request_ids: list[str],
) -> tuple[dict[str, str], dict[str, tuple[float, float]]]:
    """For a page of requests: the stored prompts, and the (weak, strong) scores of those
    with a shadow judgement (replay with another router reads these)."""
    if not request_ids:
        return {}, {}
    o = request_outcomes
    async with engine.connect() as conn:
        prompts = {r.request_id: r.prompt for r in await conn.execute(
            select(audit_content.c.request_id, audit_content.c.prompt)
            .where(audit_content.c.request_id.in_(request_ids)))}
        judged = {r.request_id: (r.weak_score, r.strong_score) for r in await conn.execute(
            select(o.c.request_id, o.c.weak_score, o.c.strong_score)
            .where(o.c.request_id.in_(request_ids), o.c.source == SHADOW,
                   o.c.weak_score.is_not(None), o.c.strong_score.is_not(None)))}
    return prompts, judged


async def shadow_judging_totals(conn: AsyncConnection, since: datetime,
                                until: datetime) -> tuple[int, int]:
    """(judgements attempted, micro-USD their calls cost) with since <= ts < until."""
    o = request_outcomes
    found = (await conn.execute(
        select(func.count(), func.coalesce(func.sum(o.c.cost_micro_usd), 0))
        .where(o.c.source == SHADOW, o.c.ts >= since, o.c.ts < until)
    )).one()
    return int(found[0]), int(found[1])
