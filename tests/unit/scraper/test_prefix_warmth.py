"""KV claims discount a cached prefix only where one is actually shared: the prefixes sent to
a backend lately (PrefixWarmth), and the fleet putting the engine's measured hits on those
prompts alone, so a burst of long prompts that share nothing claims all of its KV."""

import math

import pytest

from gateway.scraper.fleet import FleetState
from gateway.scraper.prefix_warmth import (
    MAX_WARM_PREFIXES,
    SHARE_HALF_LIFE_S,
    WARM_FOR_S,
    PrefixWarmth,
)
from gateway.types import BackendLoad

SHARED = b"p:system-prompt-of-group-3"
REPLY = 50  # the engine's measured reply length below


def test_a_prefix_is_warm_once_sent_and_until_it_ages_out() -> None:
    warmth = PrefixWarmth()
    assert not warmth.is_warm(SHARED, 100.0) and not warmth.is_warm(None, 100.0)
    warmth.sent(SHARED, 1000, 100.0)
    assert warmth.is_warm(SHARED, 100.0 + WARM_FOR_S)
    assert warmth.keys(100.0 + WARM_FOR_S) == {SHARED}
    assert not warmth.is_warm(SHARED, 100.1 + WARM_FOR_S)
    assert warmth.keys(100.1 + WARM_FOR_S) == frozenset()


def test_the_warm_share_counts_tokens_sent_under_a_warm_prefix_and_forgets_old_sends() -> None:
    warmth = PrefixWarmth()
    assert warmth.share() == 0.0
    warmth.sent(SHARED, 1000, 10.0)  # its first send: nothing cached yet
    warmth.sent(None, 2000, 10.0)
    warmth.sent(SHARED, 1000, 10.0)
    assert warmth.share() == pytest.approx(1000 / 4000)
    # One half-life later, an unrelated prompt weighs twice what the earlier sends do.
    warmth.sent(None, 2000, 10.0 + SHARE_HALF_LIFE_S)
    assert warmth.share() == pytest.approx(500 / (2000 + 2000))


def test_the_least_recently_sent_prefix_goes_first_and_the_key_set_is_shared() -> None:
    warmth = PrefixWarmth()
    for i in range(MAX_WARM_PREFIXES):
        warmth.sent(b"k%d" % i, 10, 1.0)
    warmth.sent(b"k0", 10, 2.0)  # sent again: now the most recent
    keys = warmth.keys(2.0)
    assert warmth.keys(2.0) is keys  # nothing came or went: the same frozen set
    warmth.sent(b"new", 10, 3.0)
    assert warmth.is_warm(b"k0", 3.0) and not warmth.is_warm(b"k1", 3.0)
    assert len(warmth.keys(3.0)) == MAX_WARM_PREFIXES and warmth.keys(3.0) is not keys


def fleet_at(clock: list[float], hit_rate: float) -> FleetState:
    """One backend whose engine reports `hit_rate` of its prompt tokens cached and replies
    of REPLY tokens."""
    fleet = FleetState(clock=lambda: clock[0])
    fleet.record_load("a", BackendLoad(
        scraped_at_s=clock[0], engine="vllm", running=0, waiting=0, prefix_hit_rate=hit_rate,
        requests_finished_per_s=2.0, reply_tokens=REPLY,
    ))
    clock[0] += 0.1
    return fleet


def test_a_burst_of_long_prompts_that_share_nothing_is_claimed_in_full() -> None:
    """Shared-prefix traffic gave the engine a 60 % hit rate; eight long unrelated prompts
    then each claim their whole prompt, not 40 % of it (the engine-wide discount they got
    before, which over-committed its KV)."""
    clock = [1000.0]
    fleet = fleet_at(clock, 0.6)
    for _ in range(4):
        fleet.dispatched("a", 1000, 1128, SHARED)
    before = fleet.snapshot().backends["a"].kv_reserved_tokens
    burst = [fleet.dispatched("a", 2000, 2256) for _ in range(8)]
    assert [t.kv_tokens for t in burst] == [2000 + REPLY] * 8
    assert fleet.snapshot().backends["a"].kv_reserved_tokens - before == 8 * (2000 + REPLY)


def test_a_repeated_prefix_is_discounted_by_the_engines_hits_put_on_warm_prompts() -> None:
    """Prompts under one shared system prompt alternate with unrelated long ones. The first
    of the shared ones claims in full (nothing is cached yet); once a warm one has been sent
    the engine's hits are put on the warm prompts: together they are discounted what the
    engine measured, the unrelated ones not at all."""
    clock = [1000.0]
    hit_rate = 0.3
    fleet = fleet_at(clock, hit_rate)
    claims: list[tuple[bool, int, int]] = []  # (shares the prefix, prompt, claim)
    for i in range(20):
        shared = i % 2 == 0
        prompt = 1100 if shared else 2000
        share = fleet.snapshot().backends["a"].warm_prompt_share
        ticket = fleet.dispatched("a", prompt, prompt + 128, SHARED if shared else None)
        claims.append((shared, prompt, ticket.kv_tokens))
        if shared and share > 0:
            cached = min(1.0, hit_rate / share)
            assert ticket.kv_tokens == math.ceil(prompt * (1 - cached)) + REPLY
        else:
            assert ticket.kv_tokens == prompt + REPLY
        clock[0] += 0.05
    shared_claims = [claim for shared, _, claim in claims if shared]
    assert shared_claims[0] == 1100 + REPLY and max(shared_claims[2:]) < 400
    # What is discounted over the sends comes to about what the engine says it holds.
    discounted = sum(prompt + REPLY - claim for _, prompt, claim in claims)
    sent = sum(prompt for _, prompt, _ in claims)
    assert discounted == pytest.approx(hit_rate * sent, rel=0.25)


def test_a_prefix_not_sent_there_for_a_while_claims_in_full_again() -> None:
    clock = [1000.0]
    fleet = fleet_at(clock, 0.5)
    for _ in range(3):
        fleet.dispatched("a", 1000, 1128, SHARED)
    assert fleet.dispatched("a", 1000, 1128, SHARED).kv_tokens < 1000
    clock[0] += WARM_FOR_S + 1
    assert SHARED not in fleet.snapshot().backends["a"].warm_prefixes
    assert fleet.dispatched("a", 1000, 1128, SHARED).kv_tokens == 1000 + REPLY
