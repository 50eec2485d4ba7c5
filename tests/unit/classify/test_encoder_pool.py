"""The micro-batcher over an in-process fake encoder: batches form, respect their bounds, and a
failure or a cancellation reaches exactly the callers it should."""

from __future__ import annotations

import asyncio

import numpy as np
import pytest

from gateway.classify.encoder_pool import (
    EncoderBatchFailed,
    EncoderPool,
    EncoderPoolClosed,
    EncoderPoolOverloaded,
    EncoderPoolTimeout,
    PoolLimits,
)
from gateway.classify.full_encoder import length_groups
from gateway.classify.static_encoder import EncoderInfo


class FakeEncoder:
    """A text's vector is [len(text)]; records each batch it was given."""

    def __init__(self, delay_s: float = 0.0, fail_on: str | None = None) -> None:
        self.batches: list[list[str]] = []
        self.delay_s = delay_s
        self.fail_on = fail_on
        self.closed = False

    async def encode_batch(self, texts: list[str]) -> np.ndarray:
        self.batches.append(list(texts))
        await asyncio.sleep(self.delay_s)
        if self.fail_on is not None and self.fail_on in texts:
            raise RuntimeError("model fell over")
        return np.array([[float(len(t))] for t in texts], dtype=np.float32)

    async def warm(self, timeout_s: float) -> EncoderInfo:
        return EncoderInfo("fake", "0", 1)

    async def aclose(self) -> None:
        self.closed = True


def run(coroutine: object) -> object:
    return asyncio.run(coroutine)  # type: ignore[arg-type]


def test_concurrent_requests_share_one_batch_and_each_gets_its_own_vector() -> None:
    fake = FakeEncoder()

    async def scenario() -> list[np.ndarray]:
        async with EncoderPool(fake, PoolLimits(window_s=0.05)) as pool:
            return await asyncio.gather(*(pool.encode("x" * n) for n in range(1, 6)))

    vectors = run(scenario())
    assert [float(v[0]) for v in vectors] == [1.0, 2.0, 3.0, 4.0, 5.0]  # type: ignore[union-attr]
    assert len(fake.batches) == 1 and len(fake.batches[0]) == 5
    assert fake.closed


def test_max_batch_is_respected() -> None:
    fake = FakeEncoder()

    async def scenario() -> None:
        async with EncoderPool(fake, PoolLimits(window_s=0.05, max_batch=4)) as pool:
            await asyncio.gather(*(pool.encode(str(i)) for i in range(10)))

    run(scenario())
    assert max(len(b) for b in fake.batches) <= 4
    assert sum(len(b) for b in fake.batches) == 10


def test_a_request_after_the_window_goes_in_a_later_batch() -> None:
    fake = FakeEncoder()

    async def scenario() -> None:
        async with EncoderPool(fake, PoolLimits(window_s=0.01)) as pool:
            first = asyncio.create_task(pool.encode("a"))
            await asyncio.sleep(0.1)
            await asyncio.gather(first, pool.encode("b"))

    run(scenario())
    assert fake.batches == [["a"], ["b"]]


def test_a_failing_batch_fails_every_caller_in_it_with_the_cause() -> None:
    fake = FakeEncoder(fail_on="bad")

    async def scenario() -> list[object]:
        async with EncoderPool(fake, PoolLimits(window_s=0.05)) as pool:
            return await asyncio.gather(pool.encode("bad"), pool.encode("good"),
                                        return_exceptions=True)

    results = run(scenario())
    assert all(isinstance(r, EncoderBatchFailed) for r in results)  # type: ignore[union-attr]
    assert all(isinstance(r.__cause__, RuntimeError) for r in results)  # type: ignore[union-attr]
    assert results[0] is not results[1]  # type: ignore[index]


def test_a_cancelled_caller_does_not_break_the_batch_for_others() -> None:
    fake = FakeEncoder(delay_s=0.05)

    async def scenario() -> np.ndarray:
        async with EncoderPool(fake, PoolLimits(window_s=0.02)) as pool:
            doomed = asyncio.create_task(pool.encode("doomed"))
            survivor = asyncio.create_task(pool.encode("xyz"))
            await asyncio.sleep(0.03)  # both are in a running batch now
            doomed.cancel()
            vector = await survivor
            with pytest.raises(asyncio.CancelledError):
                await doomed
            return vector

    assert float(run(scenario())[0]) == 3.0  # type: ignore[index]


def test_a_caller_cancelled_while_waiting_is_not_sent() -> None:
    fake = FakeEncoder()

    async def scenario() -> None:
        async with EncoderPool(fake, PoolLimits(window_s=0.05)) as pool:
            doomed = asyncio.create_task(pool.encode("doomed"))
            await asyncio.sleep(0)
            doomed.cancel()
            await pool.encode("kept")

    run(scenario())
    assert fake.batches == [["kept"]]


def test_a_slow_batch_times_out() -> None:
    async def scenario() -> None:
        limits = PoolLimits(window_s=0.0, batch_timeout_s=0.05)
        async with EncoderPool(FakeEncoder(delay_s=1.0), limits) as pool:
            with pytest.raises(EncoderPoolTimeout):
                await pool.encode("slow")

    run(scenario())


def test_a_full_queue_refuses_with_a_clear_error() -> None:
    async def scenario() -> None:
        limits = PoolLimits(window_s=0.0, max_batch=1, max_queue=2, max_in_flight=1)
        async with EncoderPool(FakeEncoder(delay_s=0.2), limits) as pool:
            waiting = [asyncio.create_task(pool.encode("running"))]
            await asyncio.sleep(0.02)
            waiting += [asyncio.create_task(pool.encode(str(i))) for i in range(2)]
            await asyncio.sleep(0.02)  # one running, two queued
            with pytest.raises(EncoderPoolOverloaded, match="waiting"):
                await pool.encode("one too many")
            await asyncio.gather(*waiting)

    run(scenario())


def test_close_fails_waiting_callers_and_refuses_new_ones() -> None:
    async def scenario() -> None:
        limits = PoolLimits(window_s=0.0, max_batch=1, max_in_flight=1)
        pool = EncoderPool(FakeEncoder(delay_s=0.1), limits)
        pool.start()
        running = asyncio.create_task(pool.encode("running"))
        queued = asyncio.create_task(pool.encode("queued"))
        await asyncio.sleep(0.02)
        await pool.close()
        assert float((await running)[0]) == 7.0
        with pytest.raises(EncoderPoolClosed):
            await queued
        with pytest.raises(EncoderPoolClosed):
            await pool.encode("late")

    run(scenario())


def test_length_groups_keep_similar_lengths_together_and_cover_every_index() -> None:
    groups = length_groups([5, 200, 6, 210, 7, 40])
    assert sorted(i for g in groups for i in g) == list(range(6))
    assert [0, 2, 4] in groups and [1, 3] in groups and [5] in groups


def test_a_missing_onnxruntime_is_one_line_naming_the_extra(
        monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    from gateway.classify.full_encoder import FullEncoder, FullEncoderUnavailable

    monkeypatch.setitem(sys.modules, "onnxruntime", None)  # import now raises ImportError
    with pytest.raises(FullEncoderUnavailable) as caught:
        FullEncoder.load()
    message = str(caught.value)
    assert "\n" not in message and "pip install 'llm-routing-gateway[encoder]'" in message
