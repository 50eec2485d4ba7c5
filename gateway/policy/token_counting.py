"""How many prompt tokens a backend will see: the gateway counts once in o200k (plus cl100k
when a pool holds older OpenAI models), and each backend's count follows from its policy
`tokens:` setting, exactly or as an estimate with a safety margin.

Tokenizers of open-weight models and Anthropic's are not shipped with the gateway, so those
backends are estimated from the o200k count. The default margin (1.25x) is a choice, not a
measurement of any one model: o200k is among the most compact public vocabularies for
English and code, so most tokenizers need as many tokens or more. For comparison,
cl100k needs 1.008x o200k's tokens on average over the routing and PII datasets (p99
1.08x), but 1.4x on a German or French news sentence and 3.3x on a Hindi one: operators
serving such text set `ratio`, or an exact encoding where the model uses one.

Which backends count exactly by default is each provider kind's declaration
(gateway/provider_kinds: OpenAI's and Azure's models in their encoding).
"""

from __future__ import annotations

import math
from collections.abc import Iterable

from gateway.provider_kinds.kind import ProviderKind
from gateway.provider_kinds.openai_family import REFERENCE_ENCODING
from gateway.types import Backend, Profile

DEFAULT_ESTIMATE_RATIO = 1.25


def default_counting(kind: ProviderKind, model: str) -> tuple[str | None, float]:
    """(exact encoding or None, estimate ratio) for a backend without a `tokens:` setting:
    exact where its kind knows the model's encoding (OpenAI's models), else estimated."""
    encoding = kind.encoding(model)
    return (encoding, 1.0) if encoding is not None else (None, DEFAULT_ESTIMATE_RATIO)


def prompt_tokens_for(backend: Backend, profile: Profile) -> int:
    """The prompt as this backend counts it (its context window and its price apply to it).
    On decide()'s path several times per candidate: the common cases return first."""
    encoding = backend.token_encoding
    if encoding == REFERENCE_ENCODING:
        return profile.prompt_tokens
    if encoding is None and not profile.prompt_tokens_by_encoding:
        return math.ceil(profile.prompt_tokens * backend.token_ratio)
    return tokens_for(backend, profile.prompt_tokens, profile.prompt_tokens_by_encoding)


def tokens_for(
    backend: Backend, o200k_tokens: int, by_encoding: tuple[tuple[str, int], ...] = ()
) -> int:
    encoding = backend.token_encoding
    if encoding == REFERENCE_ENCODING:
        return o200k_tokens
    if by_encoding:
        wanted = encoding or (engine_key(backend) if backend.tokenize_url else None)
        for key, tokens in by_encoding:
            if key == wanted:
                return tokens
    if encoding is not None:
        # Not counted in its encoding (replaying audit rows, which keep the o200k count
        # only): estimated like any tokenizer the gateway does not ship.
        return math.ceil(o200k_tokens * DEFAULT_ESTIMATE_RATIO)
    return math.ceil(o200k_tokens * backend.token_ratio)


def engine_key(backend: Backend) -> str:
    """How an engine's own count (its /tokenize) is keyed in a profile's counts."""
    return "engine:" + backend.name


def needs_engine_count(backend: Backend, profile: Profile) -> bool:
    """The backend can give its own count and the estimate says the prompt does not fit."""
    return backend.tokenize_url is not None and (
        prompt_tokens_for(backend, profile) + (profile.max_output_tokens or 0)
        > backend.context_window
    )


def extra_encodings(backends: Iterable[Backend]) -> tuple[str, ...]:
    """Encodings besides o200k that some backend counts in exactly."""
    return tuple(sorted({b.token_encoding for b in backends
                         if b.token_encoding not in (None, REFERENCE_ENCODING)}))


def window_threshold(backend: Backend, reserve: int) -> int:
    """The largest count (o200k for estimates, its own encoding otherwise) that still fits
    the backend's window with `reserve` output tokens: where its eligibility changes."""
    room = backend.context_window - reserve
    if backend.token_encoding is None:
        return math.floor(room / backend.token_ratio)
    return room
