"""What the routing service needs from its collaborators, as protocols: the policy in force,
the classifier, the fleet's live state and the audit sink. The composition root hands in the
real ones (PolicyStore, RequestClassifier, FleetState, AuditWriter); unit tests hand in
in-memory fakes."""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from gateway.classify.payload_text import SpanScanner
from gateway.classify.redaction import RedactionMap
from gateway.policy.runtime import PolicySet, Profiler
from gateway.scraper.fleet import Ticket
from gateway.types import AuditEvent, FleetSnapshot, Payload, Profile, RouteRequest, TenantDetector


class PolicySource(Protocol):
    """The compiled policy in force now (swapped whole on a reload)."""

    @property
    def current(self) -> PolicySet: ...

    def subscribe(self, listener: Callable[[PolicySet], None]) -> None:
        """Call `listener` with each policy that comes into force after this one."""


class Classifier(Profiler, Protocol):
    """Profiles a request (tokens, complexity, sensitivity: `Profiler.profile`, the step the
    policy runs) and redacts what it found."""

    @property
    def can_redact(self) -> bool: ...

    def redaction_scanner(
        self, request: RouteRequest, detectors: tuple[TenantDetector, ...] = (),
        profile: Profile | None = None,
    ) -> SpanScanner: ...

    def redact(
        self, request: RouteRequest, detectors: tuple[TenantDetector, ...] = (),
        profile: Profile | None = None,
    ) -> tuple[Payload, RedactionMap]: ...

    def redact_payload(
        self, request: RouteRequest, scanner: SpanScanner
    ) -> tuple[Payload, RedactionMap]: ...

    def redact_text(self, text: str, scanner: SpanScanner) -> str: ...


class FleetTracker(Protocol):
    """The fleet's live state: one immutable snapshot per decision, and each attempt's life
    (sent, first token, its verdict on the backend) fed back into it."""

    def snapshot(self) -> FleetSnapshot: ...

    def hold(self, backend: str) -> None: ...

    def unhold(self, backend: str) -> None: ...

    def dispatched(
        self, backend: str, prompt_tokens: int, kv_tokens: int, prefix_key: bytes | None = None
    ) -> Ticket: ...

    def first_token(self, ticket: Ticket) -> None: ...

    def succeeded(self, ticket: Ticket, ttft_s: float | None, tpot_s: float | None) -> None: ...

    def failed(self, ticket: Ticket) -> None: ...

    def abandoned(self, ticket: Ticket) -> None: ...


class AuditSink(Protocol):
    """Takes one record per request; never blocks (the writer batches and spools)."""

    def record(self, event: AuditEvent) -> None: ...
