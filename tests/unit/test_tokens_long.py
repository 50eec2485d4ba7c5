"""Counting text longer than the encoder takes in one call (a 500 before it was split)."""

from __future__ import annotations

from gateway.classify.tokens import ENCODE_MAX_CHARS, count_many


def test_text_over_the_encoder_limit_is_counted_in_pieces() -> None:
    line = "lorem ipsum dolor\n"
    short, long = line * 1000, line * (ENCODE_MAX_CHARS // len(line) * 3)
    per_line = count_many([short], "o200k_base")[0] / 1000
    counted = count_many([long], "o200k_base")[0]
    # Split at exact points (after newlines): the same count per line as in short text.
    assert abs(counted - per_line * len(long) / len(line)) <= 2


def test_text_with_no_split_point_is_cut_and_still_counted() -> None:
    assert count_many(["x" * (2 * ENCODE_MAX_CHARS + 5)], "o200k_base")[0] > 0
