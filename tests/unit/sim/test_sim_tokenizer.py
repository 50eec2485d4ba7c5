"""The sim's tokenizer: lossless, deterministic, plausible counts, chat-template overhead."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from gateway.sim.tokenizer import BOS_ID, NUM_SPECIAL_IDS, SimTokenizer, split_pieces


@given(st.text())
def test_split_is_lossless(text: str) -> None:
    assert "".join(split_pieces(text)) == text


@given(st.text(min_size=1))
def test_ids_are_stable_across_instances_and_in_range(text: str) -> None:
    a, b = SimTokenizer(32000), SimTokenizer(32000)
    ids = a.encode(text)
    assert ids == b.encode(text)
    assert all(NUM_SPECIAL_IDS <= t < 32000 for t in ids)


def test_counts_look_like_a_bpe_tokenizer() -> None:
    pieces = split_pieces("Hello, how are you doing today? Internationalization costs 12345!")
    assert pieces[:4] == ["Hello", ",", " how", " are"]
    assert [" 123", "45"] == pieces[-3:-1]
    assert any(p.startswith(" Intern") for p in pieces)  # long words split
    assert 15 <= len(pieces) <= 20


def test_decode_inverts_encode_and_names_special_tokens() -> None:
    tokenizer = SimTokenizer(32000)
    ids = tokenizer.encode("The cache, warmed.", add_special_tokens=True)
    assert ids[0] == BOS_ID
    assert tokenizer.decode(ids) == "<|begin_of_text|>The cache, warmed."


def test_chat_template_costs_a_few_tokens_per_message() -> None:
    tokenizer = SimTokenizer(32000)
    content = len(tokenizer.encode("Hi there")) + len(tokenizer.encode("Be brief."))
    ids = tokenizer.apply_chat_template([("system", "Be brief."), ("user", "Hi there")])
    assert len(ids) == 1 + content + 2 * 5 + 4  # BOS, 5 per turn, assistant header
    without = tokenizer.apply_chat_template([("user", "x")], add_generation_prompt=False)
    assert len(without) == 1 + 1 + 5


def test_tools_are_a_stable_prefix() -> None:
    tokenizer = SimTokenizer(32000)
    one = tokenizer.apply_chat_template([("user", "a")], tools_text='[{"name": "f"}]')
    two = tokenizer.apply_chat_template([("user", "b c d")], tools_text='[{"name": "f"}]')
    shared = len(
        tokenizer.apply_chat_template([], tools_text='[{"name": "f"}]', add_generation_prompt=False)
    )
    assert one[:shared] == two[:shared]
    assert len(one) > len(tokenizer.apply_chat_template([("user", "a")]))
