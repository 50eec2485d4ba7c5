"""openai SDK → gateway → a server speaking Anthropic's API: a backend with
`tokens: {count: tokenize}` is asked `POST /v1/messages/count_tokens` (the request
translated, without the fields count_tokens refuses) when the estimate would turn a prompt
away, and a prompt the estimate alone refuses is served."""

from __future__ import annotations

import openai
import pytest

from tests.e2e.commercial.conftest import ENV, Rig

# ~300 o200k tokens: 1,200 at the 4x margin, over the 1,000-token window; 240 words, which
# is what the mock's tokenizer counts.
PROMPT = "Summarise the quarterly report on warehouse throughput and staffing levels. " * 24


def ask(gw: Rig, model: str) -> openai.types.chat.ChatCompletion:
    return gw.openai().chat.completions.create(
        model=model, max_tokens=16, messages=[{"role": "system", "content": "Be brief."},
                                              {"role": "user", "content": PROMPT}])


def test_the_estimate_alone_refuses_the_prompt(gw: Rig) -> None:
    with pytest.raises(openai.BadRequestError) as refused:
        ask(gw, "claude-guessed")
    assert refused.value.code == "context_length_exceeded"


def test_anthropics_count_lets_the_prompt_through(gw: Rig) -> None:
    before = len(gw.claude.requests)
    reply = ask(gw, "claude-counted")
    assert reply.choices[0].message.content
    count, completion = gw.claude.requests[before:]
    assert count.headers["x-api-key"] == ENV["TEST_ANTHROPIC_KEY"]
    assert "anthropic-version" in count.headers
    assert set(count.body) == {"model", "messages", "system"}  # no max_tokens, no stream
    assert count.body["system"] == "Be brief." or count.body["system"][0]["text"] == "Be brief."
    assert completion.body["max_tokens"] == 16
