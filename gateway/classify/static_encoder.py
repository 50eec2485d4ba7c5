"""A static sentence encoder: one distilled vector per vocabulary token, a prompt is the mean
of its tokens' vectors, L2-normalised. Numpy and the `tokenizers` library only (no torch, no
onnxruntime), so it runs on the request path in about a tenth of a millisecond."""

from __future__ import annotations

import json
import zipfile
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np

from gateway.classify.encoder_paths import DEFAULT_TABLE_PATH, TOKENIZER_PATH
from gateway.classify.wordpiece import WordPiece

TABLE_FORMAT = "gateway-static-encoder/1"
# A prompt's head and tail carry its ask; the middle of a pasted document costs time and says
# little about difficulty. Bounded reading keeps a 128K-token prompt as cheap as a 2K one.
HEAD_CHARS = 1536
TAIL_CHARS = 512


class EncoderTableError(ValueError):
    """The encoder table (or its tokenizer) is missing, unreadable or malformed."""


@dataclass(frozen=True, slots=True)
class EncoderInfo:
    """What a model fitted on this table records, so it is refused beside another one."""

    name: str  # e.g. "all-MiniLM-L6-v2-int8/static-256"
    digest: str  # sha256 of the table's int8 rows and scales
    dims: int


class StaticEncoder:
    """Token ids → mean of (int8 row × row scale × token weight) → unit vector.

    The rows stay int8 (7.8 MB for 30,522 × 256) and are scaled per lookup: a dequantised
    float32 copy would cost 31 MB per worker, and each model that weights tokens its own way
    shares the same rows with a scale vector of its own (`with_token_weights`)."""

    __slots__ = ("_rows", "_scales", "_tokenizer", "info")

    def __init__(self, rows: np.ndarray, scales: np.ndarray, info: EncoderInfo,
                 tokenizer: WordPiece) -> None:
        self._rows = rows
        self._scales = scales.astype(np.float32)
        self._tokenizer = tokenizer
        self.info = info

    @property
    def dims(self) -> int:
        return self.info.dims

    @property
    def vocab_size(self) -> int:
        return int(self._rows.shape[0])

    @classmethod
    def load(cls, path: Path | None = None, tokenizer_path: Path | None = None) -> StaticEncoder:
        """The shipped table (read once per process and shared), or the one at `path`."""
        if path is None and tokenizer_path is None:
            return _load_cached(DEFAULT_TABLE_PATH, TOKENIZER_PATH)
        return _load(path or DEFAULT_TABLE_PATH, tokenizer_path or TOKENIZER_PATH)

    def with_token_weights(self, weights: np.ndarray) -> StaticEncoder:
        """The same rows, each token's vector scaled by its weight (e.g. down-weighting words
        every prompt has, so the mean says what this prompt is about)."""
        if weights.shape != self._scales.shape:
            raise EncoderTableError(f"{weights.shape[0]} token weights for a table of"
                                    f" {self._scales.shape[0]} rows")
        return StaticEncoder(self._rows, self._scales * weights, self.info, self._tokenizer)

    def token_ids(self, text: str) -> list[int]:
        return self._tokenizer.ids(clip(text))

    def encode(self, text: str) -> np.ndarray:
        """The prompt's unit vector; the zero vector for a prompt with no tokens."""
        return self.encode_ids(self.token_ids(text))

    def encode_ids(self, ids: list[int]) -> np.ndarray:
        if not ids:
            return np.zeros(self.dims, dtype=np.float32)
        # One index array for both gathers (a list is converted on each use), and the int8
        # rows widened once: about half the time of indexing with the list.
        index = np.fromiter(ids, dtype=np.intp, count=len(ids))
        vector = np.take(self._scales, index) @ np.take(self._rows, index, axis=0).astype(
            np.float32)
        norm = float(np.linalg.norm(vector))
        return vector / norm if norm > 0.0 else vector

    def encode_many(self, texts: list[str]) -> np.ndarray:
        """Rows of `encode`, computed exactly as `encode` does (training and evaluation)."""
        out = np.zeros((len(texts), self.dims), dtype=np.float32)
        for i, text in enumerate(texts):
            out[i] = self.encode(text)
        return out


def clip(text: str) -> str:
    if len(text) <= HEAD_CHARS + TAIL_CHARS:
        return text
    return text[:HEAD_CHARS] + "\n" + text[-TAIL_CHARS:]


def read_table(path: Path) -> tuple[np.ndarray, np.ndarray, dict[str, Any]]:
    """The int8 rows, their scales and the metadata, each way of failing naming the file."""
    try:
        # The file is opened here so that it is closed however np.load fails on it.
        with path.open("rb") as file, np.load(file, allow_pickle=False) as archive:
            rows = archive["rows"]
            scales = archive["scales"]
            meta = json.loads(bytes(archive["meta"]).decode("utf-8"))
    except FileNotFoundError as exc:
        raise EncoderTableError(f"encoder table not found: {path}") from exc
    except (OSError, ValueError, KeyError, UnicodeDecodeError, zipfile.BadZipFile) as exc:
        raise EncoderTableError(f"encoder table {path} is unreadable or corrupt: {exc}") from exc
    if not isinstance(meta, dict) or meta.get("format") != TABLE_FORMAT:
        raise EncoderTableError(f"encoder table {path} has an unknown format")
    if (rows.dtype != np.int8 or rows.ndim != 2 or scales.shape != (rows.shape[0],)
            or not np.all(np.isfinite(scales))):
        raise EncoderTableError(f"encoder table {path} is malformed (rows {rows.shape}"
                                f" {rows.dtype}, scales {scales.shape})")
    return rows, scales, meta


def _load(path: Path, tokenizer_path: Path) -> StaticEncoder:
    rows, scales, meta = read_table(path)
    try:
        from tokenizers import Tokenizer

        tokenizer = Tokenizer.from_file(str(tokenizer_path))
    except Exception as exc:  # the Rust library raises its own Exception type for a bad file
        raise EncoderTableError(f"encoder tokenizer {tokenizer_path} is unusable: {exc}") from exc
    tokenizer.no_padding()
    tokenizer.no_truncation()
    if tokenizer.get_vocab_size() != rows.shape[0]:
        raise EncoderTableError(f"encoder table {path} has {rows.shape[0]} rows but the tokenizer"
                                f" {tokenizer_path} has {tokenizer.get_vocab_size()} tokens")
    info = EncoderInfo(name=str(meta.get("name", "unnamed")), digest=str(meta.get("digest", "")),
                       dims=int(rows.shape[1]))
    return StaticEncoder(rows, scales, info, WordPiece(tokenizer))


@cache
def _load_cached(path: Path, tokenizer_path: Path) -> StaticEncoder:
    return _load(path, tokenizer_path)
