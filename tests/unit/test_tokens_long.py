"""Counting text longer than the encoder takes in one call (a 500 before it was split)."""

from __future__ import annotations

from gateway.classify.tokens import ENCODE_MAX_CHARS, TokenCounter, count_many, utf8_len
from gateway.types import Endpoint


def test_text_over_the_encoder_limit_is_counted_in_pieces() -> None:
    line = "lorem ipsum dolor\n"
    short, long = line * 1000, line * (ENCODE_MAX_CHARS // len(line) * 3)
    per_line = count_many([short], "o200k_base")[0] / 1000
    counted = count_many([long], "o200k_base")[0]
    # Split at exact points (after newlines): the same count per line as in short text.
    assert abs(counted - per_line * len(long) / len(line)) <= 2


def test_text_with_no_split_point_is_cut_and_still_counted() -> None:
    assert count_many(["x" * (2 * ENCODE_MAX_CHARS + 5)], "o200k_base")[0] > 0


def test_work_less_one_text_keeps_the_others_sizes() -> None:
    long, other = "déjà vu " * 100, "naïve " * 80
    payload = {"messages": [{"role": "system", "content": other},
                            {"role": "user", "content": long}]}
    prepared = TokenCounter("o200k_base").prepare(Endpoint.CHAT, payload, [1])
    assert prepared.pending_bytes >= utf8_len(long) + utf8_len(other)
    rest = prepared.without(long)
    assert long not in rest.pending and other in rest.pending
    assert rest.pending_bytes == prepared.pending_bytes - utf8_len(long)
    assert rest.known == prepared.known
