"""Builds one regular expression from a word list, factored as a prefix tree.

`a|ab|abc|b…` makes the engine try every alternative at every position; the factored form
`a(?:b(?:c)?)?|b…` tries one branch per distinct first character, which keeps vocabulary
matching (conditions, custom keyword lists) cheap on long texts.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any


def trie_pattern(words: Iterable[str]) -> str:
    """A regex source matching exactly the given words (longest first at each branch)."""
    root: dict[str, dict[str, Any]] = {}
    for word in words:
        node = root
        for ch in word:
            node = node.setdefault(ch, {})
        node[""] = {}
    return _render(root)


def _render(node: dict[str, dict[str, Any]]) -> str:
    ends_here = "" in node
    branches = [re.escape(ch) + _render(child) for ch, child in sorted(node.items()) if ch]
    if not branches:
        return ""
    body = branches[0] if len(branches) == 1 else "(?:" + "|".join(branches) + ")"
    if ends_here:
        return "(?:" + body + ")?"
    return body
