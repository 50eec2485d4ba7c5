"""AnswerPlan: what the sim will answer, decided up front as one text piece per output token.

Deterministic: the same prompt (and request seed) gives the same answer, so tests can assert
on it. Plain answers are sentences of filler words; structured answers are JSON documents or
a tool call whose arguments satisfy the function's schema.
"""

from __future__ import annotations

import hashlib
import random
import uuid
from array import array
from collections.abc import Sequence
from dataclasses import dataclass

import orjson

from gateway.sim.config import SimConfig
from gateway.sim.judge import is_rubric, verdict
from gateway.sim.placeholders import placeholder
from gateway.sim.protocol import ChatRequest, GenerationOptions
from gateway.sim.quality import answer_quality, mark
from gateway.sim.tokenizer import split_pieces

_WORDS = (
    "the of and to in is that for it as with was on be by this are from at or an have not "
    "which but all were when we there can more if will one about some into time only other "
    "model cache token batch queue block prefix request route budget policy tenant latency "
    "engine server metric signal window context stream answer value range method result "
    "system memory kernel vector layer weight device region cluster replica shard lease "
    "lorem ipsum dolor amet consectetur adipiscing elit sed tempor incididunt labore dolore "
    "magna aliqua enim minim veniam quis nostrud exercitation ullamco laboris nisi aliquip "
    "commodo consequat duis aute irure reprehenderit voluptate velit esse cillum fugiat nulla"
).split()


@dataclass(frozen=True)
class ToolCallPlan:
    call_id: str
    name: str


@dataclass(frozen=True)
class AnswerPlan:
    """pieces[i] is the text of output token i. For a tool call, pieces[0] is the call's
    header token (id, name) and the rest concatenate to the arguments JSON string."""

    pieces: tuple[str, ...]
    finish_reason: str  # engine-level: "stop" (ended on its own) or "length" (hit max_tokens)
    tool_call: ToolCallPlan | None = None

    @property
    def api_finish_reason(self) -> str:
        if self.tool_call is not None and self.finish_reason == "stop":
            return "tool_calls"
        return self.finish_reason

    def text(self, num_tokens: int) -> str:
        """The content produced by the first num_tokens tokens."""
        start = 1 if self.tool_call is not None else 0
        return "".join(self.pieces[start:num_tokens])


def answer_seed(config_seed: int, request_seed: int | None, prompt_ids: Sequence[int]) -> int:
    digest = hashlib.blake2b(digest_size=8)
    digest.update(f"{config_seed}:{request_seed}:".encode())
    digest.update(array("I", prompt_ids).tobytes())
    return int.from_bytes(digest.digest(), "little")


def plan_words(rng: random.Random, count: int) -> list[str]:
    """count tokens of sentence-like filler: capitalised starts, full stops, a few commas."""
    pieces: list[str] = []
    left_in_sentence = 0
    while len(pieces) < count:
        if left_in_sentence == 0:
            if pieces:
                pieces.append(".")
            left_in_sentence = rng.randint(5, 14)
            word = rng.choice(_WORDS).capitalize()
        else:
            word = rng.choice(_WORDS)
        pieces.append(" " + word if pieces else word)
        left_in_sentence -= 1
        if left_in_sentence > 1 and rng.random() < 0.08:
            pieces.append(",")
    return pieces[:count]


def _cap(
    pieces: Sequence[str], max_tokens: int, tool_call: ToolCallPlan | None = None
) -> AnswerPlan:
    if len(pieces) > max_tokens:
        return AnswerPlan(tuple(pieces[:max_tokens]), "length", tool_call)
    return AnswerPlan(tuple(pieces), "stop", tool_call)


def plan_text(
    config: SimConfig, options: GenerationOptions, prompt_ids: Sequence[int], max_tokens: int
) -> AnswerPlan:
    """Filler text that ends on its own after a drawn length, unless ignore_eos or max_tokens."""
    rng = random.Random(answer_seed(config.seed, options.seed, prompt_ids))
    natural = rng.randint(config.output_tokens_min, config.output_tokens_max)
    if options.ignore_eos or natural > max_tokens:
        return AnswerPlan(tuple(plan_words(rng, max_tokens)), "length")
    return AnswerPlan((*plan_words(rng, natural - 1), "."), "stop")


def plan_chat(
    config: SimConfig, chat: ChatRequest, prompt_ids: Sequence[int], max_tokens: int
) -> AnswerPlan:
    """A tool call when one is forced, JSON when a response_format asks for it, else text."""
    if chat.forced_tool is not None:
        tool = next(t for t in chat.tools if t.name == chat.forced_tool)
        arguments = orjson.dumps(placeholder(tool.parameters)).decode()
        call = ToolCallPlan(f"chatcmpl-tool-{uuid.uuid4().hex}", tool.name)
        return _cap([tool.name, *split_pieces(arguments)], max_tokens, call)
    if chat.response_schema is not None:
        document = orjson.dumps(placeholder(chat.response_schema)).decode()
        return _cap(split_pieces(document), max_tokens)
    if chat.json_object:
        rng = random.Random(answer_seed(config.seed, chat.options.seed, prompt_ids))
        words = "".join(plan_words(rng, rng.randint(3, 8)))
        return _cap(split_pieces(orjson.dumps({"answer": words}).decode()), max_tokens)
    question = next((text for role, text in reversed(chat.turns) if role == "user"), "")
    if config.judge and is_rubric(question):
        return _cap(split_pieces(verdict(question)), max_tokens)
    plan = plan_text(config, chat.options, prompt_ids, max_tokens)
    if config.quality_tier is None:
        return plan
    quality = answer_quality(question, config.quality_tier)
    return _cap([*split_pieces(mark(quality)), *plan.pieces], max_tokens)
