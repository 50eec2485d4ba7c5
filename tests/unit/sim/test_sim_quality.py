"""The simulator's prompt-dependent answer quality and its judge, read back through the
gateway's own rubric (the two sides of the wire contract agree)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from gateway.routing.shadow_rubric import judge_payload, parse_verdict
from gateway.sim.judge import is_rubric, verdict
from gateway.sim.quality import answer_quality, difficulty, mark, read_mark


@given(st.text(max_size=300))
def test_difficulty_is_deterministic_and_bounded(prompt: str) -> None:
    assert 0 <= difficulty(prompt) <= 1
    assert difficulty(prompt) == difficulty(prompt)


@given(st.text(max_size=200), st.integers(0, 9))
def test_a_higher_tier_never_answers_worse(prompt: str, tier: int) -> None:
    assert answer_quality(prompt, tier + 1) >= answer_quality(prompt, tier)


def test_hard_work_is_harder_than_small_talk() -> None:
    easy, hard = "Say hi.", "Prove the lock-free algorithm's invariant, step by step."
    assert difficulty(hard) > difficulty(easy) + 0.3
    assert answer_quality(easy, 2) > 0.8 and answer_quality(hard, 2) < 0.3
    assert answer_quality(hard, 4) > answer_quality(hard, 2) + 0.5


def test_a_mark_reads_back() -> None:
    assert read_mark(mark(0.873) + "the answer") == 0.873
    assert read_mark("no mark here") is None


def test_the_judge_scores_the_gateways_rubric() -> None:
    payload = judge_payload("question", mark(0.42) + "weak answer", mark(0.97) + "strong")
    text = payload["messages"][-1]["content"]
    assert is_rubric(text)
    reply = {"choices": [{"message": {"role": "assistant", "content": verdict(text)}}]}
    import orjson

    assert parse_verdict(orjson.dumps(reply)) == (0.4, 1.0)


def test_an_answer_without_a_mark_scores_zero() -> None:
    text = judge_payload("q", "[sim-qual", mark(0.5))["messages"][-1]["content"]
    assert verdict(text) == '{"a":0,"b":5}'
    assert not is_rubric("just a question")
