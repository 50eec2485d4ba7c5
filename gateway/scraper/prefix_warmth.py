"""Which prefixes one backend's prefix cache likely holds: the prefix/session keys the gateway
sent there lately, and the share of the prompt tokens sent there that carried one of them.

An engine reports one prefix-cache hit rate for all of its prompts. Spread over every prompt,
it under-claims KV for a burst of long prompts that share nothing (and over-claims for the
ones that do share a prefix). Only a prompt whose prefix went to the same engine shortly
before can hit, so the fleet puts the engine's hits on those prompts alone
(BackendState.prompt_hit_rate); this records what that needs.
"""

from __future__ import annotations

import math
from collections import OrderedDict

# A prefix sent within this long is taken to be still cached. An engine keeps a finished
# request's blocks until it needs the room; a busy one evicts within seconds, which the
# engine's own hit rate then shows (fewer hits spread over the same warm prompts).
WARM_FOR_S = 30.0
MAX_WARM_PREFIXES = 256  # per backend; the least recently sent go first
# The warm share is over the last few seconds of sends, the span the engine's hit rate (one
# scrape interval, prefills that started shortly before) speaks for.
SHARE_HALF_LIFE_S = 3.0


class PrefixWarmth:
    """Per backend: the keys sent lately (least recently sent first) and the time-decayed
    prompt tokens sent, all and those whose prefix was warm when sent."""

    __slots__ = ("_all_tokens", "_keys", "_last_s", "_sent_at", "_warm_tokens")

    def __init__(self) -> None:
        self._sent_at: OrderedDict[bytes, float] = OrderedDict()
        self._keys: frozenset[bytes] | None = frozenset()  # None: rebuild from _sent_at
        self._all_tokens = 0.0
        self._warm_tokens = 0.0
        self._last_s: float | None = None

    def is_warm(self, key: bytes | None, now_s: float) -> bool:
        if key is None:
            return False
        sent = self._sent_at.get(key)
        return sent is not None and now_s - sent <= WARM_FOR_S

    def sent(self, key: bytes | None, prompt_tokens: int, now_s: float) -> None:
        """One request sent there: its tokens count towards the warm share if its prefix
        was warm, and its prefix is warm from now on."""
        warm = self.is_warm(key, now_s)
        if self._last_s is not None and now_s > self._last_s:
            decay = math.exp2(-(now_s - self._last_s) / SHARE_HALF_LIFE_S)
            self._all_tokens *= decay
            self._warm_tokens *= decay
        self._last_s = now_s
        self._all_tokens += prompt_tokens
        if warm:
            self._warm_tokens += prompt_tokens
        if key is None:
            return
        if key in self._sent_at:
            self._sent_at.move_to_end(key)
        else:
            self._keys = None
            if len(self._sent_at) >= MAX_WARM_PREFIXES:
                self._sent_at.popitem(last=False)
        self._sent_at[key] = now_s

    def share(self) -> float:
        """Of the prompt tokens sent lately, the share whose prefix was warm (0 before any)."""
        return self._warm_tokens / self._all_tokens if self._all_tokens > 0 else 0.0

    def keys(self, now_s: float) -> frozenset[bytes]:
        """The warm keys now, as one frozen set shared by snapshots until a key comes or
        goes."""
        sent_at = self._sent_at
        while sent_at:
            key, at = next(iter(sent_at.items()))
            if now_s - at <= WARM_FOR_S:
                break
            del sent_at[key]
            self._keys = None
        if self._keys is None:
            self._keys = frozenset(sent_at)
        return self._keys
