"""Reading a classifier's JSON document and checking the featurizer it was built for: one
wording of each refusal for the complexity model, the task model and fitted routers."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from gateway.classify.complexity_features import FEATURIZER_VERSION, HEAD_CHARS, TAIL_CHARS

FEATURIZER = {"version": FEATURIZER_VERSION, "head_chars": HEAD_CHARS, "tail_chars": TAIL_CHARS}


def read_document(path: Path, what: str, error: type[ValueError],
                  missing: str | None = None) -> Any:
    """The parsed JSON at `path`; every way of failing is an `error` naming the file."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise error(missing or f"{what} not found: {path}") from exc
    except json.JSONDecodeError as exc:
        raise error(f"{what} is not valid JSON: {path}: {exc}") from exc
    except (OSError, UnicodeDecodeError) as exc:
        raise error(f"cannot read {what} {path}: {exc}") from exc


def check_featurizer(document: dict[str, Any], what: str, error: type[ValueError],
                     retrain: str) -> None:
    """Refuses a model trained on features this code no longer computes."""
    found = document.get("featurizer")
    if found != FEATURIZER:
        raise error(f"{what} was trained with featurizer {found}, this code has {FEATURIZER}:"
                    f" retrain with `{retrain}`")
