"""Person-name recall in other languages' text: sentences written for the project in German,
Spanish, French, Portuguese, Italian, Polish, Turkish and Dutch, each with the names it holds
(`{"text", "lang", "names"}` per line). Scored as the Presidio sentences are (a name counts
as found when person spans cover half of it), overall with a bootstrap interval over
sentences, and per language."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from gateway.classify.payload_text import SpanScanner
from gateway.offline.evaluation.sensitivity_eval import (
    GoldSpan,
    Interval,
    PiiExample,
    evaluate_pii,
)
from gateway.types import SensitiveSpan

DEFAULT_NAMES_PATH = Path("evaluation") / "names_other_languages.jsonl"


@dataclass(frozen=True, slots=True)
class NameRecall:
    language: str  # "all" for the whole file
    names: int
    found: int
    interval: Interval | None  # for "all" only

    @property
    def recall(self) -> float:
        return self.found / self.names if self.names else 0.0


def load_name_examples(path: Path) -> list[tuple[str, PiiExample]]:
    """(language, example) per line; each sentence is its own bootstrap cluster."""
    examples = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines()):
        if not line.strip():
            continue
        row = json.loads(line)
        text = row["text"]
        spans = []
        for name in row["names"]:
            at = text.find(name)
            if at < 0:
                raise ValueError(f"{path}:{number + 1}: {name!r} is not in its text")
            spans.append(GoldSpan("person", at, at + len(name)))
        examples.append((row["lang"], PiiExample(text, tuple(spans), True, number)))
    return examples


class _ScannedOnce:
    """The scanner's spans for each text, computed once: every sentence is scored overall and
    again with its language."""

    def __init__(self, scanner: SpanScanner) -> None:
        self._scanner = scanner
        self._spans: dict[str, list[SensitiveSpan]] = {}

    def scan(self, text: str) -> list[SensitiveSpan]:
        if text not in self._spans:
            self._spans[text] = self._scanner.scan(text)
        return self._spans[text]

    def scan_for_redaction(self, text: str) -> list[SensitiveSpan]:
        return self._scanner.scan_for_redaction(text)


def name_recall(scanner: SpanScanner, examples: list[tuple[str, PiiExample]],
                rounds: int = 2000) -> list[NameRecall]:
    """Overall (with a 90 % interval when `rounds` > 0), then one row per language."""
    once = _ScannedOnce(scanner)
    rows = []
    for language in ("all", *sorted({lang for lang, _ in examples})):
        chosen = [e for lang, e in examples if language in ("all", lang)]
        report = evaluate_pii(once, chosen, rounds=rounds if language == "all" else 0)
        score = next((s for s in report.scores if s.type == "person"), None)
        rows.append(NameRecall(language, score.gold if score else 0,
                               score.found if score else 0, report.interval("person")))
    return rows
