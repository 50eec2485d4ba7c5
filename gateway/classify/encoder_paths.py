"""Where the shipped encoder table, its tokenizer and the complexity model over them live
(no numpy here: the CLI names these paths in its help before anything heavy loads)."""

from __future__ import annotations

from pathlib import Path

MODELS_DIR = Path(__file__).parent / "models"
ENCODER_DIR = MODELS_DIR / "encoder"
DEFAULT_TABLE_PATH = ENCODER_DIR / "minilm_static.npz"
TOKENIZER_PATH = ENCODER_DIR / "tokenizer.json"
DEFAULT_COMPLEXITY_PATH = MODELS_DIR / "complexity_encoder.json"
# The complexity model over the full MiniLM encoder (GATEWAY_COMPLEXITY_ENCODER=minilm).
MINILM_COMPLEXITY_PATH = MODELS_DIR / "complexity_minilm.json"
