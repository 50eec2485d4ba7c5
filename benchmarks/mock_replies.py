"""What the benchmark mock answers in OpenAI's dialect: the reply shape, its text, usage and
chunks, the models list, and the shared per-server state (ids, live stream count).
"""

from __future__ import annotations

import itertools
import time
from dataclasses import dataclass
from typing import Any

import orjson
from mock_http import chunk as _chunk

PROMPT_TOKENS = 12  # the usage we report; the mock does not tokenize

# Words cycled to make the reply text; one word plus a space is "one token" for the mock.
WORDS = (
    "the quick brown fox jumps over a lazy dog while seven small birds sing softly "
    "near an old stone bridge beside calm water under a pale morning sky"
).split()


@dataclass(frozen=True, slots=True)
class ReplyShape:
    """How long replies are and how fast a stream emits its tokens."""

    reply_tokens: int
    stream_tokens: int
    stream_interval_s: float


def token_text(index: int) -> str:
    return WORDS[index % len(WORDS)] + " "


def openai_usage(completion_tokens: int) -> dict[str, int]:
    total = PROMPT_TOKENS + completion_tokens
    return {
        "prompt_tokens": PROMPT_TOKENS,
        "completion_tokens": completion_tokens,
        "total_tokens": total,
    }


def openai_event(obj: dict[str, Any]) -> bytes:
    return _chunk(b"data: " + orjson.dumps(obj) + b"\n\n")


MODELS_BODY = orjson.dumps(
    {"object": "list", "data": [{"id": "mock-model", "object": "model", "owned_by": "mock"}]}
)
ERROR_404 = orjson.dumps({"error": {"message": "not found", "type": "not_found_error"}})
ERROR_400 = orjson.dumps({"error": {"message": "invalid JSON body", "type": "invalid_request"}})


class Upstream:
    """Shared state of one mock server: reply shape, id counter, and live stream count."""

    def __init__(self, shape: ReplyShape) -> None:
        self.shape = shape
        self.ids = itertools.count(1)
        self.active_streams = 0
        # The non-streaming reply text never changes, so build it once.
        self.reply_text = "".join(token_text(i) for i in range(shape.reply_tokens)).rstrip()

    def metrics_body(self) -> bytes:
        # Just enough vLLM-style gauges for a gateway scraper to see a healthy, idle backend.
        running = self.active_streams
        return (
            b"# TYPE vllm:num_requests_running gauge\n"
            b'vllm:num_requests_running{model_name="mock-model"} %d\n'
            b"# TYPE vllm:num_requests_waiting gauge\n"
            b'vllm:num_requests_waiting{model_name="mock-model"} 0\n'
            b"# TYPE vllm:gpu_cache_usage_perc gauge\n"
            b'vllm:gpu_cache_usage_perc{model_name="mock-model"} 0.0\n'
            b"# TYPE vllm:kv_cache_usage_perc gauge\n"
            b'vllm:kv_cache_usage_perc{model_name="mock-model"} 0.0\n' % running
        )

    def completion_body(self, model: str) -> bytes:
        return orjson.dumps(
            {
                "id": f"chatcmpl-mock-{next(self.ids)}",
                "object": "chat.completion",
                "created": int(time.time()),
                "model": model,
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": self.reply_text},
                        "finish_reason": "stop",
                    }
                ],
                "usage": openai_usage(self.shape.reply_tokens),
            }
        )
