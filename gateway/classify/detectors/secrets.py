"""Credentials recognisable by their own shape: provider tokens, JWTs, private key blocks and
passwords embedded in URLs.

Candidates are the token-like runs that contain a digit or start upper-case (two literal-led
passes over the class map); only the rules whose literal prefix starts a candidate are tried,
as gitleaks does with its keywords, so the cost does not grow with the number of rules.
A token with a provider's prefix that is a placeholder or a documented example is reported as
a reserved stand-in: redaction masks it, routing does not count it.
"""

from __future__ import annotations

import base64
import binascii
import json
import re

from gateway.classify.detectors.secret_rules import (
    PREFIX_HEADS,
    PREFIX_LENGTHS,
    PREFIX_RULES,
    SHAPE_RULES,
    TokenRule,
)
from gateway.classify.detectors.secret_values import (
    is_placeholder,
    is_stand_in,
    shannon_entropy,
)
from gateway.classify.detectors.textview import TextView
from gateway.types import SensitiveSpan

_DIGIT_LED = re.compile(rb"0[Aa0_+/=~.-]{7,}")
_UPPER_LED = re.compile(rb"A[Aa0_+/=~.-]{9,}")
_TOKEN_CHARS = frozenset(b"Aa0_+/=~.-")
_TOKEN_HEAD_REVERSED = re.compile(rb"[Aa0_+/=~.-]{0,40}")
_JWT = re.compile(r"eyJ[\w-]{8,}\.eyJ[\w-]{8,}(?:\.[\w-]{8,})?(?![\w-])")
_PRIVATE_KEY = re.compile(
    r"-----BEGIN[ A-Z0-9_-]{0,40}PRIVATE KEY(?: BLOCK)?-----"
    r"(?P<body>(?:[ \t]*\r?\n)?(?:[ \t]*[\w-]+:[^\n]*\n)*[A-Za-z0-9+/=\s]{0,12000}?)"
    r"(?:-----END[ A-Z0-9_-]{0,40}PRIVATE KEY(?: BLOCK)?-----|(?=[^A-Za-z0-9+/=\s])|\Z)"
)
_USERINFO = re.compile(r"[A-Za-z][\w+.-]{1,15}://([^\s:/@'\"<>]{0,64}):([^\s/@'\"<>]{1,128})@\Z")


def detect_token_secrets(view: TextView) -> list[SensitiveSpan]:
    text = view.text
    spans: list[SensitiveSpan] = []
    seen: set[int] = set()
    for pattern in (_DIGIT_LED, _UPPER_LED):
        for match in pattern.finditer(view.classes):
            start, end = match.span()
            inside = start > 0 and view.classes[start - 1] in _TOKEN_CHARS
            if not inside and not match.group().translate(None, b"Aa") and (
                text[start:start + 2] not in PREFIX_HEADS
            ):
                continue  # a plain word or CamelCase name: letters only, no token prefix
            if inside:
                # The run began inside a token ("ghp_wWPw5k…" is found at its first digit).
                head = view.classes[max(0, start - 40):start][::-1]
                start -= _TOKEN_HEAD_REVERSED.match(head).end()  # type: ignore[union-attr]
            if start in seen:
                continue
            seen.add(start)
            spans.extend(_token_findings(text, start, end))
    return spans


def _token_findings(text: str, start: int, end: int) -> list[SensitiveSpan]:
    found: list[SensitiveSpan] = []
    starts = [start]
    equals = text.find("=", start, end)
    if start <= equals < end - 8:  # "=" may open the run itself: "=AKIA…" at a line start
        starts.append(equals + 1)  # "AccountKey=…", "_authToken=…"
    slack = text.find("hooks.slack.com/", start, end)
    if slack != -1:
        starts.append(slack)
    for position in starts:
        rules = _rules_at(text, position)
        shaped = False
        for rule in rules:
            match = rule.pattern.match(text, position)
            if match is not None:
                shaped = True
                # Not credible (a placeholder body, too little entropy): a stand-in.
                found.append(_span(rule, match.start(), match.end(),
                                   reserved=not _credible(rule, match.group())))
        if rules and not shaped:
            stand_in = _prefixed_stand_in(text, position, end, rules)
            if stand_in is not None:
                found.append(stand_in)
    if text.startswith("eyJ", start):
        jwt = _JWT.match(text, start)
        if jwt is not None and _is_jwt(jwt.group()):
            found.append(SensitiveSpan("secret.jwt", "secret", jwt.start(), jwt.end(), 0.9))
    tail = text[start:min(len(text), end + 3)]
    for rule in SHAPE_RULES:
        if rule.hint in tail:
            match = rule.pattern.search(text, start, min(len(text), end + 40))
            if match is not None and _credible(rule, match.group()):
                found.append(_span(rule, match.start(), match.end()))
    return found


def _rules_at(text: str, position: int) -> tuple[TokenRule, ...]:
    if text[position:position + 2] not in PREFIX_HEADS:
        return ()
    rules: tuple[TokenRule, ...] = ()
    for length in PREFIX_LENGTHS:
        rules += PREFIX_RULES.get(text[position:position + length], ())
    return rules


def _credible(rule: TokenRule, value: str) -> bool:
    """The part after the fixed prefix is no placeholder and random enough for the rule."""
    prefix = next((p for p in rule.prefixes if value.startswith(p)), "")
    body = value[len(prefix):]
    if rule.check_placeholder and is_placeholder(body):
        return False
    return shannon_entropy(body) >= rule.min_entropy


def _span(rule: TokenRule, start: int, end: int, reserved: bool = False) -> SensitiveSpan:
    return SensitiveSpan("secret." + rule.name, "secret", start, end, 0.95, reserved)


def _prefixed_stand_in(
    text: str, position: int, end: int, rules: tuple[TokenRule, ...]
) -> SensitiveSpan | None:
    """A provider's prefix on a value that says it is an example but lacks the token's
    shape ("xoxb-00000-00000-EXAMPLENOTAREALTOKEN"). Short prefixes ("AC", "sk-") start
    too many ordinary words to count."""
    rule, prefix = max(((r, p) for r in rules for p in r.prefixes
                        if text.startswith(p, position)), key=lambda found: len(found[1]))
    stop = end
    while stop > position and text[stop - 1] in ".-~=":
        stop -= 1  # sentence punctuation after the token
    body = text[position + len(prefix):stop]
    if len(prefix) < 4 or len(body) < 8 or not is_stand_in(body):
        return None
    return _span(rule, position, stop, reserved=True)


def _is_jwt(token: str) -> bool:
    """Header and payload must be base64url-encoded JSON objects, the header naming a type
    or algorithm; a random string that merely starts with eyJ is not a JWT."""
    parts = token.split(".")
    try:
        header = json.loads(_b64url(parts[0]))
        payload = json.loads(_b64url(parts[1]))
    except (ValueError, binascii.Error, UnicodeDecodeError, RecursionError):
        return False  # RecursionError: a prompt can nest "[[[[..." past the parser's depth
    return isinstance(header, dict) and isinstance(payload, dict) and bool(
        {"alg", "typ", "kid", "enc"} & header.keys()
    )


def _b64url(part: str) -> bytes:
    return base64.urlsafe_b64decode(part + "=" * (-len(part) % 4))


def detect_private_keys(view: TextView) -> list[SensitiveSpan]:
    text = view.text
    spans: list[SensitiveSpan] = []
    at = text.find("-----BEGIN")
    while at != -1:
        match = _PRIVATE_KEY.match(text, at)
        if match is not None:
            body = re.sub(r"\s|[\w-]+:[^\n]*\n", "", match.group("body"))
            if len(body) >= 40 and shannon_entropy(body) >= 4.0:
                spans.append(SensitiveSpan("secret.private_key", "secret", at, match.end(), 0.99))
        at = text.find("-----BEGIN", at + 10)
    return spans


def detect_url_credentials(view: TextView) -> list[SensitiveSpan]:
    """user:password@ in a URL (database DSNs, basic-auth links)."""
    text = view.text
    spans: list[SensitiveSpan] = []
    at = view.raw.find(b"@")
    while at != -1:
        scheme = view.raw.rfind(b"://", max(0, at - 220), at)
        match = _USERINFO.search(text, max(0, scheme - 16), at + 1) if scheme != -1 else None
        if match is not None:
            user, password = match.group(1), match.group(2)
            if not is_placeholder(password) and shannon_entropy(password) >= 1.5 and (
                password != user
            ):
                spans.append(SensitiveSpan("secret.url_credentials", "secret", match.start(2),
                                           match.end(2), 0.9))
        at = view.raw.find(b"@", at + 1)
    return spans
