"""Generic secrets: a random-looking value assigned to a key-like name (`api_key = "…"`,
`"client_secret": "…"`, `Authorization: Bearer …`, `curl -u user:pass`).

Keyword + entropy + allowlist, in the manner of gitleaks' generic rule: the name must say
"secret" (key, token, password, auth …) without being a known non-secret (`key_id`,
`public_key`, `csrf_token`, `author`), and the value must not be a placeholder, a template
variable, an identifier made of words, a path, a host name or a version.
"""

from __future__ import annotations

import base64
import binascii
import re

from gateway.classify.detectors.secret_values import (
    is_placeholder,
    looks_like_words,
    shannon_entropy,
)
from gateway.classify.detectors.textview import TextView
from gateway.classify.detectors.word_trie import trie_pattern
from gateway.types import SensitiveSpan

# Operator then value (found on the class map; '=' and ':' are literal there).
# A value holds at least one character that is not a letter, "_", "." or "-" (identifiers and
# dotted names are never secrets), or it is a short capitalised auth scheme ("Bearer …").
_VALUE = (rb"(?P<q>[\"'`]?)(?P<v>[Aa_.-]*+[^Aa_.\- \t\r\n\"'`,;(){}<>\[\]]"
          rb"[^ \t\r\n\"'`,;(){}<>\[\]]{0,199}|Aa{2,8}(?:-Aa{2,8})?(?= [^ \t\r\n]))")
_EQUALS = re.compile(rb"=>?[ \t]{0,3}" + _VALUE)
_COLON = re.compile(rb":(?![/:=])[ \t]{0,3}" + _VALUE)
_KEY_REVERSED = re.compile(r"[:?+]?[ \t]{0,3}[\"'`\]]?([\w.$@-]{1,61})")
_SECRET_NAME = re.compile(
    r"passw(?:or)?d|\bpwd|pass(?:phrase|code)|secret|token|api[_.-]?key|apikey|access[_.-]?key"
    r"|private[_.-]?key|auth|credential|creds|\bkey\b|[_.-]key\b|key$|^key|bearer|session[_.-]?"
    r"(?:id|key)|cookie|signing|encryption|\bapi\b"
)
# Provider names count only as a whole part of the name ("sourcegraph: …", "MERAKI_KEY"), so
# that "CameraKit" does not contain "meraki".
_SERVICES = frozenset(
    "sourcegraph meraki twilio sendgrid mailgun heroku datadog sentry okta algolia cloudflare "
    "dropbox facebook shopify slack stripe github gitlab npm jfrog artifactory vault pagerduty "
    "newrelic airtable asana mapbox pinecone openai anthropic cohere huggingface replicate "
    "firebase supabase azure aws gcp".split()
)
_SERVICE_NAME = re.compile(r"(?<![a-z])(?:" + trie_pattern(_SERVICES) + r")(?![a-z])")
# Names that contain a keyword but never hold a secret.
_NOT_SECRET_NAME = re.compile(
    r"(?:^|[_.-])(?:id|ids|name|names|url|uri|urls|endpoint|host|hostname|path|file|dir|length|len"
    r"|size|type|types|version|format|prefix|field|count|mode|policy|enabled|expiry|expires"
    r"|ttl|timeout|index|selector|pair|pressed|frame|code|style|label|hint|icon|table|column)$"
    r"|(?<=[a-z])(?-i:Id|Ids|Name|Names|Url|Uri|Path|File|Length|Size|Type|Version|Format|Prefix"
    r"|Field|Count|Mode|Index|Selector|Pair|Pressed|Frame|Style|Label|Table|Column|Signatures)$"
    r"|public|pub[_.-]?key|pubkey|csrf|xsrf|accessor|accessib|author(?!i[sz])|authority|rapid"
    r"|monkey|donkey|turkey|jockey|hockey|whiskey|keyboard|keyword|keystone|keynote|keying"
    r"|keystroke|hotkey|keycode|keymap|keychain|sortkey|foreign[_.-]?key|primary[_.-]?key"
    r"|hash[_.-]?key|partition[_.-]?key|bucket[_.-]?key|schema[_.-]?key|sequence[_.-]?key"
    r"|idempotency|cache[_.-]?key|keytab|keystore|tokenizer|tokens?[_.-]?(?:count|limit|usage)"
    r"|max[_.-]?tokens?|api[_.-]?(?:base|version)|secretsid|sha\d*|md5|digest|checksum|hash"
    r"|integrity",
    re.IGNORECASE,
)
_STRONG_NAME = re.compile(r"passw|pwd|secret|token|api[_.-]?key|apikey|auth|bearer|private|creds",
                          re.IGNORECASE)
_SCHEMES = frozenset({"basic", "bearer", "token", "api-token", "digest", "key", "apikey", "sso"})
_NOT_A_SECRET_VALUE = re.compile(
    r"^(?:[a-zA-Z_.-]+|\d+(?:\.\d+)*|v?\d+\.\d+\.\d+.*|[\w.-]+\.(?:com|org|net|io|dev|local|internal"
    r"|corp|html?|json|ya?ml|xml|txt|pem|crt|cer|key|p12|pfx|jks|png|jpe?g|gif|svg|js|ts|py|sh"
    r"|jar|zip)|(?:/|\./|~/|[A-Z]:\\).*|https?://.*)$"
)
_SCHEME_VALUE = re.compile(r"[ \t]{1,3}([^\s\"'`,;<>]{6,400})")
_CURL_USER = re.compile(rb"(?:-u|--user)(?:=|[ \t]{1,5})")
_CURL_ARGUMENT = re.compile(r"\"([^\"\n]{1,200})\"(?::\"([^\"\n]{1,200})\")?|'([^'\n]{1,200})'"
                            r"|([^\s\"']{1,200})")


def detect_assigned_secrets(view: TextView) -> list[SensitiveSpan]:
    text = view.text
    spans: list[SensitiveSpan] = []
    for pattern in (_EQUALS, _COLON):
        for match in pattern.finditer(view.classes):
            start, end = match.span("v")
            operator = match.start()
            if operator > 0 and text[operator - 1] in "=!<>":
                continue  # a comparison, not an assignment
            name = _name_before(text, operator)
            if not name:
                continue
            span = _judge(text, name, start, end, bool(match.group("q")))
            if span is not None:
                spans.append(span)
    spans.extend(_curl_users(view))
    for at in view.occurrences(b"service_account"):
        if at > 0 and re.search(r"[\"']type[\"']\s*:\s*[\"']\Z", text[max(0, at - 16):at]):
            spans.append(SensitiveSpan("secret.gcp_service_account", "secret", at, at + 15, 0.9))
    return spans


def _name_before(text: str, operator: int) -> str:
    """The key name just before an operator (`api_key`, `"client_secret"`, `X-Api-Key`),
    read backwards so the cost is the length of the name, not of the window."""
    match = _KEY_REVERSED.match(text[max(0, operator - 64):operator][::-1])
    if match is None:
        return ""
    return match.group(1)[::-1].lstrip("0123456789.-")


def _secret_name(name: str) -> bool:
    lowered = name.lower()
    if not _SECRET_NAME.search(lowered) and not _SERVICE_NAME.search(lowered):
        return False
    return not _NOT_SECRET_NAME.search(name)


def _judge(text: str, name: str, start: int, end: int, quoted: bool) -> SensitiveSpan | None:
    value = text[start:end]
    words_allowed = False
    scheme = value.lower() in _SCHEMES
    if (not scheme and len(value.rstrip(".")) < 6) or not _secret_name(name):
        return None  # shorter values are not keys
    if scheme:
        following = _SCHEME_VALUE.match(text, end)
        if following is None:
            return None
        start, end = following.span(1)
        value = following.group(1)
        if value.lower() != "basic" and value.lower() in _SCHEMES:
            return None
        if text[start - 6:start].lower().startswith("basic") and _basic_credentials(value):
            return SensitiveSpan("secret.basic_auth", "secret", start, end, 0.85)
        threshold = 2.75
    elif "passw" in name.lower() or "pwd" in name.lower():
        threshold = 2.5
        words_allowed = True
    else:
        threshold = 2.75 if _STRONG_NAME.search(name) else 3.5
    if is_placeholder(value):
        return None  # checked before trimming: "ops_eyJzaWdu..." is elided, not a key
    if not quoted:
        value = value.rstrip(".")
        end = start + len(value)
    if value.startswith("eyJ") or len(value) < 6:
        return None  # JWTs have their own rule; shorter values are not keys
    if is_placeholder(value) or _NOT_A_SECRET_VALUE.match(value):
        return None
    if not words_allowed and looks_like_words(value):
        return None  # an identifier or phrase; passwords, though, are often made of words
    if shannon_entropy(value) < threshold:
        return None
    return SensitiveSpan("secret.generic", "secret", start, end, 0.8)


def _basic_credentials(value: str) -> bool:
    """HTTP Basic credentials: base64 of "user:password"."""
    try:
        decoded = base64.b64decode(value + "=" * (-len(value) % 4), validate=True)
    except (ValueError, binascii.Error):
        return False
    return b":" in decoded and len(decoded) >= 4


def _curl_users(view: TextView) -> list[SensitiveSpan]:
    """`curl -u user:password` / `--user "user:password"`: the password (or the lone key)."""
    text = view.text
    spans: list[SensitiveSpan] = []
    for at in view.occurrences(b"-u"):
        if at > 0 and view.lower[at - 1] == 45:  # "--user"
            at -= 1
        flag = _CURL_USER.match(view.lower, at)
        if flag is None or (at > 0 and view.lower[at - 1] not in b" \t\n'\""):
            continue
        argument = _CURL_ARGUMENT.match(text, flag.end())
        if argument is None:
            continue
        if argument.group(2) is not None:  # "user":"password"
            credential, offset = argument.group(2), argument.start(2)
        else:
            index = next(i for i in (1, 3, 4) if argument.group(i) is not None)
            raw = argument.group(index)
            if ":" not in raw:
                continue
            user, _, password = raw.partition(":")
            credential, offset = (password, argument.start(index) + len(user) + 1)
            if not password:
                credential, offset = user, argument.start(index)
        whole = argument.group(0).strip("\"'")
        cleaned = credential.strip("{}")
        if is_placeholder(whole) or is_placeholder(credential) or is_placeholder(cleaned):
            continue
        if len(cleaned) >= 3 and shannon_entropy(cleaned) >= 2.0:
            spans.append(SensitiveSpan("secret.basic_auth", "secret", offset,
                                       offset + len(credential), 0.85))
    return spans
