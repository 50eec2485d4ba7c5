"""Digit-based detectors: payment cards, SSNs, IBANs, IP addresses, phones, dates of birth."""

from __future__ import annotations

import pytest

from gateway.classify.detectors.validators import (
    card_brand_plausible,
    iban_valid,
    luhn_valid,
    public_ip,
    ssn_valid,
)
from gateway.classify.sensitivity import SensitivityScanner

SCANNER = SensitivityScanner()


def found(text: str, kind: str) -> list[str]:
    return [text[s.start:s.end] for s in SCANNER.scan(text) if s.type == kind]


def with_luhn_digit(prefix: str) -> str:
    """`prefix` plus the check digit that makes it pass the Luhn test."""
    for digit in "0123456789":
        if luhn_valid(prefix + digit):
            return prefix + digit
    raise AssertionError("unreachable")


def test_luhn_and_brand() -> None:
    visa = with_luhn_digit("453914880343646")
    assert luhn_valid(visa)
    assert not luhn_valid(visa[:-1] + str((int(visa[-1]) + 1) % 10))
    assert card_brand_plausible(visa)
    assert not card_brand_plausible("9" + visa[1:])  # no scheme starts with 9
    assert not card_brand_plausible("1700000000123")  # a millisecond timestamp


@pytest.mark.parametrize("separator", ["", " ", "-"])
def test_card_found_plain_or_grouped(separator: str) -> None:
    card = with_luhn_digit("537829104455120")
    grouped = separator.join(card[i:i + 4] for i in range(0, 16, 4))
    assert found(f"Charge my card {grouped} please", "payment_card") == [grouped]


def test_card_rejected_when_checksum_fails() -> None:
    card = with_luhn_digit("537829104455120")
    broken = card[:-1] + str((int(card[-1]) + 1) % 10)
    assert found(f"card {broken}", "payment_card") == []


def test_digits_after_decimal_point_are_not_a_card() -> None:
    card = with_luhn_digit("453914880343646")
    assert found(f"ratio 0.{card}", "payment_card") == []


@pytest.mark.parametrize(
    ("area", "group", "serial", "valid"),
    [("536", "22", "1234", True), ("000", "22", "1234", False), ("666", "22", "1234", False),
     ("912", "22", "1234", False), ("536", "00", "1234", False), ("536", "22", "0000", False),
     ("078", "05", "1120", False)],
)
def test_ssn_rules(area: str, group: str, serial: str, valid: bool) -> None:
    assert ssn_valid(area, group, serial) is valid


def test_ssn_found_formatted_and_with_context_only_when_plain() -> None:
    assert found("Here's my SSN: 536-22-1234", "us_ssn") == ["536-22-1234"]
    assert found("order 536221234 shipped", "us_ssn") == []
    assert found("social security number 536221234", "us_ssn") == ["536221234"]


def test_iban_checksum_and_length() -> None:
    assert iban_valid("GB82WEST12345698765432")
    assert not iban_valid("GB82WEST12345698765431")
    assert not iban_valid("GB82WEST1234569876543")  # one character short for GB
    text = "Pay to DE89 3704 0044 0532 0130 00 today, or gb82west12345698765432."
    assert found(text, "iban") == ["DE89 3704 0044 0532 0130 00", "gb82west12345698765432"]


def test_ip_addresses_public_only() -> None:
    assert public_ip("8.8.8.8")
    assert not public_ip("192.168.1.1") and not public_ip("10.0.0.1")
    assert not public_ip("1.2.3.04") and not public_ip("256.1.1.1")
    assert found("server at 8.8.4.4, gateway 192.168.0.1", "ip_address") == ["8.8.4.4"]
    assert found("resolver 2606:4700:4700::1111 and fe80::1", "ip_address") == [
        "2606:4700:4700::1111"]
    assert found("upgrade to v1.2.3.4 now", "ip_address") == []


@pytest.mark.parametrize(
    "text",
    ["Call me on +44 20 7946 0958", "my number is (415) 555-2671", "office: 030 1234567",
     "reach me at 905-674-3793", "Phone:\n60-56-85-91"],
)
def test_phone_found(text: str) -> None:
    assert found(text, "phone")


@pytest.mark.parametrize(
    "text",
    ["Order 12345678 has shipped", "Released on 2020-01-15 10:30", "scores: 120 150 200 250",
     "pi is 3.14159265358979", "the range 1000-2000"],
)
def test_phone_not_found_in_ordinary_numbers(text: str) -> None:
    assert found(text, "phone") == []


def test_date_of_birth_needs_a_birth_cue() -> None:
    assert found("She was born on 7/14/1995 in Oslo", "date_of_birth") == ["7/14/1995"]
    assert found("DOB: 1985-03-03", "date_of_birth") == ["1985-03-03"]
    assert found("Date of birth: March 3, 1985", "date_of_birth") == ["March 3, 1985"]
    assert found("The meeting is on 7/14/1995", "date_of_birth") == []
    assert found("born on 13/13/1995", "date_of_birth") == []


def test_times_addresses_with_ports_and_arithmetic_are_no_phone_numbers() -> None:
    assert found("Example: 2023-09-28 00:00:00.0000000)", "phone") == []
    assert found("brokers = \"10.20.123.115:9092,10.20.123.116:9092\"", "phone") == []
    assert found("node 10.20.123.116:6379@16379 master", "phone") == []
    assert found("x (((0.5x(1+1))))))))-6.5)))-(((10+((0.5x4))))) = y", "phone") == []
    # What a phone number looks like is unchanged.
    assert found("Call me on (020) 7946 0958 tomorrow.", "phone") == ["(020) 7946 0958"]
    assert found("Phone: 555-123-4567", "phone") == ["555-123-4567"]
