"""`gateway policy check FILE...` (and schema export)."""

from __future__ import annotations

import json
from pathlib import Path

import click

from gateway.policy.loader import PolicyError, load_policy
from gateway.policy.schema import PolicyFile


@click.group()
def policy() -> None:
    """Validate and inspect routing policies."""


@policy.command("check")
@click.argument("files", nargs=-1, required=True, type=click.Path(path_type=Path))
def check(files: tuple[Path, ...]) -> None:
    """Validate policy files; print every problem with file, line and key; exit 1 on any."""
    failed = False
    for path in files:
        try:
            loaded = load_policy(path)
        except PolicyError as exc:
            failed = True
            for problem in exc.problems:
                click.echo(str(problem), err=True)
            continue
        click.echo(f"{path}: ok ({len(loaded.backends)} backends, "
                   f"models: {', '.join(loaded.public_models())})")
    if failed:
        raise SystemExit(1)


@policy.command("schema")
@click.option("--output", "-o", type=click.Path(path_type=Path), default=None)
def schema(output: Path | None) -> None:
    """Print (or write) the JSON Schema of policy files, for editors."""
    text = json.dumps(PolicyFile.model_json_schema(), indent=2) + "\n"
    if output is None:
        click.echo(text, nl=False)
    else:
        output.write_text(text)
