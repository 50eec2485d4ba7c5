"""The wrong-admin-key back-off: free tries, doubling waits, a cap, tries made while waiting
not counted, a right key clearing its address, and the bucket shared by every address."""

from __future__ import annotations

from gateway.tenancy.login_throttle import (
    FREE_FAILURES,
    GLOBAL_BURST,
    MAX_WAIT_S,
    LoginThrottle,
    retry_after,
)


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_a_few_wrong_keys_are_free_then_each_doubles_the_wait_up_to_the_cap() -> None:
    clock = Clock()
    throttle = LoginThrottle(clock)
    for _ in range(FREE_FAILURES):
        assert throttle.failed("10.0.0.1") == 0
    waits = []
    for _ in range(8):
        waits.append(throttle.failed("10.0.0.1"))
        clock.now += waits[-1]  # the next try comes as soon as it may
    assert waits[:4] == [1.0, 2.0, 4.0, 8.0]
    assert max(waits) == MAX_WAIT_S
    assert throttle.wait_s("10.0.0.2") == 0  # another address is not held up


def test_waiting_tries_do_not_lengthen_the_wait_and_a_right_key_clears_it() -> None:
    clock = Clock()
    throttle = LoginThrottle(clock)
    for _ in range(FREE_FAILURES + 1):
        throttle.failed("10.0.0.1")
    assert throttle.wait_s("10.0.0.1") == 1.0
    clock.now += 0.5
    assert throttle.wait_s("10.0.0.1") == 0.5  # asked (and refused) without a new failure
    clock.now += 0.5
    assert throttle.wait_s("10.0.0.1") == 0
    throttle.succeeded("10.0.0.1")
    assert throttle.failed("10.0.0.1") == 0  # free tries again


def test_an_attack_from_many_addresses_empties_the_shared_bucket_for_a_moment() -> None:
    clock = Clock()
    throttle = LoginThrottle(clock)
    for n in range(GLOBAL_BURST):
        throttle.failed(f"10.1.{n // 250}.{n % 250}")
    assert throttle.wait_s("192.0.2.7") == 1.0  # the next token
    clock.now += 1.0
    assert throttle.wait_s("192.0.2.7") == 0
    assert retry_after(0.2) == "1" and retry_after(2.5) == "3"
