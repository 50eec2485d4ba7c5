"""Contact identifiers that are not digit runs: e-mail addresses and IPv6 addresses.

Both are anchored on a literal ("@", ":") that is rare in prose, then checked with a bounded
local pattern, so no pattern ever scans a long run of word characters hoping for an "@".
"""

from __future__ import annotations

import re

from gateway.classify.detectors.textview import TextView
from gateway.classify.detectors.validators import public_ip
from gateway.types import SensitiveSpan

_LOCAL = re.compile(rb"[A-Za-z0-9._%+'-]{1,64}\Z")
_DOMAIN = re.compile(rb"(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.){1,8}[A-Za-z]{2,24}"
                     rb"(?![A-Za-z0-9-]|\.[A-Za-z0-9])")
# RFC 2606/6761 reserved names and role mailboxes: addresses that identify no person. A
# reserved-domain address is still reported, as a stand-in (routing ignores it, redaction
# masks it); a role mailbox is a real address and is not reported at all.
_RESERVED_DOMAIN = re.compile(rb"(?:^|\.)(?:example\.(?:com|org|net)|example|test|invalid|"
                              rb"localhost|local)\Z", re.IGNORECASE)
_ROLE_LOCALS = frozenset({b"git", b"noreply", b"no-reply", b"donotreply", b"do-not-reply",
                          b"mailer-daemon", b"postmaster"})

_LOCAL_END = frozenset(b"Aa0._%+'-")
_V6_HINT = re.compile(rb":[0Aa]{1,4}:")
_V6_CHARS = frozenset(b"0123456789abcdefABCDEF:.")


def detect_emails(view: TextView) -> list[SensitiveSpan]:
    raw = view.raw
    spans: list[SensitiveSpan] = []
    classes = view.classes
    at = raw.find(b"@")
    while at != -1:
        if at == 0 or classes[at - 1] not in _LOCAL_END or classes[at + 1:at + 2] not in (
            b"A", b"a", b"0"
        ):
            at = raw.find(b"@", at + 1)
            continue  # "@decorator", "a @ b": no address around this "@"
        local = _LOCAL.search(raw, max(0, at - 64), at)
        domain = _DOMAIN.match(raw, at + 1)
        if local is not None and domain is not None:
            start = local.start()
            while start < at and raw[start] in b".'":
                start += 1
            ok = start < at and not (start > 0 and raw[start - 1] in b":/")
            if ok and raw[start:at].lower() not in _ROLE_LOCALS:
                reserved = _RESERVED_DOMAIN.search(domain.group()) is not None
                spans.append(SensitiveSpan("email", "pii", start, domain.end(), 0.95, reserved))
        at = raw.find(b"@", at + 1)
    return spans


def detect_ipv6(view: TextView) -> list[SensitiveSpan]:
    raw = view.raw
    spans: list[SensitiveSpan] = []
    covered = -1
    for hint in _V6_HINT.finditer(view.classes):
        if hint.start() < covered:
            continue
        start, end = hint.start(), hint.end()
        while start > 0 and raw[start - 1] in _V6_CHARS:
            start -= 1
        while end < len(raw) and raw[end] in _V6_CHARS:
            end += 1
        covered = end
        candidate = raw[start:end].strip(b".:").decode()
        offset = raw.find(candidate.encode(), start)
        if candidate.count(":") >= 2 and public_ip(candidate):
            spans.append(SensitiveSpan("ip_address", "pii", offset, offset + len(candidate), 0.9))
    return spans
