"""The judged prompts a router is fitted on, from what the gateway stored itself: shadow
judgements (both answers scored) and tenant feedback (the served answer scored), joined to
the prompts kept for tenants that store content (`store_content`).

A shadow judgement gives both scores. Feedback scores one side, the backend that served
(the strong side when it is the strong backend, else the weak side); the other side is
estimated by the mean score that side received in the same outcomes (feedback and shadow
alike), and a request with feedback and a judgement takes the person's score for the side
that served. A prompt that was not stored cannot be fitted on and is counted, not used.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from datetime import datetime
from statistics import fmean

from sqlalchemy.ext.asyncio import AsyncEngine

from gateway.db.outcome_tables import FEEDBACK, SHADOW
from gateway.offline.training.router_fit import JudgedPrompt
from gateway.outcomes.repository import OutcomeRepository, StoredOutcome


@dataclass(frozen=True, slots=True)
class AuditOutcomes:
    prompts: list[JudgedPrompt]
    strong_backend: str | None
    from_shadow: int  # prompts with a judgement (feedback may have replaced one side)
    from_feedback: int  # prompts with feedback only (the other side estimated)
    without_prompt: int  # outcomes whose request's prompt was not stored
    unusable: int  # failed judgements, or feedback with no estimate for the other side


async def outcomes_from_audit(engine: AsyncEngine, tenant_id: str, since: datetime,
                              strong_backend: str | None = None) -> AuditOutcomes:
    rows = await OutcomeRepository(engine).stored_outcomes(tenant_id, since)
    return judged_prompts(rows, strong_backend)


def judged_prompts(rows: list[StoredOutcome], strong_backend: str | None) -> AuditOutcomes:
    """Pure: stored outcomes → judged prompts, by the rules in the module's docstring."""
    strong = strong_backend or _usual_strong(rows)
    by_request: dict[str, dict[str, StoredOutcome]] = {}
    for row in rows:
        by_request.setdefault(row.request_id, {})[row.source] = row
    weak_seen, strong_seen = _observed(rows, strong)
    weak_mean = fmean(weak_seen) if weak_seen else None
    strong_mean = fmean(strong_seen) if strong_seen else None
    prompts: list[JudgedPrompt] = []
    shadowed = feedback_only = without_prompt = unusable = 0
    for sources in by_request.values():
        any_row = next(iter(sources.values()))
        if any_row.prompt is None:
            without_prompt += 1
            continue
        judged, said = sources.get(SHADOW), sources.get(FEEDBACK)
        weak = strong_score = None
        if judged is not None and judged.weak_score is not None:
            weak, strong_score = judged.weak_score, judged.strong_score
        if said is not None and said.score is not None:
            served_strong = strong is not None and said.backend == strong
            if served_strong:
                strong_score = said.score
                weak = weak if weak is not None else weak_mean
            else:
                weak = said.score
                strong_score = strong_score if strong_score is not None else strong_mean
        if weak is None or strong_score is None:
            unusable += 1
            continue
        prompts.append(JudgedPrompt(any_row.prompt, weak, strong_score))
        if judged is not None and judged.weak_score is not None:
            shadowed += 1
        else:
            feedback_only += 1
    return AuditOutcomes(prompts, strong, shadowed, feedback_only, without_prompt, unusable)


def _usual_strong(rows: list[StoredOutcome]) -> str | None:
    names = Counter(r.strong_backend for r in rows if r.source == SHADOW and r.strong_backend)
    return names.most_common(1)[0][0] if names else None


def _observed(rows: list[StoredOutcome], strong: str | None) -> tuple[list[float], list[float]]:
    """Every score each side received: from judgements, and from feedback by who served."""
    weak: list[float] = []
    strong_side: list[float] = []
    for row in rows:
        if row.source == SHADOW and row.weak_score is not None and row.strong_score is not None:
            weak.append(row.weak_score)
            strong_side.append(row.strong_score)
        elif row.source == FEEDBACK and row.score is not None:
            (strong_side if strong is not None and row.backend == strong else weak).append(
                row.score)
    return weak, strong_side
