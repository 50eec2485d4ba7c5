"""RequestClassifier: every fact the policy routes on, computed once per request.

Tokens (exact, or a proven bound when exactness cannot change the route), complexity (the
probability a cheap model fails where a strong one succeeds) and sensitivity (categories and
offsets, never values). Complexity and sensitivity are seams (protocols), so tests and
deployments can swap their implementations.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
from collections.abc import Awaitable, Callable, Sequence
from concurrent.futures import Executor
from typing import Any, Protocol, TypeVar

from gateway.classify.allowlist import allowlist
from gateway.classify.complexity import classify
from gateway.classify.conversation import (
    EARLIER_TURNS,
    TurnScores,
    earlier_user_texts,
    in_context,
)
from gateway.classify.detectors.overlap import resolve
from gateway.classify.known_values import WithKnownValues
from gateway.classify.long_prompt import plan_shared
from gateway.classify.payload_text import (
    SpanScanner,
    content_text,
    extract_chat_text,
    field_strings,
    prefix_text,
    redact_chat_payload,
    redact_fields,
)
from gateway.classify.redaction import RedactionMap, redact
from gateway.classify.scan_split import merge_scans, split_for_scan
from gateway.classify.tokens import PreparedCount, TokenCount, TokenCounter
from gateway.classify.workers import (
    TenantDetectors,
    scan_and_count,
    scan_in_worker,
    tenant_scanner,
)
from gateway.types import (
    AffinityKind,
    Complexity,
    Endpoint,
    Payload,
    Profile,
    RouteRequest,
    SensitiveSpan,
    Task,
)

T = TypeVar("T")
log = logging.getLogger(__name__)
COMPLEXITY_TEXT_CHARS = 4000  # the question is what matters; long context adds little signal


class ComplexityEstimator(Protocol):
    """p_strong and the low/medium/high cut-offs that ship with it."""

    thresholds: tuple[float, float]

    def p_strong(self, text: str) -> float: ...


class AsyncComplexityEstimator(Protocol):
    """A complexity model whose score is awaited (the accurate mode's worker pool)."""

    thresholds: tuple[float, float]

    async def p_strong(self, text: str) -> float: ...


class TaskEstimator(Protocol):
    def assess(self, text: str) -> Task: ...


class ExtraFinder(Protocol):
    """A second opinion run beside the built-in scan, off the event loop (Presidio)."""

    async def find(self, text: str) -> list[SensitiveSpan]: ...


class SensitivityDetector(Protocol):
    def scan_for_redaction(self, text: str) -> list[SensitiveSpan]:
        """Findings and reserved stand-ins (flagged), non-overlapping, in text order."""
        ...


# Above this many characters the scan (~0.3 µs per character) runs in the worker processes,
# never on the event loop.
SCAN_INLINE_CHARS = 32 * 1024
# About 500 tokens: long enough that requests sharing it share KV blocks worth keeping warm,
# short enough that a conversation's later turns (which repeat its start) hash the same.
AFFINITY_PREFIX_CHARS = 2048


class RequestClassifier:
    def __init__(
        self,
        tokens: TokenCounter,
        complexity: ComplexityEstimator | None = None,
        sensitivity: SensitivityDetector | None = None,
        executor: Executor | None = None,
        parallelism: int = 1,
        extra: ExtraFinder | None = None,
        task: TaskEstimator | None = None,
        complexity_async: AsyncComplexityEstimator | None = None,
    ) -> None:
        self._tokens = tokens
        # When set, it scores complexity in place of `complexity` (a fitted router the
        # policy names still takes precedence, as it does over the shipped model).
        self._complexity_async = complexity_async
        self._task = task
        self._extra = extra
        self._complexity = complexity
        self._sensitivity = sensitivity
        self._executor = executor  # for large scans: must run the built-in detectors
        self._parallelism = parallelism  # the executor's processes: one piece of a long scan each
        # Each turn's score by this classifier's own model (the accurate one where set, else
        # the static one: one per classifier), kept for later requests of its conversation.
        self._turns = TurnScores()

    def with_complexity(self, complexity: ComplexityEstimator) -> RequestClassifier:
        """The same classifier scoring complexity with another model (a fitted router)."""
        return RequestClassifier(self._tokens, complexity, self._sensitivity, self._executor,
                                 self._parallelism, self._extra, self._task)

    def with_accurate_complexity(self, complexity: AsyncComplexityEstimator,
                                 ) -> RequestClassifier:
        """The same classifier scoring complexity with the accurate mode's model."""
        return RequestClassifier(self._tokens, self._complexity, self._sensitivity,
                                 self._executor, self._parallelism, self._extra, self._task,
                                 complexity)

    def load_encodings(self, encodings: Sequence[str]) -> None:
        """Loads the vocabularies of the encodings the policy counts in at start-up, not on a
        user's request (~30 ms each)."""
        for encoding in encodings:
            self._tokens.in_encoding(encoding)

    @property
    def can_redact(self) -> bool:
        return self._sensitivity is not None

    def _scanner(self, detectors: TenantDetectors) -> SensitivityDetector:
        assert self._sensitivity is not None, "redaction needs a sensitivity detector"
        return tenant_scanner(detectors) if detectors else self._sensitivity

    def redaction_scanner(
        self, request: RouteRequest, detectors: TenantDetectors = (),
        profile: Profile | None = None,
    ) -> SpanScanner:
        """The per-string rescan, plus (given the request's profile) every recurrence of what
        classification found, so a finding that routed the request is masked too."""
        scanner: SpanScanner = self._scanner(detectors)
        found = (*profile.spans, *profile.reserved_spans) if profile is not None else ()
        if not found:
            return scanner
        text = scan_text(request.endpoint, request.payload)
        return WithKnownValues(scanner, ((text[s.start:s.end], s) for s in found))

    def redact_text(self, text: str, scanner: SpanScanner) -> str:
        """Free text (an answer, say) with every sensitive span replaced by its placeholder."""
        return redact(text, scanner.scan_for_redaction(text))[0]

    def redact(
        self, request: RouteRequest, detectors: TenantDetectors = (),
        profile: Profile | None = None,
    ) -> tuple[Payload, RedactionMap]:
        """The payload with every sensitive span replaced by a typed placeholder."""
        return self.redact_payload(request, self.redaction_scanner(request, detectors, profile))

    def redact_payload(
        self, request: RouteRequest, scanner: SpanScanner
    ) -> tuple[Payload, RedactionMap]:
        """`redact` with a scanner already built, for a caller that reuses it (the answer)."""
        if request.endpoint is Endpoint.CHAT:
            return redact_chat_payload(request.payload, scanner)
        mapping = RedactionMap()

        def redact_string(value: str) -> str:
            return redact(value, scanner.scan_for_redaction(value), into=mapping)[0]

        payload = dict(request.payload)
        field = "prompt" if request.endpoint is Endpoint.COMPLETIONS else "input"
        value = request.payload.get(field)
        if isinstance(value, str):
            payload[field] = redact_string(value)
        elif isinstance(value, list):  # a batch of prompts (token-id lists pass unchanged)
            payload[field] = [redact_string(v) if isinstance(v, str) else v for v in value]
        payload.update(redact_fields(request.payload, redact_string))
        return payload, mapping

    async def profile(
        self,
        request: RouteRequest,
        thresholds: Sequence[int] = (),
        complexity_thresholds: tuple[float, float] | None = None,
        detectors: TenantDetectors = (),
        other_encodings: Sequence[tuple[str, Sequence[int]]] = (),
        min_confidence: float = 0.0,
        complexity_model: ComplexityEstimator | None = None,
    ) -> Profile:
        """`thresholds`: prompt sizes where the route changes (exact counting only matters
        near them); `complexity_thresholds`: p_strong cut-offs for low/medium/high (default:
        the ones the complexity model ships with);
        `detectors`: the tenant's own, found beside the built-in ones; `other_encodings`:
        encodings besides the counter's that backends of the pool use, with their own
        thresholds (counted after the rest: only pools of older OpenAI models need them);
        `min_confidence`: findings below it are kept for redaction only, like stand-ins;
        `complexity_model`: scores complexity instead of the classifier's own (a fitted router
        the policy names for this tenant or model)."""
        text = scan_text(request.endpoint, request.payload) if self._sensitivity else ""
        # Started first: it takes the longest, in processes of its own.
        extra = (asyncio.ensure_future(self._extra.find(text))
                 if self._extra is not None and text else None)
        try:
            found, count = await self._scan_and_count(request, text, thresholds, detectors)
        except BaseException:
            if extra is not None:
                extra.cancel()
                extra.add_done_callback(_retrieve)
            raise
        complexity = task = None
        estimator = complexity_model or self._complexity
        wanted = estimator is not None or self._task is not None
        if wanted and request.endpoint is not Endpoint.EMBEDDINGS:
            # One string for both models: they share its featurization (see extract_features).
            question = question_text(request.endpoint, request.payload)
            if complexity_model is None and self._complexity_async is not None:
                complexity = await self._in_context(
                    request, question, self._complexity_async.p_strong, self._turns,
                    complexity_thresholds or self._complexity_async.thresholds)
            elif estimator is not None:
                complexity = await self._in_context(
                    request, question, _awaitable(estimator.p_strong),
                    self._turns if complexity_model is None else None,
                    complexity_thresholds or estimator.thresholds)
            if self._task is not None:
                task = self._task.assess(question)
        if extra is not None:
            more = allowlist(detectors).drop(text, await _second_opinion(extra))
            found = resolve([*found, *more])
        spans = tuple(s for s in found if not s.reserved and s.confidence >= min_confidence)
        others = []
        for encoding, limits in other_encodings:
            counter = self._tokens.in_encoding(encoding)
            other = await counter.count(request.endpoint, request.payload, limits)
            others.append((encoding, other.tokens))
        return Profile(
            prompt_tokens=count.tokens,
            max_output_tokens=request.max_output_tokens,
            complexity=complexity,
            task=task,
            sensitivity=tuple(sorted({s.category for s in spans})),
            spans=spans,
            reserved_spans=(tuple(s for s in found if s.reserved or s.confidence < min_confidence)
                            if len(spans) < len(found) else ()),
            prompt_tokens_exact=count.exact,
            prompt_tokens_max=count.upper_bound,
            affinity_key=affinity_key(request),
            affinity_kind=AffinityKind.SESSION if request.session_id else AffinityKind.PREFIX,
            prompt_tokens_by_encoding=tuple(others),
        )

    async def _in_context(self, request: RouteRequest, question: str,
                          score: Callable[[str], Awaitable[float]], turns: TurnScores | None,
                          cuts: tuple[float, float]) -> Complexity:
        """The last user message's complexity, or an earlier turn's where that is higher (a
        follow-up in a hard conversation); scores remembered where the model is this
        classifier's own (a tenant's fitted router is scored afresh)."""
        if turns is not None:
            remembered = turns

            async def score_text(text: str) -> float:
                return await remembered.p_strong(text, score)
        else:
            score_text = score
        last = await score_text(question)
        earlier = (earlier_user_texts(request.payload, EARLIER_TURNS, COMPLEXITY_TEXT_CHARS)
                   if request.endpoint is Endpoint.CHAT else [])
        p, back = await in_context(last, earlier, score_text) if earlier else (last, 0)
        return Complexity(p, classify(p, cuts), back)

    async def _scan_and_count(
        self, request: RouteRequest, text: str, thresholds: Sequence[int],
        detectors: TenantDetectors,
    ) -> tuple[list[SensitiveSpan], TokenCount]:
        # Prepared before any work goes to the pool: preparing holds the GIL, which the
        # pool's feeder thread needs to ship the work.
        counting = self._tokens.prepare(request.endpoint, request.payload, thresholds)
        if self._executor is not None and len(text) > SCAN_INLINE_CHARS:
            count, found = await self._long_prompt(text, counting, detectors)
            return found, count
        count = await self._tokens.finish(counting)
        found = self._scanner(detectors).scan_for_redaction(text) if self._sensitivity else []
        return found, count

    async def _long_prompt(
        self, text: str, counting: PreparedCount, detectors: TenantDetectors
    ) -> tuple[TokenCount, list[SensitiveSpan]]:
        """A long prompt's scan and exact count in the worker processes, never on the loop:
        in one task per worker when the prompt's longest string is most of the text (each
        worker scans a piece and counts the same piece's share), else the scan's pieces and
        the count's shares as separate tasks."""
        assert self._executor is not None
        loop = asyncio.get_running_loop()
        longest = max(counting.pending, key=len, default="")
        jobs = plan_shared(text, longest, self._parallelism) if longest else None
        if jobs is not None:
            shared = asyncio.gather(*(
                loop.run_in_executor(self._executor, scan_and_count, job.piece.text,
                                     job.count_from, job.count_to, self._tokens.encoding_name,
                                     detectors)
                for job in jobs
            ))
            rest = await _guarded(self._tokens.finish(counting.without(longest)), shared)
            results = await shared
            tokens = sum(n for _, n in results)
            self._tokens.remember(longest, tokens)
            count = TokenCount(rest.tokens + tokens, rest.upper_bound, exact=True)
            return count, merge_scans([job.piece for job in jobs], [s for s, _ in results])
        pieces = split_for_scan(text, self._parallelism)
        scanning = asyncio.gather(*(
            loop.run_in_executor(self._executor, scan_in_worker, piece.text, detectors)
            for piece in pieces
        ))
        count = await _guarded(self._tokens.finish(counting), scanning)
        return count, merge_scans(pieces, await scanning)


async def _guarded(work: Awaitable[T], pending: asyncio.Future[Any]) -> T:
    """Awaits `work`; if it fails, `pending` (work already in the pool) is left to finish
    with its outcome retrieved, so its failure is not logged as lost."""
    try:
        return await work
    except BaseException:
        pending.add_done_callback(_retrieve)
        raise


async def _second_opinion(pending: asyncio.Future[list[SensitiveSpan]]) -> list[SensitiveSpan]:
    """The extra finder's spans; if it fails (a crashed worker, a model error) the built-in
    findings stand alone and the failure is logged, so a broken plug-in cannot take the
    gateway down with it."""
    try:
        return await pending
    except Exception as exc:  # the plug-in's own failure, whatever its type
        # The type only: a model's error message may quote the text it choked on.
        log.warning("extra sensitivity finder failed (%s); built-in findings only",
                    type(exc).__name__)
        return []


def _retrieve(future: asyncio.Future[Any]) -> None:
    if not future.cancelled():
        future.exception()  # retrieved, so an abandoned scan's failure is not logged as lost


def affinity_key(request: RouteRequest) -> bytes | None:
    """Stable across processes and replicas (unlike hash()), so every gateway replica sends
    the same prefix to the same engine replica. Only where a prefix can be shared: a session,
    a completion prompt, or a chat of more than one message (a system prompt, a history)."""
    if request.session_id:
        return b"s:" + request.session_id.encode()
    if request.endpoint is Endpoint.EMBEDDINGS:
        return None
    messages = request.payload.get("messages") if request.endpoint is Endpoint.CHAT else None
    if isinstance(messages, list) and len(messages) < 2:
        # A lone message is the whole prompt: no other request shares its prefix, so
        # pinning it to a replica would only spread load blind to capacity.
        return None
    text = prefix_text(request.endpoint is Endpoint.CHAT, request.payload, AFFINITY_PREFIX_CHARS)
    if not text:
        return None
    return hashlib.blake2b(text.encode(), digest_size=8).digest()


def question_text(endpoint: Endpoint, payload: Payload) -> str:
    """What the model is asked: the last user message (chat) or the prompt's tail."""
    if endpoint is Endpoint.CHAT:
        messages = payload.get("messages")
        for message in reversed(messages if isinstance(messages, list) else []):
            if isinstance(message, dict) and message.get("role") == "user":
                return content_text(message.get("content"))[-COMPLEXITY_TEXT_CHARS:]
        return ""
    prompt = payload.get("prompt")
    return prompt[-COMPLEXITY_TEXT_CHARS:] if isinstance(prompt, str) else ""


def scan_text(endpoint: Endpoint, payload: Payload) -> str:
    """Everything that would leave the zone, joined so offsets index one string: for a chat,
    every message's text and tool-call arguments, then the free-text fields beside them
    (the same text redaction rewrites); otherwise the prompt or input, then `user` and the
    other identity fields."""
    if endpoint is Endpoint.CHAT:
        return extract_chat_text(payload)
    value = payload.get("prompt" if endpoint is Endpoint.COMPLETIONS else "input")
    if isinstance(value, str):
        text = value
    elif isinstance(value, list):
        text = "\n".join(v for v in value if isinstance(v, str))
    else:
        text = ""
    fields = "\n\n".join(field_strings(payload))
    return f"{text}\n\n{fields}" if fields else text


def _awaitable(score: Callable[[str], float]) -> Callable[[str], Awaitable[float]]:
    async def scored(text: str) -> float:
        return score(text)
    return scored
