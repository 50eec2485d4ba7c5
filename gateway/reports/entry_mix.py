"""Traffic by entry point (chat, completions, embeddings, messages, responses): requests,
errors, tokens and cost per API the clients called. Read from the audit log itself (the entry
point is in each row's trace), so it suits days and weeks rather than years."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

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
