"""Token counting: exact with OpenAI's encodings, proven bounds, framing, images, caching."""

from __future__ import annotations

import base64
import struct
import zlib
from concurrent.futures import ThreadPoolExecutor

import bpe_openai
from hypothesis import given, settings
from hypothesis import strategies as st

from gateway.classify.images import BASE_TOKENS, MAX_TOKENS, image_tokens, tiled_tokens
from gateway.classify.profiler import RequestClassifier
from gateway.classify.tokens import (
    PER_MESSAGE_TOKENS,
    REPLY_PRIMER_TOKENS,
    TokenCounter,
    count_text,
    utf8_len,
)
from gateway.types import Endpoint, RouteRequest

COUNTER = TokenCounter("o200k_base")


def chat(*contents: str) -> dict[str, object]:
    return {"messages": [{"role": "user", "content": c} for c in contents]}


def test_known_counts_in_both_encodings() -> None:
    assert count_text("hello world", "o200k_base") == 2
    assert count_text("hello world", "cl100k_base") == 2
    assert count_text("<|endoftext|>", "cl100k_base") > 1  # special tokens count as text


async def test_chat_count_is_openais_recipe() -> None:
    result = await COUNTER.count(Endpoint.CHAT, chat("hello world", "how are you?"), [0])
    text = count_text("hello world") + count_text("how are you?") + 2 * count_text("user")
    assert result.exact
    assert result.tokens == text + 2 * PER_MESSAGE_TOKENS + REPLY_PRIMER_TOKENS


async def test_far_below_every_threshold_the_count_is_an_estimate_under_a_proven_bound() -> None:
    payload = chat("word " * 300)
    bounded = await COUNTER.count(Endpoint.CHAT, payload, [100_000])
    exact = await COUNTER.count(Endpoint.CHAT, payload, [1])
    assert not bounded.exact and exact.exact
    assert exact.tokens <= bounded.upper_bound
    assert bounded.tokens <= bounded.upper_bound
    assert abs(bounded.tokens - exact.tokens) / exact.tokens < 0.6


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=400), st.sampled_from(["o200k_base", "cl100k_base"]))
def test_fast_count_equals_the_encoders_token_list(text: str, name: str) -> None:
    # The count skips building the token list; it must be the list's length, lone
    # surrogates included (the encoder replaces them).
    assert count_text(text, name) == len(bpe_openai.get_encoding(name).encode_ordinary(text))


def test_fast_count_on_long_mixed_text() -> None:
    text = "def f(x):\n    return x  # naïve — ünïcode 数字 123456789\n\t\t 😀\ud800 " * 3000
    for name in ("o200k_base", "cl100k_base"):
        assert count_text(text, name) == len(bpe_openai.get_encoding(name).encode_ordinary(text))


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=400))
def test_bytes_bound_every_exact_count(text: str) -> None:
    assert count_text(text) <= utf8_len(text)


async def test_tools_and_names_and_completion_prompts_count() -> None:
    tools = {"tools": [{"type": "function", "function": {"name": "lookup", "parameters": {
        "type": "object", "properties": {"q": {"type": "string"}}}}}]}
    plain = await COUNTER.count(Endpoint.CHAT, chat("hi"), [0])
    with_tools = await COUNTER.count(Endpoint.CHAT, {**chat("hi"), **tools}, [0])
    assert with_tools.tokens > plain.tokens + 10
    ids = await COUNTER.count(Endpoint.COMPLETIONS, {"prompt": [1, 2, 3, 4]}, [0])
    assert ids.tokens == 4
    batch = await COUNTER.count(Endpoint.EMBEDDINGS, {"input": ["hello world", "hi"]}, [0])
    assert batch.tokens == 3


async def test_large_texts_go_to_the_executor_and_counts_are_cached() -> None:
    calls: list[int] = []

    class CountingPool(ThreadPoolExecutor):
        def submit(self, fn, /, *args, **kwargs):  # type: ignore[no-untyped-def,override]
            calls.append(1)
            return super().submit(fn, *args, **kwargs)

    with CountingPool(1) as pool:
        counter = TokenCounter("o200k_base", executor=pool, inline_limit_bytes=1000)
        history = "a long earlier turn of the conversation. " * 100
        first = await counter.count(Endpoint.CHAT, chat(history), [0])
        assert calls == [1]
        again = await counter.count(Endpoint.CHAT, chat(history, "short follow-up"), [0])
        assert calls == [1]  # the history was cached; the short turn counted inline
        assert again.tokens > first.tokens
        assert first.tokens == (await COUNTER.count(Endpoint.CHAT, chat(history), [0])).tokens


def _png(width: int, height: int) -> str:
    header = b"\x89PNG\r\n\x1a\n" + struct.pack(">I", 13) + b"IHDR"
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    data = header + ihdr + struct.pack(">I", zlib.crc32(b"IHDR" + ihdr))
    return "data:image/png;base64," + base64.b64encode(data).decode()


def test_image_tokens_follow_openais_tiling() -> None:
    assert tiled_tokens(1024, 1024) == 765  # OpenAI's documented example
    assert tiled_tokens(2048, 4096) == 1105
    assert image_tokens({"url": _png(1024, 1024)}) == 765
    assert image_tokens({"url": _png(1024, 1024), "detail": "low"}) == BASE_TOKENS
    assert image_tokens({"url": "https://example.com/cat.png"}) == MAX_TOKENS
    assert image_tokens({"url": "data:image/png;base64,!!!"}) == MAX_TOKENS


@settings(max_examples=150, deadline=None)
@given(st.lists(st.sampled_from([
    "def f(x):\n", "    return x\n", "\n", "  \n", "Hello world. ", "/path/to\n", ".\n/",
    "a, b; c\n", "🙂 ", "\t\n", "12345\n", "x", " ", "—", "\r\n", "/", "'s\n", ">>\n",
]), min_size=1, max_size=400), st.integers(min_value=2, max_value=4))
def test_safe_splits_count_exactly(pieces: list[str], parts: int) -> None:
    from gateway.classify.tokens import split_exact

    text = "".join(pieces) * 20
    split = split_exact(text, parts)
    assert "".join(split) == text
    for enc in ("o200k_base", "cl100k_base"):
        assert sum(count_text(p, enc) for p in split) == count_text(text, enc)


async def test_a_profile_counts_other_encodings_the_pool_needs() -> None:
    hindi = "सरकार ने बुधवार को ऊर्जा की बढ़ती कीमतों से निपटने के लिए नए उपायों की घोषणा की। " * 20
    request = RouteRequest("r", Endpoint.CHAT, "m", chat(hindi))
    classifier = RequestClassifier(TokenCounter("o200k_base"))
    profile = await classifier.profile(request, [1], other_encodings=[("cl100k_base", [1])])
    (encoding, cl100k), = profile.prompt_tokens_by_encoding
    assert encoding == "cl100k_base"
    exact = await TokenCounter("cl100k_base").count(Endpoint.CHAT, chat(hindi), [1])
    assert cl100k == exact.tokens
    assert cl100k > 2 * profile.prompt_tokens  # why a fixed ratio would not do
    plain = await classifier.profile(request, [1])
    assert plain.prompt_tokens_by_encoding == ()
