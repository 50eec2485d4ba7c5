"""Token counts as upstreams report them, in any wire format's usage block: read defensively,
since a malformed count must neither crash a request nor reach pricing and the audit log."""

from __future__ import annotations

MAX_TOKEN_COUNT = 2**31 - 1  # audit_log keeps token counts as INTEGER


def token_count(value: object) -> int:
    """A token count an upstream reported. Anything but a plausible non-negative integer (a
    string, a float, a negative or absurd number) counts as none: it must neither crash the
    request after the answer arrived nor reach pricing and the audit log."""
    return value if type(value) is int and 0 <= value <= MAX_TOKEN_COUNT else 0
