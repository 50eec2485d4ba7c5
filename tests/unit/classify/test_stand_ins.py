"""Reserved stand-ins (RFC 2606 addresses, published test cards, documented example keys):
found and flagged, so redaction masks them, yet left out of what routing sees."""

from __future__ import annotations

import pytest

from gateway.classify.detectors.overlap import resolve
from gateway.classify.detectors.secret_values import is_stand_in
from gateway.classify.detectors.validators import is_payment_card, is_test_card
from gateway.classify.sensitivity import SensitivityScanner
from gateway.types import SensitiveSpan

SCANNER = SensitivityScanner()


def stand_ins(text: str) -> list[tuple[str, str]]:
    return [(s.type, text[s.start:s.end]) for s in SCANNER.scan_for_redaction(text)
            if s.reserved]


@pytest.mark.parametrize(
    ("text", "kind", "value"),
    [("mail jrmccalx@example.com today", "email", "jrmccalx@example.com"),
     ("or ops@build.test", "email", "ops@build.test"),
     ("card 4111-1111-1111-1111.", "payment_card", "4111-1111-1111-1111"),
     ("card 4242 4242 4242 4242", "payment_card", "4242 4242 4242 4242"),
     ("pay 5555555555554444", "payment_card", "5555555555554444"),
     ("aws_access_key: AKIAIOSFODNN7EXAMPLE", "secret.aws_access_key", "AKIAIOSFODNN7EXAMPLE"),
     ("key = AKIAXXXXXXXXXXXXXXXX", "secret.aws_access_key", "AKIAXXXXXXXXXXXXXXXX"),
     ("ghp_000000000000000000000000000000000000", "secret.github_token",
      "ghp_000000000000000000000000000000000000"),
     ("slack token xoxb-00000-00000-EXAMPLENOTAREALTOKEN.", "secret.slack_token",
      "xoxb-00000-00000-EXAMPLENOTAREALTOKEN")],
)
def test_stand_ins_are_found_flagged_and_kept_out_of_scan(
    text: str, kind: str, value: str
) -> None:
    assert stand_ins(text) == [(kind, value)]
    assert SCANNER.scan(text) == []  # what routing and the evaluation see: nothing


@pytest.mark.parametrize(
    "text",
    ["noreply@github.com sent it", "clone git@github.com:org/repo.git",
     "pk_live_j5krY8XTgIcDaHDb3YrsAfCl", "ACME2024EXAMPLE build", "sk-example-key-here-now",
     "order 1111111111111111", "the ghp_ prefix", "xoxb-1-2"],
)
def test_what_is_no_stand_in(text: str) -> None:
    """Role mailboxes are real addresses of nobody, public keys are public, short prefixes
    start ordinary words, and a run of one digit is no card."""
    assert stand_ins(text) == []


def test_a_stand_in_never_displaces_a_real_finding() -> None:
    real = SensitiveSpan("email", "pii", 10, 30, 0.5)
    stand_in = SensitiveSpan("secret.aws_access_key", "secret", 0, 20, 0.95, reserved=True)
    later = SensitiveSpan("payment_card", "pii", 40, 59, 0.9, reserved=True)
    assert resolve([stand_in, real, later]) == [real, later]


def test_real_findings_are_unchanged_beside_stand_ins() -> None:
    text = ("Write to marta.kowalczyk84@gmail.com, not jrmccalx@example.com; card "
            "4539 1488 0343 6467, test card 4111 1111 1111 1111.")
    everything = SCANNER.scan_for_redaction(text)
    assert [s for s in everything if not s.reserved] == SCANNER.scan(text)
    assert [(s.type, s.reserved) for s in everything] == [
        ("email", False), ("email", True), ("payment_card", False), ("payment_card", True)]


def test_validators() -> None:
    assert is_test_card("4111111111111111") and not is_payment_card("4111111111111111")
    assert not is_test_card("4539148803436467")  # a real-looking card is not a stand-in
    assert not is_test_card("4111111111111112")  # checksum fails
    assert is_stand_in("00000-00000-EXAMPLENOTAREALTOKEN") and is_stand_in("your-key-here")
    assert not is_stand_in("7bN3kQ9xVt2Lm8Rw4Yc6Hp1Zs5Dj0Ga3Fe7K")
