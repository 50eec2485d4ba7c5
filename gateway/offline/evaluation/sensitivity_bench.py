"""Latency of the sensitivity scan on realistic mixed prompts (prose, maths, code, JSON logs,
sentences with personal data, configuration lines) at a given size in tokens.

The mix is drawn from the shared data when present (RouteLLM prompts, Presidio sentences,
secret-scanner cases) and from the gateway's own source code; the same seed gives the same
text, so runs are comparable.
"""

from __future__ import annotations

import json
import random
import statistics
import time
from dataclasses import dataclass
from pathlib import Path

from gateway.classify.payload_text import SpanScanner

CHARS_PER_TOKEN = 4
_SOURCE_ROOT = Path(__file__).resolve().parents[1]


@dataclass(frozen=True, slots=True)
class Latency:
    tokens: int
    chars: int
    runs: int
    p50_ms: float
    p99_ms: float
    spans: int


def mixed_text(data_root: Path | None, tokens: int, seed: int = 0) -> str:
    """About `tokens` × 4 characters of mixed prompt text."""
    rng = random.Random(seed)
    pools = _pools(data_root)
    size = tokens * CHARS_PER_TOKEN
    parts: list[str] = []
    total = 0
    while total < size:
        kind = rng.random()
        if kind < 0.45 and pools["prose"]:
            part = rng.choice(pools["prose"])
        elif kind < 0.75:
            code = rng.choice(pools["code"])
            offset = rng.randrange(max(1, len(code) - 1500))
            part = code[offset:offset + rng.randrange(200, 1500)]
        elif kind < 0.85:
            part = json.dumps({"ts": rng.randrange(10**9), "user": f"u{rng.randrange(999)}",
                               "latency_ms": round(rng.random() * 900, 2),
                               "trace": f"{rng.getrandbits(128):032x}"})
        elif kind < 0.95 and pools["personal"]:
            part = rng.choice(pools["personal"])
        else:
            part = rng.choice(pools["config"] or pools["prose"] or ["x = 1"])
        parts.append(part)
        total += len(part) + 1
    return "\n".join(parts)[:size]


def measure(scanner: SpanScanner, text: str, runs: int) -> Latency:
    scanner.scan(text)  # warm caches (compiled patterns are already built)
    samples = []
    for _ in range(runs):
        started = time.perf_counter()
        scanner.scan(text)
        samples.append(time.perf_counter() - started)
    samples.sort()
    p99 = samples[min(len(samples) - 1, int(len(samples) * 0.99))]
    return Latency(len(text) // CHARS_PER_TOKEN, len(text), runs,
                   statistics.median(samples) * 1000, p99 * 1000, len(scanner.scan(text)))


def latency_table(scanner: SpanScanner, data_root: Path | None,
                  sizes: tuple[int, ...] = (200, 2_000, 32_000, 128_000)) -> list[Latency]:
    results = []
    for tokens in sizes:
        runs = 500 if tokens <= 2_000 else (60 if tokens <= 32_000 else 25)
        results.append(measure(scanner, mixed_text(data_root, tokens, seed=tokens), runs))
    return results


def _pools(data_root: Path | None) -> dict[str, list[str]]:
    pools: dict[str, list[str]] = {"prose": [], "personal": [], "config": [], "code": []}
    # The gateway's own code, minus the detectors' word lists (not what prompts look like).
    pools["code"] = [p.read_text(encoding="utf-8") for p in sorted(_SOURCE_ROOT.rglob("*.py"))
                     if p.stat().st_size > 2000 and "detectors" not in p.parts][:60] or [
        "def f(x):\n    return x\n" * 50]
    if data_root is None:
        return pools
    routing = data_root / "routing" / "routellm_mmlu_gsm8k.jsonl"
    if routing.exists():
        with routing.open(encoding="utf-8") as lines:
            pools["prose"] = [json.loads(line)["prompt"] for line, _ in zip(lines, range(4000),
                                                                             strict=False)]
    synthetic = data_root / "pii" / "presidio_synth_dataset_v2.json"
    if synthetic.exists():
        rows = json.loads(synthetic.read_text(encoding="utf-8"))
        pools["personal"] = [row["full_text"] for row in rows]
    for name in ("detect_secrets_cases.jsonl", "gitleaks_cases.jsonl"):
        path = data_root / "secrets" / name
        if path.exists():
            pools["config"] += [json.loads(line)["text"] for line in
                                path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return pools
