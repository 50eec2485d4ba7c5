"""Checksums and validity rules for numeric identifiers (cards, IBANs, US SSNs, IPs, phones).

Pure functions of a candidate string. A pattern alone flags far too many ordinary numbers; these
rules are what make a 16-digit order id different from a payment card.
"""

from __future__ import annotations

import ipaddress
from typing import Literal

IpKind = Literal["public", "documentation"]

# ISO 13616 IBAN length per country (the registry's published lengths).
IBAN_LENGTHS: dict[str, int] = {
    "AD": 24, "AE": 23, "AL": 28, "AT": 20, "AZ": 28, "BA": 20, "BE": 16, "BG": 22, "BH": 22,
    "BI": 27, "BR": 29, "BY": 28, "CH": 21, "CR": 22, "CY": 28, "CZ": 24, "DE": 22, "DJ": 27,
    "DK": 18, "DO": 28, "EE": 20, "EG": 29, "ES": 24, "FI": 18, "FK": 18, "FO": 18, "FR": 27,
    "GB": 22, "GE": 22, "GI": 23, "GL": 18, "GR": 27, "GT": 28, "HR": 21, "HU": 28, "IE": 22,
    "IL": 23, "IQ": 23, "IS": 26, "IT": 27, "JO": 30, "KW": 30, "KZ": 20, "LB": 28, "LC": 32,
    "LI": 21, "LT": 20, "LU": 20, "LV": 21, "LY": 25, "MC": 27, "MD": 24, "ME": 22, "MK": 19,
    "MN": 20, "MR": 27, "MT": 31, "MU": 30, "NI": 28, "NL": 18, "NO": 15, "OM": 23, "PK": 24,
    "PL": 28, "PS": 29, "PT": 25, "QA": 29, "RO": 24, "RS": 22, "RU": 33, "SA": 24, "SC": 31,
    "SD": 18, "SE": 24, "SI": 19, "SK": 24, "SM": 27, "SO": 23, "ST": 25, "SV": 28, "TL": 23,
    "TN": 24, "TR": 26, "UA": 29, "VA": 22, "VG": 24, "XK": 20,
}  # fmt: skip

# Address blocks reserved for documentation, by IP version.
_DOCUMENTATION: dict[int, tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, ...]] = {
    4: (ipaddress.IPv4Network("192.0.2.0/24"), ipaddress.IPv4Network("198.51.100.0/24"),
        ipaddress.IPv4Network("203.0.113.0/24")),
    6: (ipaddress.IPv6Network("2001:db8::/32"), ipaddress.IPv6Network("3fff::/20")),
}
# The top 96 bits of ::ffff:0:0:0/96 (SIIT) and 64:ff9b::/96 (NAT64).
_V4_CARRIERS = frozenset({0xFFFF0000, 0x0064FF9B << 64})

# Published as examples or retired by the SSA; never issued to a person.
_INVALID_SSNS = frozenset({"078051120", "219099999", "123456789", "111111111", "000000000"})


def luhn_valid(digits: str) -> bool:
    total = 0
    for index, ch in enumerate(reversed(digits)):
        value = ord(ch) - 48
        if index % 2:
            value *= 2
            if value > 9:
                value -= 9
        total += value
    return total % 10 == 0


def card_brand_plausible(digits: str) -> bool:
    """Issuer prefix and length fit a real card scheme (Visa, Mastercard, Amex, Discover,
    Diners, JCB, Maestro, UnionPay, Mir). Keeps millisecond timestamps and ids out."""
    n = len(digits)
    head2 = int(digits[:2])
    head4 = int(digits[:4])
    first = digits[0]
    if first == "4":
        return n in (13, 16, 18, 19)
    if first == "3":
        if head2 in (34, 37):
            return n == 15
        if 300 <= int(digits[:3]) <= 305 or head2 in (36, 38, 39) or digits[:3] == "309":
            return 14 <= n <= 19
        return head2 == 35 and 16 <= n <= 19
    if first == "5":
        return 12 <= n <= 19 if head2 in (50, 56, 57, 58, 59) else n == 16
    if first == "6":
        return 12 <= n <= 19
    if first == "2":
        if head4 == 2131:
            return n == 15
        return (2200 <= head4 <= 2204 or 2221 <= head4 <= 2720) and n == 16
    if first == "1":
        return n == 15  # JCB 1800 and UATP 1xxx
    return False


def is_payment_card(digits: str) -> bool:
    return (
        12 <= len(digits) <= 19
        and len(set(digits)) > 2
        and card_brand_plausible(digits)
        and luhn_valid(digits)
    )


def is_test_card(digits: str) -> bool:
    """A published test number (4111 1111 1111 1111, 4242 4242 4242 4242, 5555 5555 5555
    4444): the shape and checksum of a card, but at most two distinct digits."""
    return (
        12 <= len(digits) <= 19
        and len(set(digits)) <= 2
        and card_brand_plausible(digits)
        and luhn_valid(digits)
    )


def iban_valid(compact: str) -> bool:
    """`compact`: upper-case, no spaces. Country length and the ISO 7064 mod-97 check."""
    expected = IBAN_LENGTHS.get(compact[:2])
    if expected is None or len(compact) != expected or not compact[2:4].isdigit():
        return False
    rearranged = compact[4:] + compact[:4]
    number = "".join(str(int(ch, 36)) for ch in rearranged)
    return int(number) % 97 == 1


def ssn_valid(area: str, group: str, serial: str) -> bool:
    if area in ("000", "666") or area[0] == "9" or group == "00" or serial == "0000":
        return False
    return area + group + serial not in _INVALID_SSNS


def public_ip(candidate: str) -> bool:
    """A valid, globally routable IPv4/IPv6 address. Private, loopback, link-local, multicast
    and documentation addresses identify nobody, so coding prompts full of 127.0.0.1 and
    192.168.x.x are not flagged. IPv4 parts with leading zeros are rejected (not an address
    but a version string or a date more often than not)."""
    return ip_kind(candidate) == "public"


def ip_kind(candidate: str) -> IpKind | None:
    """"public" for an address that can point at someone's device; "documentation" for the
    ranges reserved for examples (RFC 5737, 3849, 9637), the stand-ins of addresses as
    example.com is of mail domains; None for anything else (not an address, or a private,
    loopback, link-local, multicast or unspecified one). An IPv6 address that carries an IPv4
    one (mapped ::ffff:a.b.c.d, translated ::ffff:0:a.b.c.d, NAT64 64:ff9b::a.b.c.d, the old
    ::a.b.c.d) is judged by it."""
    if "." in candidate and ":" not in candidate:
        parts = candidate.split(".")
        if len(parts) != 4 or any(len(p) > 1 and p[0] == "0" for p in parts):
            return None
    try:
        address = ipaddress.ip_address(candidate)
    except ValueError:
        return None
    if isinstance(address, ipaddress.IPv6Address):
        address = _embedded_ipv4(address) or address
    if any(address in network for network in _DOCUMENTATION[address.version]):
        return "documentation"
    return "public" if address.is_global and not address.is_multicast else None


def _embedded_ipv4(address: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    if address.ipv4_mapped is not None:
        return address.ipv4_mapped
    packed = int(address)
    # ::a.b.c.d (the deprecated "compatible" form; not :: or ::1), SIIT's ::ffff:0:a.b.c.d
    # and NAT64's well-known prefix
    if (packed >> 32 == 0 and packed > 1) or packed >> 32 in _V4_CARRIERS:
        return ipaddress.IPv4Address(packed & 0xFFFFFFFF)
    return None


def phone_digit_count_ok(digits: int, has_plus: bool) -> bool:
    """E.164 allows at most 15 digits; fewer than 7 is not a reachable number."""
    return (8 if has_plus else 7) <= digits <= 15
