"""What the classifier's process pool runs: module-level functions, so a pool can pickle them
by name, and the per-process scanners they share."""

from __future__ import annotations

from functools import lru_cache

from gateway.classify.allowlist import allowlist
from gateway.classify.detectors.custom import CustomPattern, KeywordList
from gateway.classify.detectors.persons import compile_name_search
from gateway.classify.sensitivity import SensitivityScanner
from gateway.classify.tokens import count_many
from gateway.types import SensitiveSpan, TenantDetector

TenantDetectors = tuple[TenantDetector, ...]


@lru_cache(maxsize=256)
def tenant_scanner(detectors: TenantDetectors) -> SensitivityScanner:
    """The built-in detectors plus a tenant's own, compiled once per distinct set (policy
    validation already compiled each regex, so this cannot fail on a loaded policy)."""
    return SensitivityScanner(tuple(
        CustomPattern(d.name, d.category, d.regex) if d.regex is not None
        else KeywordList(d.name, d.category, d.words)
        for d in detectors if not d.allow
    ), allowlist(detectors))


def scan_in_worker(text: str, detectors: TenantDetectors = ()) -> list[SensitiveSpan]:
    return tenant_scanner(detectors).scan_for_redaction(text)


def scan_and_count(
    piece: str, count_from: int, count_to: int, encoding_name: str,
    detectors: TenantDetectors = (),
) -> tuple[list[SensitiveSpan], int]:
    """One worker's part of a long prompt: scan its piece, count the tokens of its share."""
    spans = scan_in_worker(piece, detectors)
    return spans, count_many([piece[count_from:count_to]], encoding_name)[0]


def warm_worker(encoding_name: str) -> None:
    """Loads a worker's vocabulary and compiles its detectors (keyword databases included)
    before the first user's request needs them."""
    count_many(["warm"], encoding_name)
    scan_in_worker("warm name is born")
    compile_name_search()
