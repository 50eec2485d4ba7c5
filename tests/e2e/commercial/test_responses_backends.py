"""`client.responses` through the gateway to every kind of backend: passed through to servers
that speak the Responses API (OpenAI, Azure, a vLLM declared `responses_api: native`; a strict
local server plays them), translated to Anthropic Messages and to a chat-only OpenAI API."""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass, field

import anthropic
import openai
import pytest

from gateway.app import create_app
from gateway.policy.loader import parse_policy
from gateway.settings import Settings
from tests.e2e.conftest import create_key
from tests.support.mock_anthropic import Fault, MockAnthropic
from tests.support.mock_openai import MockOpenAI
from tests.support.mock_openai_responses import WORDS, MockResponsesAPI
from tests.support.sdk_clients import OpenedClients
from tests.support.servers import ServerThread, serve

KEYS = {"TEST_RESPONSES_KEY": "sk-responses-test", "TEST_CLAUDE_KEY": "sk-ant-responses",
        "TEST_CHAT_KEY": "sk-chat-only"}
WEATHER = {"type": "function", "name": "get_weather", "description": "weather for a city",
           "parameters": {"type": "object", "properties": {"city": {"type": "string"}},
                          "required": ["city"]}}


@dataclass
class Backends:
    url: str
    key: str
    native: MockResponsesAPI
    claude: MockAnthropic
    chat: MockOpenAI
    opened: OpenedClients = field(default_factory=OpenedClients)

    def client(self) -> openai.OpenAI:
        return self.opened.track(openai.OpenAI(base_url=f"{self.url}/v1", api_key=self.key,
                                               max_retries=0))

    def claude_client(self) -> anthropic.Anthropic:
        return self.opened.track(anthropic.Anthropic(base_url=self.url, api_key=self.key,
                                                     max_retries=0))


def policy_text(native: str, claude: str, chat: str) -> str:
    common = "zone: external, context_window: 128000, quality_tier: 3"
    return f"""\
version: 1
backends:
  - {{name: gpt-native, provider: openai, base_url: "{native}/v1", model: gpt-4.1,
     api_key_env: TEST_RESPONSES_KEY, {common}}}
  - {{name: azure-native, provider: azure, base_url: "{native}/openai/v1", model: gpt4o,
     api_key_env: TEST_RESPONSES_KEY, {common}}}
  - {{name: vllm-native, provider: vllm, base_url: "{native}/v1", model: llama,
     api_key_env: TEST_RESPONSES_KEY, responses_api: native, {common}}}
  - {{name: claude, provider: anthropic, base_url: "{claude}", model: claude-sonnet-test,
     api_key_env: TEST_CLAUDE_KEY, {common},
     price_per_mtok_usd: {{input: 3.0, output: 15.0, cached_input: 0.3,
                          cache_write_input: 3.75}}}}
  - {{name: gpt-chat, provider: openai, base_url: "{chat}/v1", model: gpt-4.1,
     api_key_env: TEST_CHAT_KEY, responses_api: translate, {common}}}
models:
  native-then-chat: {{backends: [gpt-native, gpt-chat], strategy: priority}}
rules:
  - name: sensitive-redacted
    when: {{sensitivity: [pii, phi, secret]}}
    redact: true
tenants:
  acme: {{store_content: full}}
"""


@pytest.fixture(scope="module")
def backends(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Backends]:
    tmp = tmp_path_factory.mktemp("responses-backends")
    db_url = f"sqlite+aiosqlite:///{tmp}/gw.db"
    key = create_key(db_url, "acme")
    saved = {name: os.environ.get(name) for name in KEYS}
    os.environ.update(KEYS)
    native = MockResponsesAPI(api_key=KEYS["TEST_RESPONSES_KEY"])
    claude = MockAnthropic(api_key=KEYS["TEST_CLAUDE_KEY"], writes_cache_first=True)
    chat = MockOpenAI(api_key=KEYS["TEST_CHAT_KEY"])
    servers = [ServerThread(native.app()), ServerThread(claude.app()), ServerThread(chat.app())]
    for server in servers:
        server.start()
    settings = Settings(database_url=db_url, audit_log_path=str(tmp / "audit.jsonl"),
                        upstream_read_timeout_s=5.0, breaker_failures=1000,
                        breaker_min_attempts=10**9)
    policy = parse_policy(policy_text(*(s.url for s in servers)))
    try:
        with serve(create_app(settings, policy=policy)) as gateway:
            yield Backends(gateway.url, key, native, claude, chat)
    finally:
        for server in servers:
            server.stop()
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


@pytest.mark.parametrize(("model", "path"), [("gpt-native", "/v1/responses"),
                                             ("azure-native", "/openai/v1/responses"),
                                             ("vllm-native", "/v1/responses")])
def test_native_backends_get_the_request_as_sent(backends: Backends, model: str,
                                                 path: str) -> None:
    raw = backends.client().responses.with_raw_response.create(
        model=model, input="Hello?", instructions="Be kind.", max_output_tokens=50,
        metadata={"team": "a"}, reasoning={"effort": "low"})
    response = raw.parse()
    sent = backends.native.last()
    assert sent.path == path
    assert sent.body["input"] == [{"type": "message", "role": "user", "content": "Hello?"}]
    assert sent.body["instructions"] == "Be kind." and sent.body["max_output_tokens"] == 50
    assert sent.body["reasoning"] == {"effort": "low"}
    assert sent.body["store"] is False and "metadata" not in sent.body
    assert response.output_text == "".join(WORDS)
    assert response.id.startswith("resp_") and response.id not in backends.native.issued
    assert response.model == model and response.metadata == {"team": "a"}
    assert response.usage.input_tokens == 12
    assert response.usage.input_tokens_details.cached_tokens == 4
    assert raw.headers["x-gateway-backend"] == model


def test_native_stream_keeps_the_upstream_events(backends: Backends) -> None:
    client = backends.client()
    with client.responses.stream(model="gpt-native", input="Hi") as stream:
        kinds = [e.type for e in stream]
        final = stream.get_final_response()
    assert kinds == ["response.created", "response.in_progress", "response.output_item.added",
                     "response.content_part.added",
                     *["response.output_text.delta"] * len(WORDS),
                     "response.output_text.done", "response.content_part.done",
                     "response.output_item.done", "response.completed"]
    assert final.output_text == "".join(WORDS) and final.id not in backends.native.issued
    assert "stream_options" not in backends.native.last().body
    assert client.responses.retrieve(final.id).output_text == final.output_text


def test_native_conversation_state_stays_at_the_gateway(backends: Backends) -> None:
    client = backends.client()
    first = client.responses.create(model="gpt-native", input="I like green tea.")
    second = client.responses.create(model="gpt-native", previous_response_id=first.id,
                                     input="What do I like?")
    sent = backends.native.last().body
    assert "previous_response_id" not in sent
    # The whole conversation, without the ids only the gateway issued.
    assert [item.get("role") for item in sent["input"]] == ["user", "assistant", "user"]
    assert sent["input"][1]["content"][0]["text"] == first.output_text
    assert second.previous_response_id == first.id


def test_a_native_stream_that_fails_ends_with_response_failed(backends: Backends) -> None:
    backends.native.fail_streams = 1
    events = list(backends.client().responses.create(model="gpt-native", input="Hi",
                                                      stream=True))
    assert events[-1].type == "response.failed"
    assert events[-1].response.error.message == "The model failed."


def test_a_rate_limited_native_backend_falls_back_to_translation(backends: Backends) -> None:
    backends.native.rate_limited = 1
    raw = backends.client().responses.with_raw_response.create(
        model="native-then-chat", input="Hello?", max_output_tokens=40)
    assert raw.headers["x-gateway-backend"] == "gpt-chat"
    assert raw.parse().output_text
    sent = backends.chat.last().body
    assert sent["messages"] == [{"role": "user", "content": "Hello?"}]
    assert sent["max_tokens"] == 40


def test_translated_to_anthropic_messages(backends: Backends) -> None:
    client = backends.client()
    response = client.responses.create(
        model="claude", instructions="Be brief.", input="Hello?", max_output_tokens=64)
    sent = backends.claude.requests[-1].body
    assert sent["system"] == [{"type": "text", "text": "Be brief."}]
    assert sent["max_tokens"] == 64
    assert sent["messages"] == [{"role": "user",
                                 "content": [{"type": "text", "text": "Hello?"}]}]
    assert response.output_text and response.status == "completed"
    assert response.usage.input_tokens > 0
    with client.responses.stream(model="claude", input="Stream it.",
                                 max_output_tokens=64) as stream:
        final = stream.get_final_response()
    assert final.output_text


def test_anthropic_tool_calls_round_trip(backends: Backends) -> None:
    client = backends.client()
    response = client.responses.create(
        model="claude", input="Weather in Paris?", tools=[WEATHER], max_output_tokens=64,
        tool_choice={"type": "function", "name": "get_weather"})
    call = next(item for item in response.output if item.type == "function_call")
    assert call.name == "get_weather"
    client.responses.create(
        model="claude", previous_response_id=response.id, tools=[WEATHER],
        max_output_tokens=64,
        input=[{"type": "function_call_output", "call_id": call.call_id, "output": "18C"}])
    sent = backends.claude.requests[-1].body
    assert sent["messages"][1]["content"][0]["type"] == "tool_use"
    assert sent["messages"][2]["content"][0] == {
        "type": "tool_result", "tool_use_id": call.call_id, "content": "18C"}


def test_what_anthropic_cannot_take_is_refused_naming_parameter_and_backend(
    backends: Backends,
) -> None:
    with pytest.raises(openai.BadRequestError) as refused:
        backends.client().responses.create(
            model="claude", input="Hi", max_output_tokens=4096, reasoning={"effort": "low"},
            tools=[WEATHER], tool_choice={"type": "function", "name": "get_weather"})
    assert "claude" in refused.value.message
    assert refused.value.body["param"] == "reasoning.effort"


def test_retry_after_from_an_upstream_429_reaches_the_openai_client(backends: Backends) -> None:
    backends.native.rate_limited = 1
    with pytest.raises(openai.RateLimitError) as limited:
        backends.client().responses.create(model="gpt-native", input="Hi")
    assert limited.value.response.headers["retry-after"] == "7"


def test_retry_after_from_an_upstream_429_reaches_the_claude_client(backends: Backends) -> None:
    backends.claude.faults.append(Fault(error_type="rate_limit_error"))
    with pytest.raises(anthropic.RateLimitError) as limited:
        backends.claude_client().messages.create(
            model="claude", max_tokens=32, messages=[{"role": "user", "content": "Hi"}])
    assert limited.value.response.headers["retry-after"] == "3"


def test_cache_writes_are_priced_at_the_cache_write_price(backends: Backends) -> None:
    client = backends.claude_client()
    system = [{"type": "text", "text": "You are a careful assistant for pricing tests.",
               "cache_control": {"type": "ephemeral"}}]
    costs, usages = [], []
    for _ in range(2):
        raw = client.messages.with_raw_response.create(
            model="claude", max_tokens=16, system=system,  # type: ignore[arg-type]
            messages=[{"role": "user", "content": "Hi"}])
        costs.append(float(raw.headers["x-gateway-cost-usd"]))
        usages.append(raw.parse().usage)
    written, read = usages
    assert written.cache_creation_input_tokens > 0 and written.cache_read_input_tokens == 0
    assert read.cache_read_input_tokens > 0 and read.cache_creation_input_tokens == 0
    # $3/M fresh input, $3.75/M written, $0.30/M read, $15/M output: micro-USD per token.
    assert costs[0] == pytest.approx((written.input_tokens * 3.0
                                      + written.cache_creation_input_tokens * 3.75
                                      + written.output_tokens * 15.0) / 1e6, abs=1.5e-6)
    assert costs[1] == pytest.approx((read.input_tokens * 3.0
                                      + read.cache_read_input_tokens * 0.3
                                      + read.output_tokens * 15.0) / 1e6, abs=1.5e-6)


def test_reasoning_effort_on_claude_comes_back_as_a_reasoning_item(backends: Backends) -> None:
    client = backends.client()
    response = client.responses.create(model="claude", input="Think first.",
                                       reasoning={"effort": "low"}, max_output_tokens=4096)
    assert backends.claude.last().body["thinking"]["type"] == "enabled"
    assert [item.type for item in response.output] == ["reasoning", "message"]
    assert response.output[0].content[0].text
    with client.responses.stream(model="claude", input="Think first.",
                                 reasoning={"effort": "low"}, max_output_tokens=4096) as stream:
        kinds = {event.type for event in stream}
        final = stream.get_final_response()
    assert "response.reasoning_text.delta" in kinds
    assert [item.type for item in final.output] == ["reasoning", "message"]


def test_built_in_tools_pass_through_and_are_refused_where_only_translation_could_go(
    backends: Backends,
) -> None:
    client = backends.client()
    search = [{"type": "web_search"}]
    response = client.responses.create(model="gpt-native", input="News today?",
                                       tools=search)  # type: ignore[list-item]
    assert backends.native.last().body["tools"] == search and response.output_text
    with pytest.raises(openai.BadRequestError) as refused:
        client.responses.create(model="claude", input="News today?",
                                tools=search)  # type: ignore[list-item]
    assert refused.value.body["param"] == "tools[0].type"
    assert "backend claude (anthropic)" in refused.value.message
    # A pool falls over to where it can go: the native backend, after the chat-only one.
    backends.native.rate_limited = 1
    with pytest.raises(openai.BadRequestError) as nowhere:
        client.responses.create(model="native-then-chat", input="News?",
                                tools=search)  # type: ignore[list-item]
    assert "backend gpt-chat" in nowhere.value.message
