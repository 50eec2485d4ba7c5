"""Traffic by entry point (chat, completions, embeddings, messages, responses): requests,
errors, tokens and cost per API the clients called. Read from the audit log itself (the entry
point is in each row's trace), so it suits days and weeks rather than years."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy import BigInteger, cast, func, select
from sqlalchemy.ext.asyncio import AsyncConnection

from gateway.db.audit_tables import audit_log
from gateway.reports.periods import Period
from gateway.reports.render import Column, Kind, ReportTable

# Rows written before the entry point was recorded: their endpoint is the best answer there
# is (a /v1/messages or /v1/responses request of that time reads as chat).
_OLD_ROWS = {"chat/completions": "chat", "chat.completions": "chat"}


@dataclass(frozen=True, slots=True)
class EntryTraffic:
    entry_point: str
    requests: int
    errors: int
    prompt_tokens: int
    completion_tokens: int
    cost_micro_usd: int


def entry_point_of(api: str | None, endpoint: str) -> str:
    """The recorded entry point, or for an older row the one its endpoint implies."""
    return api or _OLD_ROWS.get(endpoint, endpoint)


async def entry_traffic(conn: AsyncConnection, period: Period,
                        tenant_id: str | None = None) -> list[EntryTraffic]:
    a = audit_log.c
    api = a.trace["api"].as_string()  # ->> on Postgres, JSON_EXTRACT on SQLite
    total = func.count()
    errors = func.count().filter(a.status >= 400)  # as the daily rollups count them
    query = (
        select(api.label("api"), a.endpoint, total.label("requests"), errors.label("errors"),
               cast(func.coalesce(func.sum(a.prompt_tokens), 0), BigInteger).label("prompt"),
               cast(func.coalesce(func.sum(a.completion_tokens), 0), BigInteger).label("done"),
               cast(func.coalesce(func.sum(a.cost_micro_usd), 0), BigInteger).label("cost"))
        .where(a.ts >= period.since, a.ts < period.until)
        .group_by(api, a.endpoint)
    )
    if tenant_id is not None:
        query = query.where(a.tenant_id == tenant_id)
    merged: dict[str, list[int]] = {}
    for r in (await conn.execute(query)).all():
        sums = merged.setdefault(entry_point_of(r.api, r.endpoint), [0, 0, 0, 0, 0])
        for i, value in enumerate((r.requests, r.errors, r.prompt, r.done, r.cost)):
            sums[i] += int(value)
    return [EntryTraffic(name, *sums) for name, sums in merged.items()]


COLUMNS = (
    Column("entry_point"), Column("requests", Kind.COUNT), Column("errors", Kind.COUNT),
    Column("prompt_tokens", Kind.COUNT), Column("completion_tokens", Kind.COUNT),
    Column("cost_usd", Kind.USD),
)


def entry_mix_table(traffic: Sequence[EntryTraffic],
                    meta: tuple[tuple[str, str | None], ...]) -> ReportTable:
    """Entry points by request count, most first, with a total line."""
    ordered = sorted(traffic, key=lambda t: (-t.requests, t.entry_point))
    rows = tuple((t.entry_point, t.requests, t.errors, t.prompt_tokens, t.completion_tokens,
                  t.cost_micro_usd) for t in ordered)
    totals = ("total", *(sum(r[i] for r in rows) for i in range(1, 6)))
    return ReportTable("apis", COLUMNS, rows, totals, meta)
