"""Sensitivity scan of a request's text: which personal data, health data and credentials it
holds, as offsets only (the values themselves are never kept, logged or reported).

One scanner is built per policy (tenant detectors compiled once) and shared by all requests;
`scan` is a pure function of the text and runs on every request, so each detector works on a
prepared class map with literal-led patterns and validates only where a candidate exists.

Span types by category: pii — email, phone, payment_card, iban, us_ssn, ip_address,
date_of_birth, person, street_address; phi — medical_record_number, health_plan_number,
diagnosis; secret — secret.<format> (secret.aws_access_key, secret.jwt, secret.generic, …);
tenant detectors — custom.<name> in the category the tenant chose.

Reserved stand-ins (RFC 2606 e-mail domains, documentation IP addresses, published test cards,
documented example keys) are found too but flagged: routing and the evaluation ignore them,
since they identify nobody; redaction masks them, since masking costs nothing and guessing
wrong would leak. Private, loopback and link-local IP addresses are not reported at all.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

from gateway.classify.allowlist import Allowlist
from gateway.classify.detectors.addresses import detect_addresses
from gateway.classify.detectors.assignments import detect_assigned_secrets
from gateway.classify.detectors.aws_secrets import detect_aws_secret_keys
from gateway.classify.detectors.contact import detect_emails, detect_ipv6
from gateway.classify.detectors.custom import (
    CompiledCustom,
    CustomDetectorError,
    CustomPattern,
    KeywordList,
    compile_custom,
    detect_custom,
)
from gateway.classify.detectors.dates import detect_birth_dates
from gateway.classify.detectors.health import detect_diagnoses, detect_health_identifiers
from gateway.classify.detectors.identifiers import detect_ibans
from gateway.classify.detectors.numbers import detect_numbers
from gateway.classify.detectors.overlap import resolve
from gateway.classify.detectors.persons import detect_persons
from gateway.classify.detectors.secrets import (
    detect_private_keys,
    detect_token_secrets,
    detect_url_credentials,
)
from gateway.classify.detectors.textview import TextView, make_view
from gateway.types import SensitiveSpan

__all__ = [
    "CustomDetectorError",
    "CustomPattern",
    "KeywordList",
    "SensitivityScanner",
    "categories",
]

Detector = Callable[[TextView], list[SensitiveSpan]]

# Independent detectors; health diagnoses run after them because they need their findings.
BUILTIN_DETECTORS: tuple[Detector, ...] = (
    detect_emails,
    detect_numbers,
    detect_ipv6,
    detect_ibans,
    detect_birth_dates,
    detect_persons,
    detect_addresses,
    detect_health_identifiers,
    detect_token_secrets,
    detect_private_keys,
    detect_url_credentials,
    detect_assigned_secrets,
    detect_aws_secret_keys,
)


class SensitivityScanner:
    """Finds sensitive spans in text. Thread-safe and reusable: it holds only compiled,
    immutable detectors."""

    def __init__(self, custom: Sequence[CustomPattern | KeywordList] = (),
                 allowed: Allowlist | None = None) -> None:
        self._custom: tuple[CompiledCustom, ...] = compile_custom(custom)
        self._allowed = allowed if allowed else None

    def scan(self, text: str) -> list[SensitiveSpan]:
        """The findings that route: non-overlapping spans in text order; where detectors
        overlap, the most specific and confident finding is kept. Reserved stand-ins are
        left out."""
        return [span for span in self.scan_for_redaction(text) if not span.reserved]

    def scan_for_redaction(self, text: str) -> list[SensitiveSpan]:
        """What `scan` finds plus the reserved stand-ins (flagged `reserved`) in the gaps
        between them: everything a redacted copy masks."""
        if not text:
            return []
        view = make_view(text)
        found: list[SensitiveSpan] = []
        for detector in BUILTIN_DETECTORS:
            found.extend(detector(view))
        found.extend(detect_diagnoses(view, found))
        if self._custom:
            found.extend(detect_custom(text, self._custom))
        # After resolving: an allowed winner leaves nothing behind, not the finding it beat.
        if self._allowed is not None:
            return self._allowed.drop(text, resolve(found))
        return resolve(found)


def categories(spans: Iterable[SensitiveSpan]) -> tuple[str, ...]:
    """Sorted unique categories, e.g. ("pii", "secret"): what routing policies match on."""
    return tuple(sorted({span.category for span in spans}))
