"""BERT-uncased WordPiece token ids for the static encoder, fast on ASCII text.

The `tokenizers` library is exact for every script but costs ~1.4 ms for 2,000 characters
(normalisation, offsets and an Encoding object per call); the request path needs ids only.
ASCII text — most prompts — takes a Python path that gives the same ids (a test holds the
two equal over a corpus) in about a tenth of that; any other text goes to the library."""

from __future__ import annotations

import re
from typing import Any

# BERT's basic tokenizer on lower-cased ASCII: runs of letters and digits are words, every
# other printable character is a token of its own, whitespace and control characters go.
_ASCII_WORDS = re.compile(r"[a-z0-9]+|[!-/:-@\[-`{-~]")
# BERT's normaliser deletes control characters (tab, newline and carriage return are spaces).
_CONTROLS = str.maketrans("", "", "".join(map(chr, (*range(9), 11, 12, *range(14, 32), 127))))
# The library matches its special tokens ("[CLS]", ...) in raw text before anything else;
# text holding one takes the library's path.
_SPECIAL = re.compile(r"\[(?:UNK|CLS|SEP|PAD|MASK)\]")
_MAX_WORD_CHARS = 100  # BERT's limit: a longer word is [UNK]
_CACHE_LIMIT = 50_000  # distinct out-of-vocabulary words remembered per process


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
        if not text.isascii() or ("[" in text and _SPECIAL.search(text)):
            # A lone surrogate is valid in a str but not in UTF-8, which the library needs.
            if not _encodable(text):
                text = text.encode("utf-8", "replace").decode("utf-8")
            ids: list[int] = self._library.encode(text, add_special_tokens=False).ids
            return ids
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
        if len(self._cache) >= _CACHE_LIMIT:
            self._cache.clear()  # bounded: a flood of random words cannot grow it
        self._cache[word] = pieces
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
