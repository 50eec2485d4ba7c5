"""The routing benchmark's workload: a deterministic request mix (short prompts, long prompts
that stress the KV cache, shared-prefix groups) and bursty open-loop arrival schedules.

Everything is drawn from one seed, so every strategy sees the same requests at the same times.
Prompt sizes are counted with the simulator's own tokenizer (one token per word here).
"""

from __future__ import annotations

import random
from dataclasses import dataclass

import orjson

from gateway.sim.tokenizer import split_pieces

# Common English words of ordinary length: the gateway estimates tokens from bytes, so text
# should look like prose rather than one-letter noise.
_WORDS = (
    "time year people way day man thing woman life child world school state family student "
    "group country problem hand part place case week company system program question work "
    "government number night point home water room mother area money story fact month lot "
    "right study book eye job word business issue side kind head house service friend father "
    "power hour game line end member law car city community name president team minute idea "
    "kid body back parent face others level office door health person art war "
    "history party result change morning reason research girl guy moment air teacher force "
    "education make go know take see come think look want give use find tell ask seem feel "
    "try leave call good new first last long great little own other old big high different "
    "small large next early young important few public bad same able about after before "
    "under between through during without again further then once here there when where why "
    "how all any both each more most some such only same than very just should now report "
    "cache token batch queue block prefix request route budget policy tenant latency engine "
    "server metric signal window context stream answer value range method memory kernel"
).split()
assert all(len(w) <= 10 for w in _WORDS)  # longer words split into several sim tokens

KINDS = ("short", "prefix", "long")


@dataclass(frozen=True, slots=True)
class Mix:
    """Shares and sizes of the three request kinds (sizes in simulator tokens)."""

    short_share: float = 0.5
    prefix_share: float = 0.3  # the rest is long
    short_prompt: tuple[int, int] = (60, 250)
    long_prompt: tuple[int, int] = (1000, 2200)
    prefix_groups: int = 12  # 12 × 1,000 tokens: more than the medium and small KV caches
    prefix_system: int = 1000  # the shared system prompt of each group
    prefix_question: tuple[int, int] = (20, 80)
    max_tokens: dict[str, int] | None = None  # what the client asks for, per kind

    def max_tokens_for(self, kind: str) -> int:
        table = self.max_tokens or {"short": 128, "prefix": 128, "long": 256}
        return table[kind]

    def describe(self) -> str:
        long_share = 1.0 - self.short_share - self.prefix_share
        return (
            f"{self.short_share:.0%} short ({self.short_prompt[0]}–{self.short_prompt[1]} "
            f"prompt tokens), {self.prefix_share:.0%} shared-prefix ({self.prefix_groups} groups, "
            f"{self.prefix_system}-token system prompt + {self.prefix_question[0]}–"
            f"{self.prefix_question[1]}-token question), {long_share:.0%} long "
            f"({self.long_prompt[0]}–{self.long_prompt[1]} prompt tokens); max_tokens "
            f"{self.max_tokens_for('short')}/{self.max_tokens_for('prefix')}/"
            f"{self.max_tokens_for('long')}"
        )


@dataclass(frozen=True, slots=True)
class RequestSpec:
    kind: str
    messages: tuple[tuple[str, str], ...]  # (role, content)
    max_tokens: int
    prompt_tokens: int  # simulator tokens of the message texts (template framing excluded)

    def body(self, model: str) -> bytes:
        return orjson.dumps({
            "model": model,
            "messages": [{"role": r, "content": c} for r, c in self.messages],
            "max_tokens": self.max_tokens,
            "stream": True,
            "stream_options": {"include_usage": True},
        })


def _text(rng: random.Random, tokens: int) -> str:
    words = [rng.choice(_WORDS) for _ in range(tokens)]
    text = " ".join(words)
    assert len(split_pieces(text)) == tokens  # one simulator token per word
    return text


class Workload:
    """An endless, deterministic stream of requests: request i is the same for every run."""

    def __init__(self, mix: Mix, seed: int) -> None:
        self.mix = mix
        self._seed = seed
        rng = random.Random(f"{seed}:prefixes")
        self._systems = [
            f"You are assistant number {g}. " + _text(rng, mix.prefix_system)
            for g in range(mix.prefix_groups)
        ]
        self._cache: dict[int, RequestSpec] = {}

    def request(self, index: int) -> RequestSpec:
        spec = self._cache.get(index)
        if spec is None:
            spec = self._cache[index] = self._make(index)
        return spec

    def _make(self, index: int) -> RequestSpec:
        mix = self.mix
        rng = random.Random(f"{self._seed}:request:{index}")
        draw = rng.random()
        if draw < mix.short_share:
            kind, tokens = "short", rng.randint(*mix.short_prompt)
            messages: tuple[tuple[str, str], ...] = (("user", _text(rng, tokens)),)
        elif draw < mix.short_share + mix.prefix_share:
            kind = "prefix"
            system = self._systems[rng.randrange(mix.prefix_groups)]
            question = rng.randint(*mix.prefix_question)
            messages = (("system", system), ("user", _text(rng, question)))
            tokens = len(split_pieces(system)) + question
        else:
            kind, tokens = "long", rng.randint(*mix.long_prompt)
            messages = (("user", _text(rng, tokens)),)
        return RequestSpec(kind, messages, mix.max_tokens_for(kind), tokens)


@dataclass(frozen=True, slots=True)
class Bursts:
    """On/off modulated Poisson arrivals: exponential on and off phases; during `on` the rate
    is `peak` × the mean, during `off` whatever keeps the long-run mean."""

    mean_on_s: float = 3.0
    mean_off_s: float = 4.5
    peak: float = 1.6

    @property
    def on_fraction(self) -> float:
        return self.mean_on_s / (self.mean_on_s + self.mean_off_s)

    @property
    def trough(self) -> float:
        return (1.0 - self.on_fraction * self.peak) / (1.0 - self.on_fraction)

    def describe(self) -> str:
        return (
            f"on/off Poisson: bursts of mean {self.mean_on_s:g} s at {self.peak:g}× the mean "
            f"rate, lulls of mean {self.mean_off_s:g} s at {self.trough:.2f}×"
        )


def arrival_times(rate: float, duration_s: float, bursts: Bursts, seed: int) -> list[float]:
    """Send times in [0, duration_s) with a long-run mean of `rate` per second.

    The phase pattern depends on the seed only, not on the rate, and the rates are scaled so
    that the expected count over this window is exactly rate × duration: every load level
    and strategy sees the same bursts at the same moments.
    """
    phase_rng = random.Random(f"{seed}:phases")
    phases: list[tuple[float, float, float]] = []  # (start, end, multiplier)
    t, on = 0.0, phase_rng.random() < bursts.on_fraction
    while t < duration_s:
        mean = bursts.mean_on_s if on else bursts.mean_off_s
        end = min(duration_s, t + phase_rng.expovariate(1.0 / mean))
        phases.append((t, end, bursts.peak if on else bursts.trough))
        t, on = end, not on
    expected = sum((end - start) * m for start, end, m in phases)
    scale = rate * duration_s / expected
    rng = random.Random(f"{seed}:arrivals:{rate:.6f}")
    times: list[float] = []
    for start, end, multiplier in phases:
        t = start
        phase_rate = multiplier * scale
        while True:
            t += rng.expovariate(phase_rate)
            if t >= end:
                break
            times.append(t)
    return times


def poisson_times(rate: float, duration_s: float, seed: int) -> list[float]:
    rng = random.Random(f"{seed}:warmup:{rate:.6f}")
    times, t = [], 0.0
    while True:
        t += rng.expovariate(rate)
        if t >= duration_s:
            return times
        times.append(t)
