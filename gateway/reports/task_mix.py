"""The route mix by task type: for each task the classifier saw (code, math, chat, ...), how
many requests went to each backend and zone, the share kept self-hosted, the mean p_strong
and what they cost. Read from the audit log itself (the task is in each row's trace, not in
the daily rollups), so it suits days and weeks rather than years."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from gateway.reports.render import Column, Kind, ReportTable

NO_TASK = "(none)"  # embeddings, requests before task types existed, classifier off
SELF_HOSTED = "self_hosted"


@dataclass(frozen=True, slots=True)
class TaskRoute:
    """One (task, backend, zone) group of audit rows."""

    task: str
    backend: str  # "" when no backend was chosen (refused requests)
    zone: str
    requests: int
    p_strong_sum: float
    p_strong_count: int
    cost_micro_usd: int


COLUMNS = (
    Column("task"), Column("backend"), Column("zone"), Column("requests", Kind.COUNT),
    Column("share_of_task", Kind.RATIO), Column("mean_p_strong", Kind.RATIO),
    Column("cost_usd", Kind.USD),
)


def task_mix_table(routes: Sequence[TaskRoute],
                   meta: tuple[tuple[str, str | None], ...]) -> ReportTable:
    """Tasks by request count (most first), each task's backends by count; one summary
    line per task says how much of it stayed self-hosted (meta `self_hosted_share:TASK`)."""
    per_task: dict[str, int] = {}
    home: dict[str, int] = {}
    for r in routes:
        per_task[r.task] = per_task.get(r.task, 0) + r.requests
        if r.zone == SELF_HOSTED:
            home[r.task] = home.get(r.task, 0) + r.requests
    ordered = sorted(routes, key=lambda r: (-per_task[r.task], r.task, -r.requests, r.backend))
    rows = tuple(
        (r.task, r.backend, r.zone, r.requests, r.requests / per_task[r.task],
         r.p_strong_sum / r.p_strong_count if r.p_strong_count else None, r.cost_micro_usd)
        for r in ordered
    )
    requests = sum(per_task.values())
    totals = ("total", "", "", requests, 1.0 if requests else None, None,
              sum(r.cost_micro_usd for r in routes))
    shares = tuple((f"self_hosted_share:{task}", f"{home.get(task, 0) / count:.4f}")
                   for task, count in sorted(per_task.items(), key=lambda kv: -kv[1]))
    return ReportTable("routes", COLUMNS, rows, totals, (*meta, *shares))
