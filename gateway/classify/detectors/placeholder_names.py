"""Alice and Bob: the stock characters of cryptography, protocols and puzzles ("Alice sends
Bob a commitment", "Alice and Bob take turns removing stones") stand for roles, not people.
A hard technical request is full of them, and a person finding would keep it home.

Only where the pair itself appears, each as a bare given name: "Alice Chen" or a lone "Bob"
in a support ticket is still a person. The cost of the rule is a real Alice and Bob named
together by first name alone, which identifies almost no one; every other detector still
reads the text."""

from __future__ import annotations

from collections.abc import Sequence

from gateway.types import SensitiveSpan

# The cast as cryptography and distributed-systems texts use it, from general knowledge:
# the two parties, a third and fourth, the eavesdropper, the attacker, the trusted third
# party, prover and verifier, and the warden.
CAST = frozenset((
    "Alice", "Bob", "Carol", "Charlie", "Dave", "Eve", "Mallory", "Oscar", "Peggy", "Trent",
    "Trudy", "Victor", "Walter",
))
_PAIR = frozenset(("Alice", "Bob"))


def without_stock_characters(text: str, spans: Sequence[SensitiveSpan]) -> list[SensitiveSpan]:
    """The person spans less the bare cast names, where both Alice and Bob are among them."""
    if "Alice" not in text or "Bob" not in text:  # nearly every request: two substring scans
        return list(spans)
    bare = {text[s.start:s.end] for s in spans}
    if not _PAIR <= bare:
        return list(spans)
    return [s for s in spans if text[s.start:s.end] not in CAST]
