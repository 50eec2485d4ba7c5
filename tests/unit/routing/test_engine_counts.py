"""Step 1b: which backends are asked for their own count, and how answers reach the profile
(the HTTP side runs against the simulated vLLM in tests/e2e/test_engine_token_counts.py)."""

from __future__ import annotations

from gateway.policy.loader import parse_policy
from gateway.policy.runtime import RequestPolicy
from gateway.routing.engine_counts import with_engine_counts
from gateway.types import Backend, Endpoint, Payload, Profile, RouteRequest, TenantContext

POLICY = """\
version: 1
backends:
  - {name: a1, provider: vllm, base_url: 'http://10.0.0.1:8000/v1', model: m,
     context_window: 4096, tokens: {count: tokenize, ratio: 2}}
  - {name: a2, provider: vllm, base_url: 'http://10.0.0.1:8000/v1', model: m,
     context_window: 4096, tokens: {count: tokenize, ratio: 2}}
  - {name: b, provider: vllm, base_url: 'http://10.0.0.2:8000/v1', model: m,
     context_window: 4096, tokens: {count: tokenize, ratio: 2}}
  - {name: wide, provider: vllm, base_url: 'http://10.0.0.3:8000/v1', model: m,
     context_window: 65536, tokens: {count: tokenize, ratio: 2}}
  - {name: guess, provider: vllm, base_url: 'http://10.0.0.4:8000/v1', model: m,
     context_window: 4096}
models:
  auto: [a1, a2, b, wide, guess]
"""
POLICY_SET = parse_policy(POLICY)


class RecordingCounter:
    """Answers like an engine that counts 3,000 tokens; remembers who was asked."""

    def __init__(self, failing: frozenset[str] = frozenset()) -> None:
        self.asked: list[str] = []
        self._failing = failing

    async def count(
        self, backend: Backend, endpoint: Endpoint, payload: Payload, request_id: str
    ) -> int | None:
        self.asked.append(backend.name)
        return None if backend.name in self._failing else 3000


def request() -> RouteRequest:
    return RouteRequest("r", Endpoint.CHAT, "auto", {"messages": []}, max_output_tokens=64)


def plan() -> RequestPolicy:
    return POLICY_SET.for_request(TenantContext("t", "t", "k"), request())


async def test_only_engines_the_estimate_would_refuse_are_asked_each_once() -> None:
    counter = RecordingCounter()
    profile = await with_engine_counts(Profile(2500, 64), request(), plan(), counter)
    # 5,000 estimated tokens: over 4,096 for a1, a2 (one engine) and b; wide fits anyway;
    # guess has no /tokenize to ask.
    assert sorted(counter.asked) in (["a1", "b"], ["a2", "b"])
    assert dict(profile.prompt_tokens_by_encoding) == {
        "engine:a1": 3000, "engine:a2": 3000, "engine:b": 3000}


async def test_nothing_is_asked_when_every_estimate_fits_or_no_counter_is_wired() -> None:
    counter = RecordingCounter()
    small = Profile(1000, 64)
    assert await with_engine_counts(small, request(), plan(), counter) is small
    assert counter.asked == []
    large = Profile(2500, 64)
    assert await with_engine_counts(large, request(), plan(), None) is large


async def test_an_engine_without_an_answer_keeps_the_estimate() -> None:
    counter = RecordingCounter(failing=frozenset({"b"}))
    profile = await with_engine_counts(Profile(2500, 64), request(), plan(), counter)
    assert "engine:b" not in dict(profile.prompt_tokens_by_encoding)
