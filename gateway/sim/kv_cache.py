"""BlockPool: the paged KV cache — fixed-size blocks, ref-counted, with a prefix cache.

A full block is identified by a hash chained over (parent block's hash, its token ids), so
equal hashes mean equal prefixes. Freed blocks keep their hash and stay findable until they
are handed out again, least recently freed first: a repeated prefix hits the cache even after
the request that computed it has finished, as in vLLM.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass


def extend_block_hashes(
    hashes: list[int], token_ids: Sequence[int], block_size: int, num_tokens: int
) -> None:
    """Append the chained hash of every full block of token_ids[:num_tokens] not yet hashed."""
    for index in range(len(hashes), num_tokens // block_size):
        parent = hashes[-1] if hashes else 0
        block = tuple(token_ids[index * block_size : (index + 1) * block_size])
        # Tuples of ints hash deterministically within a process (no string-hash salt).
        hashes.append(hash((parent, block)))


@dataclass
class _Block:
    block_id: int
    ref_count: int = 0
    block_hash: int | None = None


class BlockPool:
    def __init__(self, num_blocks: int, block_size: int, *, enable_prefix_caching: bool) -> None:
        self.num_blocks = num_blocks
        self.block_size = block_size
        self.enable_prefix_caching = enable_prefix_caching
        self._blocks = [_Block(i) for i in range(num_blocks)]
        # Free blocks in eviction order (front = least recently freed). Cached blocks sit here
        # too: they are free to reuse, and only lose their contents when handed out again.
        self._free: OrderedDict[int, None] = OrderedDict.fromkeys(range(num_blocks))
        self._cached: dict[int, int] = {}  # block hash → block id

    @property
    def num_free(self) -> int:
        return len(self._free)

    @property
    def num_used(self) -> int:
        return self.num_blocks - len(self._free)

    @property
    def usage(self) -> float:
        """Fraction of blocks held by requests (vllm:kv_cache_usage_perc)."""
        return self.num_used / self.num_blocks

    @property
    def num_cached(self) -> int:
        return len(self._cached)

    def ref_count(self, block_id: int) -> int:
        return self._blocks[block_id].ref_count

    def find_cached(self, block_hashes: Sequence[int]) -> list[int]:
        """Block ids holding the longest cached prefix of this hash chain."""
        if not self.enable_prefix_caching:
            return []
        found: list[int] = []
        for block_hash in block_hashes:
            block_id = self._cached.get(block_hash)
            if block_id is None:
                break
            found.append(block_id)
        return found

    def can_take(self, reuse: Sequence[int], num_new: int) -> bool:
        # Reusing a cached block that sits in the free list takes it out of the free list too.
        reclaimed = sum(1 for b in reuse if self._blocks[b].ref_count == 0)
        return len(self._free) - reclaimed >= num_new

    def take(self, reuse: Sequence[int], num_new: int) -> list[int]:
        """Share the reuse blocks and allocate num_new fresh ones; the caller checked can_take."""
        if not self.can_take(reuse, num_new):
            raise RuntimeError("BlockPool.take without room; check can_take first")
        for block_id in reuse:
            block = self._blocks[block_id]
            if block.ref_count == 0:
                del self._free[block_id]
            block.ref_count += 1
        return [*reuse, *self._allocate(num_new)]

    def allocate(self, num_new: int) -> list[int] | None:
        """num_new fresh blocks, or None (and nothing taken) when too few are free."""
        if num_new > len(self._free):
            return None
        return self._allocate(num_new)

    def free(self, block_ids: Sequence[int]) -> None:
        # Tail blocks are released first so they are evicted first: the shared head of a
        # prefix outlives the request-specific tail, which is what makes reuse likely.
        for block_id in reversed(block_ids):
            block = self._blocks[block_id]
            block.ref_count -= 1
            if block.ref_count == 0:
                self._free[block_id] = None
            elif block.ref_count < 0:
                raise RuntimeError(f"block {block_id} freed twice")

    def register(self, block_id: int, block_hash: int) -> None:
        """Record that block_id now holds the full block with this hash."""
        block = self._blocks[block_id]
        if not self.enable_prefix_caching or block.block_hash is not None:
            return
        # Two requests may compute the same block at once; the first one stays the cached copy.
        if block_hash not in self._cached:
            self._cached[block_hash] = block_id
            block.block_hash = block_hash

    def _allocate(self, num_new: int) -> list[int]:
        taken: list[int] = []
        for _ in range(num_new):
            block_id, _unused = self._free.popitem(last=False)
            block = self._blocks[block_id]
            if block.block_hash is not None:  # evict its cached contents
                del self._cached[block.block_hash]
                block.block_hash = None
            block.ref_count = 1
            taken.append(block_id)
        return taken
