"""API key format and hashing.

Keys are 256 random bits (`sk-gw-` + 43 URL-safe characters). Only a hash is stored. A single
SHA-256 (HMAC-SHA-256 when GATEWAY_KEY_PEPPER is set) is the right tool here, unlike for
passwords: with 256 bits of entropy there is nothing to brute-force, so a deliberately slow
hash (bcrypt, argon2) would only add tens of milliseconds to every request. Being
deterministic and unsalted, the hash is also the lookup key: one indexed equality query, or a
dict hit in the in-process cache, per request.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets

KEY_PREFIX = "sk-gw-"
DISPLAY_PREFIX_CHARS = 12


def generate_key() -> str:
    return KEY_PREFIX + secrets.token_urlsafe(32)


def hash_key(key: str, pepper: bytes | None = None) -> str:
    raw = key.encode("utf-8")
    if pepper:
        return hmac.new(pepper, raw, hashlib.sha256).hexdigest()
    return hashlib.sha256(raw).hexdigest()


def display_prefix(key: str) -> str:
    return key[:DISPLAY_PREFIX_CHARS]


def new_id() -> str:
    return secrets.token_hex(8)
