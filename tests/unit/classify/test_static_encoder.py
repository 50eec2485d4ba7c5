"""The static encoder: its fast WordPiece path agrees with the tokenizer library, prompts are
unit vectors, bad input is bounded, and a broken table is refused naming the file."""

from __future__ import annotations

import json
import time
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tokenizers import Tokenizer

from gateway.classify.static_encoder import (
    DEFAULT_TABLE_PATH,
    TOKENIZER_PATH,
    EncoderTableError,
    StaticEncoder,
    clip,
)
from gateway.offline.distillation.encoder_distill import write_table

SHARED = Path(__file__).resolve().parents[3].parent / "shared" / "data"


@pytest.fixture(scope="module")
def library() -> Tokenizer:
    tokenizer = Tokenizer.from_file(str(TOKENIZER_PATH))
    tokenizer.no_padding()
    tokenizer.no_truncation()
    return tokenizer


def _ascii_prompts() -> list[str]:
    prompts = [
        "What is the capital of France?", "def f(x): return x**2  # squares!",
        "Über-long word: pneumonoultramicroscopicsilicovolcanoconiosis", "a" * 150,
        "e-mail me at bob@example.com; cost $3.50 (approx.) 50% off!!!", "",
        "TABS\tand\nnewlines\r\n and `code` {braces} [brackets] <tags> ~tilde^caret|pipe",
    ]
    path = SHARED / "routing" / "arena_bench_v1_judgments.jsonl"
    if path.is_file():
        with path.open(encoding="utf-8") as lines:
            prompts += [json.loads(line)["prompt"] for line in lines]
    return [p for p in prompts if p.isascii()]


def test_fast_path_gives_the_library_ids_on_ascii_text(library: Tokenizer) -> None:
    encoder = StaticEncoder.load()
    prompts = _ascii_prompts()
    assert len(prompts) > 5
    for prompt in prompts:
        assert encoder._tokenizer.ids(prompt) == library.encode(
            prompt, add_special_tokens=False).ids, prompt[:80]


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.characters(min_codepoint=0, max_codepoint=127), max_size=300))
def test_fast_path_agrees_on_any_ascii(text: str) -> None:
    library = Tokenizer.from_file(str(TOKENIZER_PATH))
    library.no_padding()
    library.no_truncation()
    assert StaticEncoder.load()._tokenizer.ids(text) == library.encode(
        text, add_special_tokens=False).ids


@settings(max_examples=100, deadline=None)
@given(st.text(max_size=400))
def test_any_text_encodes_to_a_unit_or_zero_vector(text: str) -> None:
    vector = StaticEncoder.load().encode(text)
    norm = float(np.linalg.norm(vector))
    assert vector.shape == (256,) and np.all(np.isfinite(vector))
    assert norm == 0.0 or abs(norm - 1.0) < 1e-4


def test_related_prompts_are_closer_than_unrelated_ones() -> None:
    encoder = StaticEncoder.load()
    capital_fr = encoder.encode("What is the capital of France?")
    capital_de = encoder.encode("Which city is the capital of Germany?")
    proof = encoder.encode("Prove that every planar graph is five-colourable.")
    assert capital_fr @ capital_de > capital_fr @ proof + 0.2


def test_bad_input_is_bounded() -> None:
    encoder = StaticEncoder.load()
    junk = bytes(range(256)).decode("latin-1") * 4000
    for text in ("", "x" * 1_000_000, junk, "数学证明 🚀🔥 доказательство ∀x∃y " * 5000,
                 "\ud800 lone surrogate"):
        started = time.perf_counter()
        vector = encoder.encode(text)
        assert time.perf_counter() - started < 1.0
        assert np.all(np.isfinite(vector))
    assert len(clip("y" * 1_000_000)) < 4096


def test_token_weights_scale_each_token(tmp_path: Path) -> None:
    encoder = StaticEncoder.load()
    weights = np.ones(encoder.vocab_size, dtype=np.float32)
    the = encoder.token_ids("the")[0]
    weights[the] = 0.0
    weighted = encoder.with_token_weights(weights)
    assert np.allclose(weighted.encode("the theorem"), encoder.encode("theorem"), atol=1e-6)
    with pytest.raises(EncoderTableError, match="token weights"):
        encoder.with_token_weights(np.ones(3, dtype=np.float32))


def test_a_missing_or_corrupt_table_is_refused_naming_the_file(tmp_path: Path) -> None:
    missing = tmp_path / "nope.npz"
    with pytest.raises(EncoderTableError, match=str(missing)):
        StaticEncoder.load(missing)
    corrupt = tmp_path / "corrupt.npz"
    corrupt.write_bytes(DEFAULT_TABLE_PATH.read_bytes()[:5000])
    with pytest.raises(EncoderTableError, match="corrupt"):
        StaticEncoder.load(corrupt)
    wrong_size = tmp_path / "small.npz"
    write_table(wrong_size, np.zeros((10, 4), np.int8), np.ones(10, np.float32),
                {"format": "gateway-static-encoder/1", "name": "tiny", "digest": "0"})
    with pytest.raises(EncoderTableError, match="10 rows"):
        StaticEncoder.load(wrong_size)
    bad_format = tmp_path / "format.npz"
    write_table(bad_format, np.zeros((10, 4), np.int8), np.ones(10, np.float32),
                {"format": "something-else"})
    with pytest.raises(EncoderTableError, match="unknown format"):
        StaticEncoder.load(bad_format)


def test_the_shipped_table_is_what_its_record_says() -> None:
    import hashlib

    from gateway.classify.static_encoder import read_table

    rows, scales, meta = read_table(DEFAULT_TABLE_PATH)
    assert rows.shape == (30522, 256) and rows.dtype == np.int8
    assert hashlib.sha256(rows.tobytes() + scales.tobytes()).hexdigest() == meta["digest"]
    assert meta["source_sha256"] == (
        "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6")
    assert DEFAULT_TABLE_PATH.stat().st_size < 10_000_000  # the wheel budget


MIXED = st.lists(st.one_of(
    st.text(alphabet=st.characters(min_codepoint=0, max_codepoint=127), max_size=20),
    st.sampled_from(["café", "naïve", "’", "“quoted”", "—", "…", "数学", "证明题", "🚀",
                     "доказательство", "Ünïcödé", "\u00a0", "\u3000", "\x85", "\u2028",
                     "ﬁ", "Å", "١٢٣", "[UNK]", " ", "\n"])), max_size=30).map("".join)


@settings(max_examples=300, deadline=None)
@given(MIXED)
def test_mixed_scripts_give_the_library_ids(text: str) -> None:
    library = Tokenizer.from_file(str(TOKENIZER_PATH))
    library.no_padding()
    library.no_truncation()
    assert StaticEncoder.load()._tokenizer.ids(text) == library.encode(
        text, add_special_tokens=False).ids
