"""SimTokenizer: a deterministic word/punctuation tokenizer and a Llama-3-style chat template.

Counts land near a real BPE tokenizer's for English (a word or a punctuation mark is one token,
long words and numbers split), ids are stable across processes (a keyed hash, not `hash()`),
and splitting is lossless: the pieces of a text concatenate back to it exactly.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Sequence

# Letters, up to three digits, underscores or one symbol, each with the whitespace before it;
# trailing whitespace is a piece of its own. Every character falls in exactly one piece.
_PIECE = re.compile(r"\s*(?:[^\W\d_]+|\d{1,3}|_+|[^\w\s])|\s+")
_LONG_WORD = 10  # real vocabularies hold most words up to about this length whole
_WORD_CHUNK = 6

NUM_SPECIAL_IDS = 256
BOS_ID = 1
EOS_ID = 2
START_HEADER_ID = 3
END_HEADER_ID = 4
EOT_ID = 5
SPECIAL_TOKENS: dict[int, str] = {
    BOS_ID: "<|begin_of_text|>",
    EOS_ID: "<|end_of_text|>",
    START_HEADER_ID: "<|start_header_id|>",
    END_HEADER_ID: "<|end_header_id|>",
    EOT_ID: "<|eot_id|>",
}
_MAX_REMEMBERED = 1 << 18  # bound on the id → piece table kept for /detokenize


def split_pieces(text: str) -> list[str]:
    """Split text into token pieces; "".join(split_pieces(t)) == t."""
    pieces: list[str] = []
    for match in _PIECE.finditer(text):
        piece = match.group()
        word = piece.lstrip()
        if len(word) > _LONG_WORD and word.isalpha():
            lead = len(piece) - len(word)
            cut = lead + _WORD_CHUNK
            pieces.append(piece[:cut])
            pieces.extend(piece[i : i + _WORD_CHUNK] for i in range(cut, len(piece), _WORD_CHUNK))
        else:
            pieces.append(piece)
    return pieces


class SimTokenizer:
    """Text ⇄ token ids. Keeps a bounded id → piece table so /detokenize can invert ids."""

    def __init__(self, vocab_size: int) -> None:
        self._span = vocab_size - NUM_SPECIAL_IDS
        self._ids: dict[str, int] = {}
        self._pieces: dict[int, str] = {}

    def piece_id(self, piece: str) -> int:
        known = self._ids.get(piece)
        if known is not None:
            return known
        digest = hashlib.blake2b(piece.encode("utf-8", "surrogatepass"), digest_size=8).digest()
        token_id = NUM_SPECIAL_IDS + int.from_bytes(digest, "little") % self._span
        if len(self._ids) < _MAX_REMEMBERED:
            self._ids[piece] = token_id
            self._pieces.setdefault(token_id, piece)
        return token_id

    def encode(self, text: str, *, add_special_tokens: bool = False) -> list[int]:
        ids = [BOS_ID] if add_special_tokens else []
        ids.extend(self.piece_id(p) for p in split_pieces(text))
        return ids

    def encode_pieces(self, pieces: Iterable[str]) -> list[int]:
        return [self.piece_id(p) for p in pieces]

    def token_str(self, token_id: int) -> str:
        special = SPECIAL_TOKENS.get(token_id)
        if special is not None:
            return special
        return self._pieces.get(token_id, f"<|tok_{token_id}|>")

    def decode(self, token_ids: Iterable[int]) -> str:
        return "".join(self.token_str(t) for t in token_ids)

    def apply_chat_template(
        self,
        turns: Sequence[tuple[str, str]],
        *,
        tools_text: str | None = None,
        add_generation_prompt: bool = True,
    ) -> list[int]:
        """Token ids of a chat: (role, text) turns framed like Llama 3 (5 tokens per turn).

        Tool definitions go first, in a system turn of their own, so a conversation that keeps
        the same tools keeps the same prefix (and hits the prefix cache like a real engine).
        """
        ids = [BOS_ID]
        if tools_text:
            ids.extend(self._turn("system", tools_text))
        for role, text in turns:
            ids.extend(self._turn(role, text))
        if add_generation_prompt:
            ids.extend(self._header("assistant"))
        return ids

    def _header(self, role: str) -> list[int]:
        return [START_HEADER_ID, self.piece_id(role), END_HEADER_ID, self.piece_id("\n\n")]

    def _turn(self, role: str, text: str) -> list[int]:
        return [*self._header(role), *self.encode(text), EOT_ID]
