"""Property tests for the identifier checksums, against straightforward reference versions
written here from the published rules (ISO/IEC 7812 Luhn, ISO 7064 mod 97-10 for IBANs, the
SSA's never-issued SSN ranges)."""

from __future__ import annotations

import string

from hypothesis import given, settings
from hypothesis import strategies as st

from gateway.classify.detectors.validators import IBAN_LENGTHS, iban_valid, luhn_valid, ssn_valid

digit_strings = st.text(alphabet=string.digits, min_size=1, max_size=24)


def reference_luhn(number: str) -> bool:
    total = 0
    for position, digit in enumerate(reversed([int(c) for c in number])):
        if position % 2 == 1:
            digit = digit * 2 - 9 if digit * 2 > 9 else digit * 2
        total += digit
    return total % 10 == 0


def luhn_check_digit(payload: str) -> str:
    return next(d for d in string.digits if reference_luhn(payload + d))


def mod97(text: str) -> int:
    """ISO 7064: letters are 10..35, digits themselves; remainder computed piecewise."""
    remainder = 0
    for ch in text:
        value = string.digits.index(ch) if ch.isdigit() else 10 + string.ascii_uppercase.index(ch)
        for d in str(value):
            remainder = (remainder * 10 + int(d)) % 97
    return remainder


def reference_iban(text: str) -> bool:
    return (len(text) == IBAN_LENGTHS.get(text[:2], -1) and text[2:4].isdigit()
            and mod97(text[4:] + text[:4]) == 1)


@st.composite
def ibans(draw: st.DrawFn) -> str:
    country = draw(st.sampled_from(sorted(IBAN_LENGTHS)))
    bban = draw(st.text(alphabet=string.digits + string.ascii_uppercase,
                        min_size=IBAN_LENGTHS[country] - 4, max_size=IBAN_LENGTHS[country] - 4))
    check = 98 - mod97(bban + country + "00")
    return f"{country}{check:02d}{bban}"


@settings(max_examples=300)
@given(digit_strings)
def test_luhn_agrees_with_the_reference(number: str) -> None:
    assert luhn_valid(number) is reference_luhn(number)


@given(digit_strings, st.data())
def test_luhn_catches_every_single_digit_error(payload: str, data: st.DataObject) -> None:
    number = payload + luhn_check_digit(payload)
    assert luhn_valid(number)
    at = data.draw(st.integers(0, len(number) - 1))
    wrong = data.draw(st.sampled_from([d for d in string.digits if d != number[at]]))
    assert not luhn_valid(number[:at] + wrong + number[at + 1:])


@settings(max_examples=300)
@given(ibans())
def test_a_well_formed_iban_is_valid(iban: str) -> None:
    assert iban_valid(iban) and reference_iban(iban)


@settings(max_examples=300)
@given(ibans(), st.data())
def test_iban_catches_every_single_character_error(iban: str, data: st.DataObject) -> None:
    # Digit for digit or letter for letter: each letter stands for two digits, so swapping a
    # digit for a letter shifts the number and mod 97 no longer guarantees to notice.
    at = data.draw(st.integers(0, len(iban) - 1))
    alphabet = string.digits if iban[at].isdigit() else string.ascii_uppercase
    wrong = data.draw(st.sampled_from([c for c in alphabet if c != iban[at]]))
    damaged = iban[:at] + wrong + iban[at + 1:]
    assert not iban_valid(damaged)
    assert iban_valid(damaged) is reference_iban(damaged)


@settings(max_examples=300)
@given(st.sampled_from(sorted(IBAN_LENGTHS)) | st.text(alphabet="ABZ", min_size=2, max_size=2),
       st.text(alphabet=string.digits + string.ascii_uppercase, max_size=34))
def test_iban_agrees_with_the_reference_on_any_text(country: str, rest: str) -> None:
    assert iban_valid(country + rest) is reference_iban(country + rest)


def reference_ssn(number: str) -> bool:
    area, group, serial = int(number[:3]), int(number[3:5]), int(number[5:])
    never_issued = {"078051120", "219099999", "123456789", "111111111", "000000000"}
    return (0 < area < 900 and area != 666 and group != 0 and serial != 0
            and number not in never_issued)


@settings(max_examples=500)
@given(st.text(alphabet=string.digits, min_size=9, max_size=9)
       | st.sampled_from(["078051120", "219099999", "666123456", "900123456", "123004567"]))
def test_ssn_rules_agree_with_the_reference(number: str) -> None:
    assert ssn_valid(number[:3], number[3:5], number[5:]) is reference_ssn(number)
