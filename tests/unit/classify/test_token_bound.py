"""The tighter token bound: never below an exact count, on text built to break it."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gateway.classify.token_bound import max_tokens
from gateway.classify.tokens import TokenCounter, count_text, missing_pairs, utf8_len
from gateway.types import Endpoint

ENCODINGS = ("o200k_base", "cl100k_base")
ROOT = Path(__file__).resolve().parents[3]
README = (ROOT / "README.md").read_text()
# Letters that start or end the lower-case pairs that are not tokens, apostrophes (where
# contractions split runs), case changes (where o200k splits words), digits, spaces, newlines
# and letters outside ASCII (which join a run's pre-token without being counted in it).
ALPHABET = "abeiqxzjkvgwy" + "'’ \n\t" + "AQZ" + "09" + ".,-_/" + "éß漢😀"
WORDS = ("don't", "we'll", "it's", "they're", "I'm", "'sorry'", "iraq", "jazz", "xkcd",
         "qwerty", "Kjv", "zzz", "the", "straße", "naïve", "camelCase", "HTTPServer", "x'x",
         "'ll", "'re", "''", "aaaa", "bqbqbq")


def bound(texts: list[str], encoding: str) -> int:
    return max_tokens(texts, missing_pairs(encoding))


def exact(texts: list[str], encoding: str) -> int:
    return sum(count_text(t, encoding) for t in texts)


@pytest.mark.parametrize("encoding", ENCODINGS)
@settings(max_examples=400, deadline=None)
@given(texts=st.lists(st.text(alphabet=ALPHABET, max_size=80), max_size=4))
def test_never_below_the_exact_count_on_adversarial_characters(
    encoding: str, texts: list[str]
) -> None:
    assert exact(texts, encoding) <= bound(texts, encoding) <= sum(map(utf8_len, texts))


@pytest.mark.parametrize("encoding", ENCODINGS)
@settings(max_examples=300, deadline=None)
@given(words=st.lists(st.sampled_from(WORDS), max_size=40),
       glue=st.sampled_from([" ", "", "\n", "'", "  "]))
def test_never_below_the_exact_count_on_contractions_and_rare_pairs(
    encoding: str, words: list[str], glue: str
) -> None:
    text = glue.join(words)
    assert count_text(text, encoding) <= bound([text], encoding)


@pytest.mark.parametrize("encoding", ENCODINGS)
@settings(max_examples=200, deadline=None)
@given(text=st.text(max_size=300))
def test_never_below_the_exact_count_on_any_text(encoding: str, text: str) -> None:
    assert count_text(text, encoding) <= bound([text], encoding)


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_holds_and_saves_a_sixth_on_the_projects_own_prose_and_code(encoding: str) -> None:
    for name in ("README.md", "gateway/classify/tokens.py", "gateway/routing/service.py"):
        text = (ROOT / name).read_text()
        assert count_text(text, encoding) <= bound([text], encoding) < 0.87 * utf8_len(text)


async def test_the_tighter_bound_spares_the_exact_count_only_where_it_cannot_matter() -> None:
    counter = TokenCounter("o200k_base")
    prose = README[:8000]
    payload = {"messages": [{"role": "user", "content": prose}]}
    truth = (await counter.count(Endpoint.CHAT, payload, [0])).tokens
    tighter = bound([prose, "user"], "o200k_base") + 3 + 3
    assert truth <= tighter < utf8_len(prose)
    # Between the bound and the byte length: the byte bound alone would count exactly.
    spared = await counter.count(Endpoint.CHAT, payload, [tighter + 1])
    assert not spared.exact and spared.upper_bound == tighter and spared.tokens <= tighter
    # At or below the bound, an exact count can cross the threshold: it is counted.
    for threshold in (tighter, truth, truth - 1):
        counted = await counter.count(Endpoint.CHAT, payload, [threshold])
        assert counted.exact and counted.tokens == truth
