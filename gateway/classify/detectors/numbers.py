"""Numeric identifiers found in runs of digits: payment cards, US SSNs, phone numbers, IPv4.

One literal-led pass over the class map finds every run of digits and separators long enough
to matter; each run is then judged by the validators, so the cost of a card check is paid only
where a card could be.
"""

from __future__ import annotations

import re

from gateway.classify.detectors.textview import TextView
from gateway.classify.detectors.validators import (
    ip_kind,
    is_payment_card,
    is_test_card,
    phone_digit_count_ok,
    ssn_valid,
)
from gateway.types import SensitiveSpan

# A run starting at a digit that does not continue a word, of >= 6 digit/separator characters.
_RUN = re.compile(rb"0(?<![Aa0_.]0)[0 ().+/-]{5,}")
# Plain, or grouped with one consistent separator; both forms match a run in one way only.
_CARD = re.compile(
    r"(?<![\d.-])(?:\d{12,19}|\d{3,6}([ -])\d{3,6}(?:\1\d{3,6}){1,4})(?![\d-]|\.\d)"
)
_DECIMAL = re.compile(r"-?\d+\.\d+")
_SSN = re.compile(r"(?<![\d-])(\d{3})([- ])(\d{2})\2(\d{4})(?![\d-])")
_PLAIN_SSN = re.compile(r"(?<!\d)(\d{3})(\d{2})(\d{4})(?!\d)")
_IPV4 = re.compile(r"(?<![\d.])\d{1,3}(?:\.\d{1,3}){3}(?!\.?\d)")
_DATE = re.compile(
    r"(?<!\d)(?:(\d{4})[-/.](\d{1,2})[-/.](\d{1,2})|(\d{1,2})[-/.](\d{1,2})[-/.](?:\d{4}|\d{2}))"
    r"(?!\d)"
)
_GROUPS = re.compile(r"[ .\-()/]+")
_EXTENSION = re.compile(r"\s?(?:x|ext\.?)\s?\d{1,5}", re.IGNORECASE)
_PHONE_CONTEXT = re.compile(
    rb"(?:phone|tel\b|tel\.|telephone|mobile|\bmob\b|\bcell|fax|\bcall|\btext\b|sms|whatsapp"
    rb"|contact|reach|\bdial|\bdesk|office|landline|registered|\bph\b|\bm:|\bt:|\bp:|answering"
    rb"|messag|voicemail|\bring\b)"
)
_SSN_CONTEXT = re.compile(rb"(?:ssn|social security|social sec)")


def detect_numbers(view: TextView) -> list[SensitiveSpan]:
    text = view.text
    spans: list[SensitiveSpan] = []
    classes = view.classes
    for match in _RUN.finditer(classes):
        start, end = match.span()
        digits = classes.count(b"0", start, end)
        if digits < 7 and classes.count(b".", start, end) < 3:
            continue  # too short for anything but an IPv4 address, and not dotted like one
        segment = text[start:end].rstrip(" -./(+")
        if _DECIMAL.fullmatch(segment):
            continue  # 0.8444218515250481: a measurement, not an identifier
        end = start + len(segment)
        spans.extend(_judge_run(view, segment, start, end, digits))
    return spans


def _judge_run(
    view: TextView, segment: str, start: int, end: int, digits: int
) -> list[SensitiveSpan]:
    found: list[SensitiveSpan] = []
    stand_ins: list[SensitiveSpan] = []  # kept apart: they must not change what else is found
    if segment.count(".") >= 3:
        addresses = list(_IPV4.finditer(segment))
        for ip in addresses:
            kind = ip_kind(ip.group())
            if kind is not None and not _preceded_by_version(view.text, start + ip.start()):
                (found if kind == "public" else stand_ins).append(SensitiveSpan(
                    "ip_address", "pii", start + ip.start(), start + ip.end(), 0.9,
                    reserved=kind == "documentation"))
        # A private address ("10.20.123.116:6379") is not reported, and is not a phone
        # number either.
        if addresses or digits < 7:
            return found + stand_ins
    if digits >= 12:
        for card in _cards(segment, start):
            (stand_ins if card.reserved else found).append(card)
    if digits >= 9:
        found.extend(_ssns(view, segment, start, bool(found)))
    if not found:
        phone = _phone(view, segment, start, end)
        if phone is not None:
            found.append(phone)
    return found + stand_ins if stand_ins else found


def _cards(segment: str, start: int) -> list[SensitiveSpan]:
    found = []
    for card in _CARD.finditer(segment):
        digits = card.group().replace(" ", "").replace("-", "")
        if is_payment_card(digits):
            found.append(SensitiveSpan("payment_card", "pii", start + card.start(),
                                       start + card.end(), 0.9))
        elif is_test_card(digits):
            found.append(SensitiveSpan("payment_card", "pii", start + card.start(),
                                       start + card.end(), 0.9, reserved=True))
    return found


def _ssns(view: TextView, segment: str, start: int, has_card: bool) -> list[SensitiveSpan]:
    found = []
    for ssn in _SSN.finditer(segment):
        if ssn_valid(ssn.group(1), ssn.group(3), ssn.group(4)):
            found.append(SensitiveSpan("us_ssn", "pii", start + ssn.start(),
                                       start + ssn.end(), 0.85))
    if not found and not has_card and _SSN_CONTEXT.search(view.lower, max(0, start - 40), start):
        for ssn in _PLAIN_SSN.finditer(segment):
            if ssn_valid(ssn.group(1), ssn.group(2), ssn.group(3)):
                found.append(SensitiveSpan("us_ssn", "pii", start + ssn.start(),
                                           start + ssn.end(), 0.8))
    return found


def _preceded_by_version(text: str, start: int) -> bool:
    """"v1.2.3.4", "version: 1.2.3.4", "pkg==1.2.3.4": a four-part version number, which
    shares an IPv4 address's shape (1.2.3.4 is also a routable address)."""
    return _VERSION_BEFORE.search(text, max(0, start - 12), start) is not None


_VERSION_BEFORE = re.compile(
    r"(?:(?<![A-Za-z])v|(?<![A-Za-z])(?:version|ver\.?|release|build|firmware)[ :=]{1,3}"
    r"|[=<>~!]=)\Z", re.IGNORECASE)


def _phone(view: TextView, segment: str, start: int, end: int) -> SensitiveSpan | None:
    text = view.text
    if any(_is_date(m) for m in _DATE.finditer(segment)):
        return None  # dates and timestamps share the shape of many phone formats
    if start > 1 and text[start - 1] == ":" and text[start - 2].isdigit():
        return None  # the seconds of a time ("00:00:00.0000000")
    if "+" in segment or segment.count("(") > 1 or segment.count(")") > 1:
        return None  # arithmetic ("(1+1)))"): a number's "+" leads it, outside the run
    has_plus = start > 0 and text[start - 1] == "+"
    has_paren = start > 0 and text[start - 1] == "("
    if has_plus or has_paren:
        start -= 1
    extension = _EXTENSION.match(text, end)
    if extension is not None:
        end = extension.end()
    groups = [g for g in _GROUPS.split(segment) if g]
    digits = sum(len(g) for g in groups)
    if not phone_digit_count_ok(digits, has_plus):
        return None
    confidence = _phone_shape_confidence(segment, groups, has_plus, has_paren)
    context = _PHONE_CONTEXT.search(view.lower, max(0, start - 40), start) or (
        _PHONE_CONTEXT.search(view.lower, end, min(len(text), end + 12))
    )
    if context is not None:
        confidence = max(confidence, 0.75)
    if confidence < 0.5:
        return None
    return SensitiveSpan("phone", "pii", start, end, confidence)


def _is_date(match: re.Match[str]) -> bool:
    if match.group(1):
        return int(match.group(2)) <= 12 and int(match.group(3)) <= 31
    first, second = int(match.group(4)), int(match.group(5))
    return min(first, second) <= 12 and max(first, second) <= 31


def _phone_shape_confidence(
    body: str, groups: list[str], has_plus: bool, has_paren: bool
) -> float:
    """How phone-like the grouping is without any surrounding words."""
    if has_plus:
        return 0.85
    if (has_paren or body.startswith(("(", "0"))) and ")" in body and len(groups) >= 2:
        return 0.7
    separators = {ch for ch in body if not ch.isdigit()}
    sizes = [len(g) for g in groups]
    if len(groups) >= 3 and 2 <= sizes[0] <= 5 and all(2 <= n <= 4 for n in sizes[1:]):
        if separators <= {"-"} or separators <= {"."}:
            return 0.7
        if separators == {" "} and groups[0].startswith("0"):
            return 0.6  # a national trunk prefix: 0490 75 40 81, 07700 063 966
    if sizes in ([3, 3, 4], [1, 3, 3, 4]):
        return 0.65
    return 0.0
