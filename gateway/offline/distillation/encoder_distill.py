"""Distils a transformer sentence encoder (an ONNX file) into the static table the request path
reads: every vocabulary token run through the encoder once as `[CLS] token [SEP]`, mean-pooled,
reduced by PCA and quantised to int8 with one scale per row.

Offline only: onnxruntime is imported here and nowhere on the request path."""

from __future__ import annotations

import hashlib
import io
import json
import zipfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from gateway.classify.full_encoder import file_sha256
from gateway.classify.static_encoder import TABLE_FORMAT

BATCH = 512
# The tables round-trip the same ONNX file and tokenizer to the byte on one machine; across
# CPUs onnxruntime's int8 kernels may differ in the last bit, which PCA and rounding then turn
# into rows differing by at most one quantisation step (the test allows that, no more).


@dataclass(frozen=True, slots=True)
class DistillConfig:
    dims: int = 256
    vocab_limit: int | None = None  # distil only the first N ids (tests)
    name: str = "all-MiniLM-L6-v2-int8/static-256"


def find_encoder(path: Path) -> Path:
    """An ONNX file, or the one ONNX file inside a model directory."""
    if path.is_file():
        return path
    if path.is_dir():
        found = sorted(path.rglob("*.onnx"))
        if len(found) == 1:
            return found[0]
        raise ValueError(f"{path}: expected one .onnx file inside, found {len(found)}")
    raise ValueError(f"encoder not found: {path}")


def token_vectors(onnx_path: Path, vocab_size: int, cls_id: int, sep_id: int) -> np.ndarray:
    """The encoder's mean-pooled output for `[CLS] id [SEP]`, for every id (float64)."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    # One thread: the same sums in the same order on every run, so the same file comes out.
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    session = ort.InferenceSession(str(onnx_path), options, providers=["CPUExecutionProvider"])
    wanted = {i.name for i in session.get_inputs()}
    out = None
    for start in range(0, vocab_size, BATCH):
        ids = np.arange(start, min(start + BATCH, vocab_size), dtype=np.int64)
        batch = np.stack([np.full_like(ids, cls_id), ids, np.full_like(ids, sep_id)], axis=1)
        feeds = {"input_ids": batch, "attention_mask": np.ones_like(batch),
                 "token_type_ids": np.zeros_like(batch)}
        hidden = session.run(None, {k: v for k, v in feeds.items() if k in wanted})[0]
        pooled = hidden.astype(np.float64).mean(axis=1)
        if out is None:
            out = np.zeros((vocab_size, pooled.shape[1]), dtype=np.float64)
        out[start:start + len(ids)] = pooled
    assert out is not None
    return out


def reduce(vectors: np.ndarray, dims: int) -> np.ndarray:
    """PCA to `dims` components, each axis's sign fixed so its largest loading is positive."""
    centred = vectors - vectors.mean(axis=0)
    _, _, vt = np.linalg.svd(centred, full_matrices=False)
    components = vt[:dims]
    signs = np.sign(components[np.arange(len(components)), np.abs(components).argmax(axis=1)])
    return centred @ (components * signs[:, None]).T


def quantise(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    scales = np.abs(rows).max(axis=1) / 127.0
    scales[scales == 0.0] = 1.0
    q = np.clip(np.rint(rows / scales[:, None]), -127, 127).astype(np.int8)
    return q, scales.astype(np.float32)


def distill(onnx_path: Path, tokenizer_path: Path, out: Path, config: DistillConfig) -> str:
    """Writes the table to `out`; returns its digest."""
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(tokenizer_path))
    vocab_size = tokenizer.get_vocab_size()
    cls_id, sep_id = tokenizer.token_to_id("[CLS]"), tokenizer.token_to_id("[SEP]")
    if cls_id is None or sep_id is None:
        raise ValueError(f"{tokenizer_path}: no [CLS]/[SEP] tokens (a BERT-style tokenizer"
                         " is expected)")
    limit = min(vocab_size, config.vocab_limit or vocab_size)
    vectors = token_vectors(onnx_path, limit, cls_id, sep_id)
    if config.dims > min(vectors.shape):
        raise ValueError(f"--dims {config.dims} exceeds the encoder's {min(vectors.shape)}")
    rows, scales = quantise(reduce(vectors, config.dims))
    if limit < vocab_size:  # ids never distilled stay zero: they add nothing to a mean
        rows = np.vstack([rows, np.zeros((vocab_size - limit, rows.shape[1]), np.int8)])
        scales = np.concatenate([scales, np.ones(vocab_size - limit, np.float32)])
    digest = hashlib.sha256(rows.tobytes() + scales.tobytes()).hexdigest()
    meta = {"format": TABLE_FORMAT, "name": config.name, "digest": digest,
            "source": onnx_path.name, "source_sha256": file_sha256(onnx_path),
            "tokenizer_sha256": file_sha256(tokenizer_path), "dims": config.dims,
            "distilled_ids": limit, "method": "[CLS] token [SEP], mean-pooled; PCA; int8 rows"}
    write_table(out, rows, scales, meta)
    return digest


def write_table(out: Path, rows: np.ndarray, scales: np.ndarray, meta: dict[str, object]) -> None:
    """An .npz written with fixed timestamps, so the same arrays give the same bytes."""
    out.parent.mkdir(parents=True, exist_ok=True)
    arrays = {"rows": rows, "scales": scales,
              "meta": np.frombuffer(json.dumps(meta, sort_keys=True).encode(), dtype=np.uint8)}
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name, array in arrays.items():
            buffer = io.BytesIO()
            np.lib.format.write_array(buffer, np.ascontiguousarray(array), allow_pickle=False)
            info = zipfile.ZipInfo(f"{name}.npy", date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, buffer.getvalue())

