"""Which of an audit row's features can change a decision under one policy: the cache key of
the replay. Rows with equal keys get the same decision, so each key is decided once.

Sizes, p_strong and task_p are exact numbers and nearly every row has its own, but with an empty
fleet decide() only compares them with the policy's thresholds: rule bounds, and context
windows against prompt + max_tokens (the prompt as each backend counts it). So the key
holds which side of each threshold a row is on, unless some rule orders by an objective
(predicted cost and time then vary with the sizes themselves, and the key keeps them
exact). A test holds this equal to deciding every row on its own.
"""

from __future__ import annotations

import math
from typing import Any

from gateway.audit.records import Row
from gateway.policy.loader import PolicySet
from gateway.policy.rules import Bounds
from gateway.policy.token_counting import tokens_for

FeatureKey = tuple[Any, ...]


class FeatureKeys:
    def __init__(self, policy: PolicySet) -> None:
        rules = policy.rules
        self._exact_sizes = any(r.objective is not None for r in rules)
        self._prompt = _distinct(r.prompt_tokens for r in rules)
        self._output = _distinct(r.max_output_tokens for r in rules)
        self._p_strong = _distinct(r.p_strong for r in rules)
        self._task_p = _distinct(r.task_p for r in rules)
        # One backend per distinct way of counting and window: where eligibility can change.
        self._fits = tuple({(b.token_encoding, b.token_ratio, b.context_window): b
                            for b in policy.backends.values()}.values())

    def key(self, row: Row) -> FeatureKey:
        prompt, output = row["prompt_tokens"], row["max_output_tokens"]
        if self._exact_sizes:
            sizes: tuple[Any, ...] = (prompt, output)
        else:
            sizes = (
                tuple(b.contains(prompt) for b in self._prompt),
                None if output is None else tuple(b.contains(output) for b in self._output),
                tuple(tokens_for(b, prompt) + (output or 0) <= b.context_window
                      for b in self._fits),
            )
        p_strong = row["p_strong"]
        strength = None if p_strong is None else tuple(
            b.contains(p_strong) for b in self._p_strong
        )
        task_p = recorded_task_p(row)
        return (
            row["tenant_id"], row["tenant"], row["endpoint"], row["requested_model"],
            row["complexity"], strength, row["sensitivity"], row["tags"],
            row["over_soft_limit"], sizes, (row.get("trace") or {}).get("task"),
            tuple(b.contains(task_p) for b in self._task_p),
        )


def _distinct(bounds: Any) -> tuple[Bounds, ...]:
    return tuple(dict.fromkeys(b for b in bounds if b is not None))


def recorded_task_p(row: Row) -> float:
    """The task type's probability, NaN where the row predates it: no `task_p` range holds
    NaN, so such a rule never matches a request whose confidence was not recorded."""
    p = (row.get("trace") or {}).get("task_p")
    return float(p) if isinstance(p, int | float) and not isinstance(p, bool) else math.nan
