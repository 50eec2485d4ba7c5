"""What a router file records of the encoder table it was fitted against: the shipped one."""

from __future__ import annotations

import json

from gateway.classify.encoder_paths import DEFAULT_COMPLEXITY_PATH


def shipped_encoder() -> dict[str, str]:
    encoder: dict[str, str] = json.loads(
        DEFAULT_COMPLEXITY_PATH.read_text(encoding="utf-8"))["encoder"]
    return encoder
