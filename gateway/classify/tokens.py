"""Prompt token counts: exact with OpenAI's encodings (offline), or a proven bound when exactness
cannot change a routing decision.

Exact counts use `bpe-openai` (cl100k/o200k data files ship in the wheel, byte-identical to
tiktoken's; nothing is fetched). Exact counting costs ~0.1 µs per token and holds the GIL, so:

- Every BPE token is at least one UTF-8 byte, so `bytes` is a proven upper bound, and
  `token_bound.max_tokens` a tighter one (about 0.83 tokens per byte of English prose and
  code) for a fifth of the cost of counting. When every threshold the policy compares
  against (context window − max_tokens, token rules) lies above the bound, no exact count can
  change the decision and we skip it; the count we report is an estimate (bytes / 3.6,
  measured on English prose) clamped to the bound.
- Otherwise we count exactly: inline for small texts, in a separate process for large ones
  (a thread would not help: the encoder holds the GIL) so a 128K-token prompt never stalls
  the event loop.
- Chat clients resend the whole conversation every turn, so counts are cached per text.
"""

from __future__ import annotations

import asyncio
import re
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from concurrent.futures import Executor
from dataclasses import dataclass, field
from functools import lru_cache
from itertools import pairwise

import bpe_openai
import orjson
from bpe_openai._bindings import PyTokenizer, tokenizer_for_encoding

from gateway.classify.images import image_tokens
from gateway.classify.token_bound import PairTable, max_tokens, pair_table
from gateway.types import Endpoint, Payload

# OpenAI's chat format: every message costs 3 tokens of framing, a `name` 1 more, and the
# reply is primed with 3 (OpenAI's published counting recipe).
PER_MESSAGE_TOKENS = 3
PER_NAME_TOKENS = 1
REPLY_PRIMER_TOKENS = 3
# Tool definitions are rendered into the system prompt; their JSON is a close, slightly high
# estimate of what the model sees, plus a fixed preamble.
TOOLS_PREAMBLE_TOKENS = 12
ESTIMATE_BYTES_PER_TOKEN = 3.6
INLINE_LIMIT_BYTES = 32 * 1024  # ≈ 1.5 ms of encoding: above this, count off the loop
PARALLEL_MIN_BYTES = 128 * 1024  # above this, split the work across the pool's processes
# No pre-token of the cl100k/o200k patterns spans a newline followed by a character that is
# neither whitespace nor '/' (punctuation may absorb newlines and slashes after it), so text
# split there tokenizes to exactly the sum of its parts.
SAFE_SPLIT = re.compile(r"\n(?=[^\s/])")
ENCODE_MAX_CHARS = 900_000  # below bpe-openai's limit of 1,000,000 per call
CACHE_ENTRIES = 4096
CACHE_MIN_BYTES = 256  # short strings are cheaper to count than to hash and look up
# The tighter bound runs on the event loop (~5 ns per byte): above this, count off the loop.
BOUND_MAX_BYTES = INLINE_LIMIT_BYTES


@dataclass(frozen=True, slots=True)
class TokenCount:
    tokens: int  # exact, or the estimate
    upper_bound: int  # proven: the true count is never above this
    exact: bool


@dataclass(frozen=True, slots=True)
class PreparedCount:
    known: TokenCount  # the answer when nothing is pending; else fixed and cached tokens so far
    pending: list[str] = field(default_factory=list)  # texts still to count exactly
    pending_sizes: list[int] = field(default_factory=list)  # their UTF-8 lengths

    @property
    def pending_bytes(self) -> int:
        return sum(self.pending_sizes)

    def without(self, text: str) -> PreparedCount:
        """The same work less one pending text, which the caller counts some other way.
        (Sizes travel along: re-measuring a 500 KB text would cost 0.25 ms on the loop.)"""
        index = self.pending.index(text)
        return PreparedCount(
            self.known,
            self.pending[:index] + self.pending[index + 1:],
            self.pending_sizes[:index] + self.pending_sizes[index + 1:],
        )


@lru_cache(maxsize=4)
def encoding(name: str) -> bpe_openai.Encoding:
    return bpe_openai.get_encoding(name)


@lru_cache(maxsize=4)
def missing_pairs(name: str) -> PairTable:
    return pair_table(frozenset(encoding(name).token_byte_values()))


@lru_cache(maxsize=4)
def _counter(name: str) -> PyTokenizer:
    # The Rust tokenizer behind `Encoding`, whose `count` builds no token list: a quarter
    # less time than len(encode_ordinary(...)) (5.4 vs 7.1 ms on 256 KB); a unit test holds
    # the two equal.
    return tokenizer_for_encoding(name)


def count_text(text: str, encoding_name: str = "o200k_base") -> int:
    """Exact token count of plain text (special-token strings counted as ordinary text)."""
    try:
        return _counter(encoding_name).count(text)
    except UnicodeEncodeError:  # lone surrogates: counted as the encoder replaces them
        return len(encoding(encoding_name).encode_ordinary(text))


def utf8_len(text: str) -> int:
    return len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))


@dataclass(slots=True)
class _Parts:
    texts: list[str]
    fixed_tokens: int  # framing, images: known without encoding


def split_payload(endpoint: Endpoint, payload: Payload) -> _Parts:
    """The texts the model will see, and the tokens that need no encoding."""
    texts: list[str] = []
    fixed = 0
    if endpoint is Endpoint.CHAT:
        messages = payload.get("messages")
        for message in messages if isinstance(messages, list) else ():
            fixed += PER_MESSAGE_TOKENS
            if not isinstance(message, dict):
                continue
            if message.get("name"):
                fixed += PER_NAME_TOKENS
            fixed += _collect(message.get("content"), texts)
            for key in ("tool_calls", "function_call"):
                if message.get(key):
                    texts.append(_json_text(message[key]))
            role = message.get("role")
            if isinstance(role, str):
                texts.append(role)
        fixed += REPLY_PRIMER_TOKENS
        tools = payload.get("tools") or payload.get("functions")
        if tools:
            fixed += TOOLS_PREAMBLE_TOKENS
            texts.append(_json_text(tools))
        return _Parts(texts, fixed)
    field = "prompt" if endpoint is Endpoint.COMPLETIONS else "input"
    value = payload.get(field)
    if isinstance(value, str):
        texts.append(value)
    elif isinstance(value, list):
        for item in value:
            if isinstance(item, str):
                texts.append(item)
            elif isinstance(item, int):
                fixed += 1  # already a token id
            elif isinstance(item, list):
                fixed += len(item)
    return _Parts(texts, fixed)


def _collect(content: object, texts: list[str]) -> int:
    if isinstance(content, str):
        texts.append(content)
        return 0
    fixed = 0
    if isinstance(content, list):
        for part in content:
            if not isinstance(part, dict):
                continue
            kind = part.get("type")
            if kind == "text" and isinstance(part.get("text"), str):
                texts.append(part["text"])
            elif kind == "image_url":
                fixed += image_tokens(part.get("image_url"))
            elif kind != "input_audio":  # audio is billed apart; it is not text context
                texts.append(_json_text(part))
    return fixed


def _json_text(value: object) -> str:
    return orjson.dumps(value).decode()


class TokenCounter:
    """Counts prompts for one encoding, with a per-text cache and an off-loop path."""

    def __init__(
        self,
        encoding_name: str = "o200k_base",
        *,
        executor: Executor | None = None,
        inline_limit_bytes: int = INLINE_LIMIT_BYTES,
        parallelism: int = 1,
    ) -> None:
        self.encoding_name = encoding_name
        self._executor = executor
        self._parallelism = parallelism
        self._inline_limit = inline_limit_bytes
        self._cache: OrderedDict[tuple[int, int], int] = OrderedDict()
        self._missing_pairs = missing_pairs(encoding_name)  # loads the vocabulary now too
        self._siblings: dict[str, TokenCounter] = {encoding_name: self}

    def in_encoding(self, encoding_name: str) -> TokenCounter:
        """A counter like this one for another encoding (built once; its own cache)."""
        sibling = self._siblings.get(encoding_name)
        if sibling is None:
            sibling = TokenCounter(encoding_name, executor=self._executor,
                                   inline_limit_bytes=self._inline_limit,
                                   parallelism=self._parallelism)
            self._siblings[encoding_name] = sibling
        return sibling

    async def count(
        self, endpoint: Endpoint, payload: Payload, thresholds: Sequence[int] = ()
    ) -> TokenCount:
        return await self.finish(self.prepare(endpoint, payload, thresholds))

    def prepare(
        self, endpoint: Endpoint, payload: Payload, thresholds: Sequence[int] = ()
    ) -> PreparedCount:
        """Everything the bound and the cache can answer, on the calling thread. A caller
        that also feeds the process pool prepares first: this holds the GIL for a while on
        a long prompt, and the pool's feeder thread needs it to ship work to the workers."""
        parts = split_payload(endpoint, payload)
        sizes = [utf8_len(t) for t in parts.texts]
        upper = parts.fixed_tokens + sum(sizes)
        if _needs_exact(upper, thresholds) and upper <= BOUND_MAX_BYTES:
            upper = parts.fixed_tokens + max_tokens(parts.texts, self._missing_pairs)
        if not _needs_exact(upper, thresholds):
            estimate = parts.fixed_tokens + round(sum(sizes) / ESTIMATE_BYTES_PER_TOKEN)
            return PreparedCount(TokenCount(min(estimate, upper), upper, exact=False))
        tokens = parts.fixed_tokens
        pending: list[str] = []
        pending_sizes: list[int] = []
        for text, size in zip(parts.texts, sizes, strict=True):
            key = _cache_key(text)
            cached = self._cache.get(key) if size >= CACHE_MIN_BYTES else None
            if cached is not None:
                self._cache.move_to_end(key)
                tokens += cached
            else:
                pending.append(text)
                pending_sizes.append(size)
        return PreparedCount(TokenCount(tokens, upper, exact=True), pending, pending_sizes)

    async def finish(self, prepared: PreparedCount) -> TokenCount:
        """Counts what `prepare` left pending (off the loop when it is large)."""
        pending = prepared.pending
        if not pending:
            return prepared.known
        if self._executor is not None and prepared.pending_bytes > self._inline_limit:
            counts = await self._count_off_loop(pending, prepared.pending_bytes)
        else:
            counts = count_many(pending, self.encoding_name)
        tokens = prepared.known.tokens
        for text, n in zip(pending, counts, strict=True):
            tokens += n
            self.remember(text, n)
        return TokenCount(tokens, prepared.known.upper_bound, exact=True)

    async def _count_off_loop(self, texts: list[str], total_bytes: int) -> list[int]:
        loop = asyncio.get_running_loop()
        assert self._executor is not None
        if total_bytes < PARALLEL_MIN_BYTES or self._parallelism < 2:
            return await loop.run_in_executor(
                self._executor, count_many, texts, self.encoding_name
            )
        # Split every text at safe boundaries into one share per process; sum the parts.
        shares: list[list[tuple[int, str]]] = [[] for _ in range(self._parallelism)]
        for index, text in enumerate(texts):
            for part, piece in enumerate(split_exact(text, self._parallelism)):
                shares[part].append((index, piece))
        results = await asyncio.gather(*(
            loop.run_in_executor(
                self._executor, count_many, [piece for _, piece in share], self.encoding_name
            )
            for share in shares if share
        ))
        counts = [0] * len(texts)
        for share, result in zip([s for s in shares if s], results, strict=True):
            for (index, _), n in zip(share, result, strict=True):
                counts[index] += n
        return counts

    def remember(self, text: str, tokens: int) -> None:
        """Caches an exact count (made here, or by a caller that counted it in pieces)."""
        if len(text) < CACHE_MIN_BYTES:
            return
        self._cache[_cache_key(text)] = tokens
        if len(self._cache) > CACHE_ENTRIES:
            self._cache.popitem(last=False)


def _cache_key(text: str) -> tuple[int, int]:
    # Not the text itself: the cache would keep every long prompt (and the personal data in
    # it) alive after its request, up to 4,096 of them. str's hash is keyed per process with
    # a random seed, so a client cannot make two prompts collide; the string caches it, so the
    # dict lookup costs nothing more.
    return len(text), hash(text)


def split_exact(text: str, parts: int) -> list[str]:
    """Up to `parts` consecutive pieces of similar size whose token counts sum to the text's."""
    bounds = [0, *exact_cuts(text, parts), len(text)]
    return [text[a:b] for a, b in pairwise(bounds) if b > a]


def exact_cuts(text: str, parts: int) -> list[int]:
    """Where `split_exact` cuts, without copying the pieces (callers that ship slices of a
    long prompt elsewhere need only the offsets)."""
    if parts < 2 or len(text) < 2 * 4096:
        return []
    cuts: list[int] = []
    start = 0
    for k in range(1, parts):
        match = SAFE_SPLIT.search(text, max(len(text) * k // parts, start))
        if match is None:
            break
        if match.end() < len(text):
            cuts.append(match.end())
        start = match.end()
    return cuts


def count_many(texts: Iterable[str], encoding_name: str) -> list[int]:
    """Module-level so a process pool can run it."""
    return [sum(count_text(p, encoding_name) for p in _encodable(t)) for t in texts]


def _encodable(text: str) -> list[str]:
    """bpe-openai refuses to encode a million characters or more at once: split longer text
    at exact split points, and cut what still has none at fixed places (off by a token or
    two per cut, nothing beside a million characters; an error here would be a 500)."""
    if len(text) < ENCODE_MAX_CHARS:
        return [text]
    out: list[str] = []
    for piece in split_exact(text, len(text) // (ENCODE_MAX_CHARS // 2) + 1):
        out += [piece[i : i + ENCODE_MAX_CHARS] for i in range(0, len(piece), ENCODE_MAX_CHARS)]
    return out


def _needs_exact(upper: int, thresholds: Sequence[int]) -> bool:
    # Only a threshold at or below the proven maximum can be crossed.
    return any(t <= upper for t in thresholds)
