"""A chat's complexity in context: a follow-up in a hard conversation keeps its class."""

from __future__ import annotations

from gateway.classify.complexity_encoder import EncoderComplexityModel
from gateway.classify.conversation import TurnScores, earlier_user_texts, in_context
from gateway.classify.profiler import RequestClassifier
from gateway.classify.tokens import TokenCounter
from gateway.types import Endpoint, RouteRequest

HARD = ("Derive the Black-Scholes partial differential equation from a delta-hedged"
        " portfolio using Ito's lemma, then solve it for a European call option.")
FOLLOW_UP = "Thanks! Can you make it shorter?"


def chat(*turns: str) -> dict[str, object]:
    """User and assistant messages alternating, starting with the user."""
    roles = ("user", "assistant")
    return {"messages": [{"role": "system", "content": "Be precise."}] + [
        {"role": roles[i % 2], "content": text} for i, text in enumerate(turns)]}


def test_earlier_user_texts_are_the_user_turns_before_the_last_most_recent_first() -> None:
    payload = chat("first", "answer 1", "second", "answer 2", "third")
    assert earlier_user_texts(payload, 2, 4000) == ["second", "first"]
    assert earlier_user_texts(payload, 1, 4000) == ["second"]
    assert earlier_user_texts(chat("only"), 2, 4000) == []
    parts = {"messages": [
        {"role": "user", "content": [{"type": "text", "text": "look at this"},
                                     {"type": "image_url", "image_url": {"url": "x"}}]},
        {"role": "user", "content": "and now?"}]}
    assert earlier_user_texts(parts, 2, 4000) == ["look at this"]
    assert earlier_user_texts(chat("abcdef", "ok", "next"), 2, 3) == ["def"]
    assert earlier_user_texts({"messages": "not a list"}, 2, 4000) == []


async def test_the_highest_turn_wins_and_says_how_far_back_it_was() -> None:
    scores = {"last": 0.2, "one back": 0.7, "two back": 0.5}

    async def score(text: str) -> float:
        return scores[text]

    assert await in_context(0.2, ["one back", "two back"], score) == (0.7, 1)
    assert await in_context(0.9, ["one back", "two back"], score) == (0.9, 0)


async def test_each_text_is_scored_once() -> None:
    calls: list[str] = []

    async def score(text: str) -> float:
        calls.append(text)
        return 0.5

    turns = TurnScores()
    assert await turns.p_strong("a question", score) == 0.5
    assert await turns.p_strong("a question", score) == 0.5
    assert calls == ["a question"]


async def test_a_follow_up_in_a_hard_conversation_is_rated_as_the_conversation() -> None:
    model = EncoderComplexityModel.load()
    classifier = RequestClassifier(TokenCounter(), complexity=model)
    alone = await classifier.profile(RouteRequest("r", Endpoint.CHAT, "m", chat(FOLLOW_UP)))
    assert alone.complexity is not None and alone.complexity.label != "high"
    assert alone.complexity.turns_back == 0
    follow_up = await classifier.profile(RouteRequest("r", Endpoint.CHAT, "m", chat(
        HARD, "The derivation: ...", FOLLOW_UP)))
    assert follow_up.complexity is not None and follow_up.complexity.label == "high"
    assert follow_up.complexity.turns_back == 1
    assert follow_up.complexity.p_strong == model.p_strong(HARD)


async def test_small_talk_stays_small_however_long_the_conversation() -> None:
    classifier = RequestClassifier(TokenCounter(), complexity=EncoderComplexityModel.load())
    profile = await classifier.profile(RouteRequest("r", Endpoint.CHAT, "m", chat(
        "Hi! How are you today?", "Fine, thanks.", "What is the capital of France?",
        "Paris.", FOLLOW_UP)))
    assert profile.complexity is not None and profile.complexity.label == "low"
