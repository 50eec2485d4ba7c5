"""Stored outcomes → judged prompts for `gateway router fit --from-audit`."""

from __future__ import annotations

import pytest

from gateway.offline.training.audit_outcomes import judged_prompts
from gateway.outcomes.repository import StoredOutcome


def shadow(rid: str, weak: float | None, strong: float | None, prompt: str | None = "p",
           ) -> StoredOutcome:
    return StoredOutcome(rid, "shadow", prompt, "cheap", None, weak, strong, "big")


def feedback(rid: str, score: float, backend: str, prompt: str | None = "p") -> StoredOutcome:
    return StoredOutcome(rid, "feedback", prompt, backend, score, None, None, None)


def test_judgements_give_both_scores_and_feedback_is_estimated_from_the_other_side() -> None:
    found = judged_prompts([
        shadow("a", 0.2, 0.9), shadow("b", 0.6, 0.7),
        feedback("c", 1.0, "cheap"),  # strong side: the mean of 0.9, 0.7 and d's 0.0
        feedback("d", 0.0, "big"),  # weak side: the mean of 0.2, 0.6 and c's 1.0
    ], None)
    assert found.strong_backend == "big"
    scores = [(p.weak_score, p.strong_score) for p in found.prompts]
    assert scores[:2] == [(0.2, 0.9), (0.6, 0.7)]
    assert scores[2] == (1.0, pytest.approx(1.6 / 3))
    assert scores[3] == (pytest.approx(0.6), 0.0)
    assert (found.from_shadow, found.from_feedback) == (2, 2)


def test_a_persons_score_replaces_the_judges_for_the_side_that_served() -> None:
    found = judged_prompts([shadow("a", 0.9, 0.8), feedback("a", 0.1, "cheap")], "big")
    assert [(p.weak_score, p.strong_score) for p in found.prompts] == [(0.1, 0.8)]
    assert found.from_shadow == 1


def test_unstored_prompts_and_failed_judgements_are_counted_not_used() -> None:
    found = judged_prompts([shadow("a", None, None), shadow("b", 0.1, 0.9, prompt=None),
                            feedback("c", 1.0, "cheap")], "big")
    # a: the judgement failed; b: its prompt was not stored, but its scores still tell what
    # each side gets, so c's strong side is estimated from them.
    assert found.without_prompt == 1
    assert found.unusable == 1
    assert [(p.weak_score, p.strong_score) for p in found.prompts] == [(1.0, 0.9)]
