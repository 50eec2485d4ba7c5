"""Contact identifiers that are not digit runs: e-mail addresses and IPv6 addresses.

Both are anchored on a literal ("@", ":") that is rare in prose, then checked with a bounded
local pattern, so no pattern ever scans a long run of word characters hoping for an "@".
"""

from __future__ import annotations

import re

from gateway.classify.detectors.textview import TextView
from gateway.classify.detectors.validators import ip_kind
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
# A group between two colons, or a double colon next to a hex digit or a dot: code's "::"
# (std::cout) matches too, and is sorted out by the checks after it. Led by the literal ":"
# so the engine skips to each colon (a leading character class made it ~100x slower).
_V6_HINT = re.compile(rb":(?:[0Aa]{1,4}:|:(?:(?=[0Aa])|(?<=[0Aa.]::)))")
_V6_CHARS = frozenset(b"0123456789abcdefABCDEF:.")
_V6_SUFFIX = re.compile(rb"/(\d{1,3})(?!\d|\.\d)|%[A-Za-z0-9_-]{1,32}")
_SINGLE_COLON_END = (b"a:", b"A:", b"0:")
_WORD = frozenset(b"Aa0_")
_GLOBAL_HEAD = re.compile(rb"[23][0-9A-Fa-f]{3}:")  # first group of an address in 2000::/3


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
    """IPv6 literals, compressed (2001:db8::1, ::ffff:192.0.2.1) or not, bare, in brackets
    ([2001:db8::1]:443, URLs), with a zone id (%eth0) or a prefix length (/48), which the span
    includes. Documentation addresses are reported as reserved stand-ins."""
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
        span = _ipv6_span(view, start, end)
        if span is not None:
            spans.append(span)
    return spans


def _ipv6_span(view: TextView, start: int, end: int) -> SensitiveSpan | None:
    raw, classes = view.raw, view.classes
    # A sentence's full stop, or a label's colon ("IPv6: ..."), is not part of the address;
    # a double colon is.
    while end > start and (raw[end - 1] == 46 or classes[end - 2:end] in _SINGLE_COLON_END):
        end -= 1
    if start > 0 and classes[start - 1] in _WORD:
        # Glued to a word: only a label's colon may end it ("IPv6:2a00::1"), and what follows
        # must open like a global address; "text2001:db8::1" is no literal of its own.
        start = raw.find(b":", start, end) + 1
        if _GLOBAL_HEAD.match(raw, start) is None:
            return None
    elif raw[start:start + 1] == b":" and raw[start + 1:start + 2] != b":":
        start += 1
    if raw[start:end].count(b":") < 2:
        return None  # "12:30"
    candidate = raw[start:end].decode()
    if b"::" in raw[start:end] and not _plausible_compressed(candidate):
        return None
    kind = ip_kind(candidate)
    if kind is None:
        return None
    end = _suffix_end(raw, end)
    if end < len(raw) and classes[end] in _WORD:
        return None  # "fe80::1text"
    return SensitiveSpan("ip_address", "pii", start, end, 0.9, kind == "documentation")


def _plausible_compressed(candidate: str) -> bool:
    """Code is full of "::" (std::cout, a[1::2], Foo::Bar): with fewer than three groups and
    no IPv4 tail, only the global unicast block 2000::/3 makes it an address."""
    groups = [g for g in candidate.split(":") if g]
    if len(groups) >= 3 or "." in candidate:
        return True
    return bool(groups) and len(groups[0]) == 4 and groups[0][0] in "23"


def _suffix_end(raw: bytes, end: int) -> int:
    """Past a zone id ("%eth0") or a prefix length ("/48") that follows the address."""
    suffix = _V6_SUFFIX.match(raw, end)
    if suffix is None:
        return end
    if suffix.group(1) is not None and int(suffix.group(1)) > 128:
        return end
    return suffix.end()
