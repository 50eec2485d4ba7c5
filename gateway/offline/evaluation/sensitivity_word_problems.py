"""How often the scanner flags prompts that hold no personal data at all: word problems and
exam questions (GSM8K, MMLU), whose fictional people ("Natalia sold clips…") keep a request
on self-hosted backends when a person finding routes."""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from gateway.classify.payload_text import SpanScanner


@dataclass(frozen=True, slots=True)
class FlagRate:
    benchmark: str
    prompts: int
    flagged: int  # prompts with any routed finding at or above min_confidence
    person_flagged: int  # prompts with a person finding at or above min_confidence

    @property
    def rate(self) -> float:
        return self.flagged / self.prompts if self.prompts else 0.0


def word_problem_flags(scanner: SpanScanner, path: Path,
                       min_confidence: float = 0.0) -> list[FlagRate]:
    """Per benchmark in routellm_mmlu_gsm8k.jsonl (`benchmark`, `prompt` per line)."""
    prompts: Counter[str] = Counter()
    flagged: Counter[str] = Counter()
    person: Counter[str] = Counter()
    with path.open(encoding="utf-8") as lines:
        for line in lines:
            if not line.strip():
                continue
            row = json.loads(line)
            benchmark = row["benchmark"]
            spans = [s for s in scanner.scan_for_redaction(row["prompt"])
                     if not s.reserved and s.confidence >= min_confidence]
            prompts[benchmark] += 1
            flagged[benchmark] += bool(spans)
            person[benchmark] += any(s.type == "person" for s in spans)
    return [FlagRate(b, prompts[b], flagged[b], person[b]) for b in sorted(prompts)]
