"""BERT-uncased WordPiece token ids for the static encoder, fast on ASCII text.

The `tokenizers` library is exact for every script but costs ~1.4 ms for 2,000 characters
(normalisation, offsets and an Encoding object per call); the request path needs ids only.
ASCII text — most prompts — takes a Python path that gives the same ids (a test holds the
two equal over a corpus) in about a tenth of that; of other text, only the whitespace-
separated chunks that are not ASCII go to the library."""

from __future__ import annotations

import re
from typing import Any

# BERT's basic tokenizer on lower-cased ASCII: runs of letters and digits are words, every
# other printable character is a token of its own, whitespace and control characters go.
_ASCII_WORDS = re.compile(r"[a-z0-9]+|[!-/:-@\[-`{-~]")
# BERT's normaliser deletes control characters (tab, newline and carriage return are spaces).
_CONTROL_LIST = "".join(map(chr, (*range(9), 11, 12, *range(14, 32), 127)))
_CONTROLS = str.maketrans("", "", _CONTROL_LIST)
_CONTROL_CHARS = re.compile(f"[{re.escape(_CONTROL_LIST)}]")
# The library matches its special tokens ("[CLS]", ...) in raw text before anything else;
# text holding one takes the library's path.
_SPECIAL = re.compile(r"\[(?:UNK|CLS|SEP|PAD|MASK)\]")
_SPACES = " \t\n\r"  # what BERT splits on before anything else (with Unicode spaces)
_NON_ASCII = re.compile(r"[^\x00-\x7f]+")
_MAX_WORD_CHARS = 100  # BERT's limit: a longer word is [UNK]
# Distinct out-of-vocabulary words and non-ASCII chunks remembered per process (ASCII words
# hold only lower-case letters and digits, so the two kinds of key never collide).
_CACHE_LIMIT = 50_000


class WordPiece:
    """Token ids without special tokens, padding or truncation."""

    __slots__ = ("_cache", "_library", "_unk", "_vocab")

    def __init__(self, library_tokenizer: Any) -> None:
        self._library = library_tokenizer
        self._vocab: dict[str, int] = library_tokenizer.get_vocab()
        self._unk = self._vocab["[UNK]"]
        self._cache: dict[str, tuple[int, ...]] = {}

    @property
    def vocab_size(self) -> int:
        return len(self._vocab)

    def ids(self, text: str) -> list[int]:
        if "[" in text and _SPECIAL.search(text):
            return self._library_ids([text])[0]
        if text.isascii():
            return self._ascii_ids(text)
        # BERT never joins across a space, tab or line break, and normalises character by
        # character: so each whitespace-separated chunk is tokenized alone, ASCII ones here
        # and the rest (one batch) by the library. A curly quote no longer sends the whole
        # prompt down the slow path.
        if _CONTROL_CHARS.search(text):  # rare; translate is slow on non-ASCII text
            text = text.translate(_CONTROLS)
        out: list[int] = []
        done = 0
        for run in _NON_ASCII.finditer(text):
            if run.start() < done:
                continue  # inside the chunk just handled
            start = max(text.rfind(c, done, run.start()) for c in _SPACES) + 1
            ends = [i for c in _SPACES if (i := text.find(c, run.end())) >= 0]
            end = min(ends) if ends else len(text)
            out.extend(self._ascii_ids(text[done:start]))  # the ASCII between, in one pass
            out.extend(self._foreign(text[start:end]))
            done = end
        out.extend(self._ascii_ids(text[done:]))
        return out

    def _foreign(self, chunk: str) -> tuple[int, ...]:
        # Chunks repeat (an arrow, a name, a word of another language): one library call
        # each (~20 µs; its batch call costs more, starting its thread pool) is remembered.
        cached = self._cache.get(chunk)
        if cached is None:
            cached = tuple(self._library_ids([chunk])[0])
            self._remember(chunk, cached)
        return cached

    def _library_ids(self, texts: list[str]) -> list[list[int]]:
        # A lone surrogate is valid in a str but not in UTF-8, which the library needs.
        clean = [t if _encodable(t) else t.encode("utf-8", "replace").decode("utf-8")
                 for t in texts]
        return [self._library.encode(t, add_special_tokens=False).ids for t in clean]

    def _remember(self, key: str, ids: tuple[int, ...]) -> None:
        if len(self._cache) >= _CACHE_LIMIT:
            self._cache.clear()  # bounded: a flood of random words cannot grow it
        self._cache[key] = ids

    def _ascii_ids(self, text: str) -> list[int]:
        vocab = self._vocab
        out: list[int] = []
        for word in _ASCII_WORDS.findall(text.translate(_CONTROLS).lower()):
            token = vocab.get(word)
            if token is not None:
                out.append(token)
            else:
                out.extend(self._pieces(word))
        return out

    def _pieces(self, word: str) -> tuple[int, ...]:
        cached = self._cache.get(word)
        if cached is not None:
            return cached
        pieces = self._split(word)
        self._remember(word, pieces)
        return pieces

    def _split(self, word: str) -> tuple[int, ...]:
        """Greedy longest-match-first, continuations prefixed "##"; [UNK] if any part fails."""
        if len(word) > _MAX_WORD_CHARS:
            return (self._unk,)
        vocab = self._vocab
        pieces: list[int] = []
        start = 0
        while start < len(word):
            end = len(word)
            found = None
            while start < end:
                piece = word[start:end] if start == 0 else "##" + word[start:end]
                found = vocab.get(piece)
                if found is not None:
                    break
                end -= 1
            if found is None:
                return (self._unk,)
            pieces.append(found)
            start = end
        return tuple(pieces)


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True
