"""The sim's paged KV cache: ref counts, the prefix-cache hash chain, LRU eviction."""

from __future__ import annotations

import pytest

from gateway.sim.kv_cache import BlockPool, extend_block_hashes


def hashes_of(tokens: list[int], block_size: int = 4) -> list[int]:
    hashes: list[int] = []
    extend_block_hashes(hashes, tokens, block_size, len(tokens))
    return hashes


def test_hash_chain_depends_on_the_whole_prefix() -> None:
    a = hashes_of([1, 2, 3, 4, 5, 6, 7, 8, 9])
    b = hashes_of([9, 2, 3, 4, 5, 6, 7, 8])
    assert len(a) == 2  # only full blocks are hashed
    assert a[0] != b[0] and a[1] != b[1]  # same second block, different parent
    assert hashes_of([1, 2, 3, 4, 5, 6, 7, 8]) == a


def test_extend_hashes_only_the_new_full_blocks() -> None:
    tokens = list(range(12))
    hashes: list[int] = []
    extend_block_hashes(hashes, tokens, 4, 5)
    assert len(hashes) == 1
    extend_block_hashes(hashes, tokens, 4, 12)
    assert hashes == hashes_of(tokens)


def test_take_and_free_track_usage() -> None:
    pool = BlockPool(8, 4, enable_prefix_caching=True)
    blocks = pool.take([], 3)
    assert pool.num_used == 3 and pool.usage == pytest.approx(3 / 8)
    pool.free(blocks)
    assert pool.num_used == 0 and pool.num_free == 8
    with pytest.raises(RuntimeError):
        pool.free(blocks[:1])


def test_allocate_refuses_without_room_and_takes_nothing() -> None:
    pool = BlockPool(2, 4, enable_prefix_caching=True)
    assert pool.allocate(3) is None
    assert pool.num_free == 2


def test_freed_blocks_stay_cached_until_reallocated() -> None:
    pool = BlockPool(4, 4, enable_prefix_caching=True)
    chain = hashes_of(list(range(8)))
    blocks = pool.take([], 2)
    for block_id, block_hash in zip(blocks, chain, strict=True):
        pool.register(block_id, block_hash)
    pool.free(blocks)
    assert pool.find_cached(chain) == blocks  # free, yet still holding the prefix
    # Reusing them takes them out of the free list; the cache can be shared.
    assert pool.can_take(blocks, 2) and not pool.can_take(blocks, 3)
    shared = pool.take(blocks, 0)
    assert pool.num_used == 2 and pool.ref_count(shared[0]) == 1
    pool.take(blocks, 0)
    assert pool.ref_count(shared[0]) == 2


def test_eviction_is_least_recently_freed_first_and_tail_before_head() -> None:
    pool = BlockPool(3, 4, enable_prefix_caching=True)
    chain = hashes_of(list(range(12)))
    blocks = pool.take([], 3)
    for block_id, block_hash in zip(blocks, chain, strict=True):
        pool.register(block_id, block_hash)
    pool.free(blocks)
    pool.allocate(1)  # evicts the tail block, keeps the shared head reachable
    assert pool.find_cached(chain) == blocks[:2]
    pool.allocate(2)
    assert pool.find_cached(chain) == [] and pool.num_cached == 0


def test_duplicate_block_keeps_the_first_cached_copy() -> None:
    pool = BlockPool(4, 4, enable_prefix_caching=True)
    (chain_hash,) = hashes_of([1, 2, 3, 4])
    first, second = pool.take([], 2)
    pool.register(first, chain_hash)
    pool.register(second, chain_hash)
    assert pool.find_cached([chain_hash]) == [first]
    assert pool.num_cached == 1


def test_caching_disabled_finds_nothing() -> None:
    pool = BlockPool(4, 4, enable_prefix_caching=False)
    (chain_hash,) = hashes_of([1, 2, 3, 4])
    (block,) = pool.take([], 1)
    pool.register(block, chain_hash)
    assert pool.find_cached([chain_hash]) == []
