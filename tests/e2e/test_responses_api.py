"""The official openai SDK's `client.responses`, unchanged, against the gateway in front of
simulated vLLM backends (the translated path: Responses → chat completions → Responses).

Tenant `keeper` may store conversations (`store_content: full`), `other` too (for isolation),
`plain` has the default `store_content: none`; `brief` stores them for its own short
retention (`responses_retention_hours`).
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import openai
import pytest

from gateway.app import create_app
from gateway.policy.loader import parse_policy
from gateway.settings import Settings
from gateway.sim.config import SimConfig
from gateway.sim.server import create_sim_app
from tests.e2e.conftest import FAST, create_key
from tests.support.audit_mirror import mirror_rows
from tests.support.sdk_clients import OpenedClients
from tests.support.servers import ServerThread, serve

WEATHER = {"type": "function", "name": "get_weather", "description": "weather for a city",
           "parameters": {"type": "object", "properties": {"city": {"type": "string"}},
                          "required": ["city"]}}


@dataclass
class ResponsesRig:
    url: str
    keys: dict[str, str]
    sim: ServerThread
    flaky: ServerThread
    audit_path: Path
    opened: OpenedClients = field(default_factory=OpenedClients)

    def fault(self, fault: dict[str, object]) -> None:
        httpx.post(f"{self.flaky.url}/sim/faults", json=fault, timeout=10).raise_for_status()

    def client(self, tenant: str = "keeper") -> openai.OpenAI:
        return self.opened.track(openai.OpenAI(base_url=f"{self.url}/v1",
                                               api_key=self.keys[tenant], max_retries=0))


@pytest.fixture(scope="module")
def rig(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ResponsesRig]:
    tmp = tmp_path_factory.mktemp("responses")
    db_url = f"sqlite+aiosqlite:///{tmp}/gw.db"
    keys = {name: create_key(db_url, name) for name in ("keeper", "other", "plain", "thrifty",
                                                        "brief")}
    sim = ServerThread(create_sim_app(SimConfig(model_name="sim-model", seed=3, **FAST)))
    flaky = ServerThread(create_sim_app(SimConfig(model_name="sim-model", seed=4, **FAST)))
    sim.start()
    flaky.start()

    def backend(name: str, url: str) -> str:
        return (f"  - name: {name}\n    provider: vllm\n    base_url: {url}/v1\n"
                "    model: sim-model\n    context_window: 8192\n    quality_tier: 2\n"
                "    price_per_mtok_usd: {input: 1.0, output: 2.0}\n")

    policy = parse_policy(
        "version: 1\nbackends:\n" + backend("local", sim.url) + backend("flaky", flaky.url)
        + "models:\n  auto: [local]\n  only-flaky: [flaky]\n"
        "  failover: {backends: [flaky, local], strategy: priority}\n"
        "tenants:\n  keeper: {store_content: full}\n  other: {store_content: full}\n"
        "  thrifty: {budget: {daily_usd: 0.0002}}\n"
        "  brief: {store_content: full, responses_retention_hours: 0.0005}\n"  # 1.8 s
    )
    settings = Settings(database_url=db_url, admin_key="admin-test-key",
                        audit_log_path=str(tmp / "audit.jsonl"), upstream_read_timeout_s=2.0)
    try:
        with serve(create_app(settings, policy=policy)) as server:
            yield ResponsesRig(server.url, keys, sim, flaky, tmp / "audit.jsonl")
    finally:
        sim.stop()
        flaky.stop()


def test_plain_string_input(rig: ResponsesRig) -> None:
    raw = rig.client().responses.with_raw_response.create(
        model="auto", input="Say hello to the gateway.", max_output_tokens=12)
    response = raw.parse()
    assert response.object == "response"
    assert response.id.startswith("resp_")
    assert response.status in ("completed", "incomplete")
    assert response.output_text
    assert response.output[0].type == "message"
    assert response.usage is not None
    assert response.usage.input_tokens > 0
    assert 0 < response.usage.output_tokens <= 12
    assert response.usage.total_tokens == (response.usage.input_tokens
                                           + response.usage.output_tokens)
    assert raw.headers["x-gateway-backend"] == "local"
    expected = (response.usage.input_tokens * 1 + response.usage.output_tokens * 2) / 1e6
    assert float(raw.headers["x-gateway-cost-usd"]) == pytest.approx(expected, abs=1e-6)


def test_item_list_input_with_instructions_and_settings(rig: ResponsesRig) -> None:
    response = rig.client().responses.create(
        model="auto", instructions="Answer briefly.",
        input=[{"role": "user", "content": [{"type": "input_text", "text": "Hello?"}]}],
        temperature=0.2, top_p=0.9, metadata={"team": "search"}, user="u-1",
        max_output_tokens=8)
    assert response.instructions == "Answer briefly."
    assert response.temperature == 0.2 and response.top_p == 0.9
    assert response.metadata == {"team": "search"}
    assert response.max_output_tokens == 8


def test_hitting_max_output_tokens_is_incomplete(rig: ResponsesRig) -> None:
    response = rig.client().responses.create(
        model="auto", input="Tell me a long story about routers.", max_output_tokens=2)
    assert response.status == "incomplete"
    assert response.incomplete_details is not None
    assert response.incomplete_details.reason == "max_output_tokens"


def test_streaming_events_in_order_and_the_helpers_work(rig: ResponsesRig) -> None:
    client = rig.client()
    events = list(client.responses.create(
        model="auto", input="Say hello to the gateway.", max_output_tokens=10, stream=True))
    kinds = [e.type for e in events]
    assert kinds[:4] == ["response.created", "response.in_progress",
                         "response.output_item.added", "response.content_part.added"]
    assert kinds[-4:] == ["response.output_text.done", "response.content_part.done",
                          "response.output_item.done", kinds[-1]]
    assert kinds[-1] in ("response.completed", "response.incomplete")
    assert [e.sequence_number for e in events] == list(range(len(events)))
    text = "".join(e.delta for e in events if e.type == "response.output_text.delta")
    assert text and events[-1].response.output_text == text
    assert events[-1].response.usage.output_tokens > 0

    # The helper's final response is the `response.completed` one: leave room to finish.
    with client.responses.stream(model="auto", input="Say hello again.",
                                 max_output_tokens=400) as stream:
        deltas = [e.delta for e in stream if e.type == "response.output_text.delta"]
        final = stream.get_final_response()
    assert final.output_text == "".join(deltas)


def test_function_tools_forced_call_and_its_output(rig: ResponsesRig) -> None:
    client = rig.client()
    response = client.responses.create(
        model="auto", input="What is the weather in Paris?", tools=[WEATHER],
        tool_choice={"type": "function", "name": "get_weather"}, parallel_tool_calls=False)
    calls = [item for item in response.output if item.type == "function_call"]
    assert len(calls) == 1 and calls[0].name == "get_weather"
    assert "city" in json.loads(calls[0].arguments)
    follow = client.responses.create(
        model="auto", previous_response_id=response.id, tools=[WEATHER],
        input=[{"type": "function_call_output", "call_id": calls[0].call_id,
                "output": '{"temperature_c": 18}'}])
    assert follow.output_text
    assert follow.previous_response_id == response.id


def test_streamed_tool_call_arguments(rig: ResponsesRig) -> None:
    with rig.client().responses.stream(
        model="auto", input="Weather in Oslo?", tools=[WEATHER],
        tool_choice={"type": "function", "name": "get_weather"},
    ) as stream:
        kinds = [e.type for e in stream]
        final = stream.get_final_response()
    assert "response.function_call_arguments.delta" in kinds
    assert "response.function_call_arguments.done" in kinds
    call = final.output[0]
    assert call.type == "function_call" and "city" in json.loads(call.arguments)


def test_structured_output_json_schema(rig: ResponsesRig) -> None:
    schema = {"type": "object", "properties": {"city": {"type": "string"},
                                               "days": {"type": "integer"}},
              "required": ["city", "days"], "additionalProperties": False}
    response = rig.client().responses.create(
        model="auto", input="Plan a trip.", max_output_tokens=200,
        text={"format": {"type": "json_schema", "name": "trip", "schema": schema,
                         "strict": True}})
    document = json.loads(response.output_text)
    assert set(document) == {"city", "days"} and isinstance(document["days"], int)
    assert response.text.format.type == "json_schema"


def test_previous_response_id_continues_the_conversation(rig: ResponsesRig) -> None:
    client = rig.client()
    first = client.responses.create(model="auto", input="My name is Ada.",
                                    max_output_tokens=5)
    second = client.responses.create(model="auto", previous_response_id=first.id,
                                     input="What is my name?", max_output_tokens=5)
    # The second prompt carried the first turn and its answer: more tokens than alone.
    alone = client.responses.create(model="auto", input="What is my name?",
                                    max_output_tokens=5, store=False)
    assert second.usage.input_tokens > alone.usage.input_tokens + first.usage.output_tokens
    assert alone.store is False
    with pytest.raises(openai.NotFoundError):
        client.responses.retrieve(alone.id)


def test_a_tenants_own_retention_ends_its_conversations(rig: ResponsesRig) -> None:
    client = rig.client("brief")
    first = client.responses.create(model="auto", input="My name is Ada.",
                                    max_output_tokens=5)
    assert first.store is True
    client.responses.create(model="auto", previous_response_id=first.id,
                            input="What is my name?", max_output_tokens=5)
    time.sleep(2.0)  # past brief's 1.8 s; keeper's (the 30-day default) is untouched
    with pytest.raises(openai.NotFoundError):
        client.responses.create(model="auto", previous_response_id=first.id,
                                input="And now?", max_output_tokens=5)
    with pytest.raises(openai.NotFoundError):
        client.responses.retrieve(first.id)


def test_retrieve_and_delete(rig: ResponsesRig) -> None:
    client = rig.client()
    created = client.responses.create(model="auto", input="Remember this.",
                                      max_output_tokens=5)
    fetched = client.responses.retrieve(created.id)
    assert fetched.id == created.id and fetched.output_text == created.output_text
    client.responses.delete(created.id)
    with pytest.raises(openai.NotFoundError):
        client.responses.retrieve(created.id)
    with pytest.raises(openai.NotFoundError):
        client.responses.delete(created.id)
    with pytest.raises(openai.NotFoundError) as missing:
        client.responses.create(model="auto", previous_response_id=created.id,
                                input="and now?")
    assert missing.value.body["param"] == "previous_response_id"


def test_a_streamed_response_is_stored(rig: ResponsesRig) -> None:
    client = rig.client()
    with client.responses.stream(model="auto", input="Stream and keep.",
                                 max_output_tokens=400) as stream:
        final = stream.get_final_response()
    assert client.responses.retrieve(final.id).output_text == final.output_text


def test_another_tenant_sees_404(rig: ResponsesRig) -> None:
    mine = rig.client("keeper").responses.create(model="auto", input="secret plans",
                                                 max_output_tokens=4)
    thief = rig.client("other")
    with pytest.raises(openai.NotFoundError):
        thief.responses.retrieve(mine.id)
    with pytest.raises(openai.NotFoundError):
        thief.responses.delete(mine.id)
    with pytest.raises(openai.NotFoundError):
        thief.responses.create(model="auto", previous_response_id=mine.id, input="more")
    assert rig.client("keeper").responses.retrieve(mine.id).id == mine.id


def test_a_tenant_that_keeps_no_content_gets_a_clear_400(rig: ResponsesRig) -> None:
    client = rig.client("plain")
    response = client.responses.create(model="auto", input="Hi", max_output_tokens=4)
    assert response.store is False
    with pytest.raises(openai.BadRequestError) as refused:
        client.responses.create(model="auto", previous_response_id=response.id, input="Hi")
    assert refused.value.body["param"] == "previous_response_id"
    assert "store_content: none" in refused.value.body["message"]


def test_what_cannot_be_translated_is_refused_naming_the_parameter(rig: ResponsesRig) -> None:
    client = rig.client()
    with pytest.raises(openai.BadRequestError) as refused:
        client.responses.create(model="auto", input="Search the web",
                                tools=[{"type": "web_search"}])
    assert refused.value.body["param"] == "tools[0].type"
    with pytest.raises(openai.BadRequestError) as unknown:
        client.responses.create(model="auto", input="Hi", extra_body={"frobnicate": 1})
    assert unknown.value.body["param"] == "frobnicate"


@pytest.mark.parametrize("stream", [False, True])
def test_a_failing_backend_falls_over_before_the_first_byte(rig: ResponsesRig,
                                                            stream: bool) -> None:
    rig.fault({"status": 503, "count": 1})
    raw = rig.client().responses.with_raw_response.create(
        model="failover", input="Hello?", max_output_tokens=400, stream=stream)
    assert raw.headers["x-gateway-backend"] == "local"
    assert raw.headers["x-gateway-attempts"] == "2"
    if stream:
        assert list(raw.parse())[-1].type == "response.completed"
    else:
        assert raw.parse().output_text


def test_a_stream_that_breaks_ends_with_error_and_response_failed(rig: ResponsesRig) -> None:
    rig.fault({"abort_stream_after_tokens": 3, "count": 1})
    events = list(rig.client().responses.create(
        model="only-flaky", input="Count to fifty.", max_output_tokens=60, stream=True))
    kinds = [e.type for e in events]
    assert "response.output_text.delta" in kinds, "what came before the failure was relayed"
    assert kinds[-2:] == ["error", "response.failed"]
    assert events[-1].response.status == "failed"


def test_requests_are_audited_and_budgeted_like_chat(rig: ResponsesRig) -> None:
    client = rig.client("thrifty")
    first = client.responses.with_raw_response.create(model="auto", input="Hello there.",
                                                      max_output_tokens=20)
    request_id = first.headers["x-request-id"]
    with pytest.raises(openai.RateLimitError) as refused:
        for _ in range(20):  # the daily budget is 200 micro-dollars: spent within a few
            client.responses.create(model="auto", input="Hello there.", max_output_tokens=20)
    assert refused.value.code == "insufficient_quota"
    row = audited(rig, request_id)
    assert row["backend"] == "local" and row["cost_micro_usd"] > 0
    assert row["outcome"] == "ok"


def audited(rig: ResponsesRig, request_id: str) -> dict[str, object]:
    deadline = time.monotonic() + 10  # the audit writer flushes in batches
    while not (mine := [r for r in mirror_rows(rig.audit_path)
                        if r["request_id"] == request_id]):
        assert time.monotonic() < deadline, "the request never reached the audit log"
        time.sleep(0.05)
    return mine[0]


def test_a_finished_stream_is_recorded_as_served(rig: ResponsesRig) -> None:
    raw = rig.client().responses.with_raw_response.create(
        model="auto", input="Hello there.", max_output_tokens=400, stream=True)
    assert list(raw.parse())[-1].type == "response.completed"
    row = audited(rig, raw.headers["x-request-id"])
    assert row["outcome"] == "ok" and row["completion_tokens"] > 0
    assert row["entry_point"] == "responses"  # the API called, not the routed endpoint


def test_the_openapi_document_lists_every_error_a_client_can_get(rig: ResponsesRig) -> None:
    document = httpx.get(f"{rig.url}/openapi.json", timeout=10).json()
    public = {"/healthz", "/readyz"}
    for path, operations in document["paths"].items():
        for method, operation in operations.items():
            statuses = set(operation["responses"])
            assert "422" not in statuses, (method, path)  # rendered as 400, never 422
            if path not in public:
                assert {"400", "401", "403", "404", "413", "429"} <= statuses, (method, path)
                assert operation["security"], (method, path)
    create = document["paths"]["/v1/responses"]["post"]
    assert set(create["responses"]["200"]["content"]) == {"application/json",
                                                          "text/event-stream"}
    assert "retry-after" in create["responses"]["429"]["headers"]


def test_a_wrong_method_gets_405_with_every_allowed_method(rig: ResponsesRig) -> None:
    resp = httpx.request("PATCH", f"{rig.url}/v1/responses/resp_1", timeout=10,
                         headers={"authorization": f"Bearer {rig.keys['keeper']}"})
    assert resp.status_code == 405
    assert set(resp.headers["allow"].split(", ")) >= {"GET", "DELETE"}
    assert resp.json()["error"]["code"] == "method_not_allowed"


def test_input_items_are_listed_as_the_sdk_pages_them(rig: ResponsesRig) -> None:
    client = rig.client()
    first = client.responses.create(model="auto", input="One.", max_output_tokens=5)
    second = client.responses.create(
        model="auto", previous_response_id=first.id, max_output_tokens=5,
        input=[{"role": "user", "content": [{"type": "input_text", "text": "Two."}]}])
    items = list(client.responses.input_items.list(second.id, order="asc"))
    assert [item.type for item in items] == ["message", "message", "message"]
    assert [item.role for item in items] == ["user", "assistant", "user"]
    assert items[0].content[0].text == "One." and items[2].content[0].text == "Two."
    newest = client.responses.input_items.list(second.id, limit=1)
    assert newest.data[0].id == items[-1].id and newest.has_more
    assert [i.id for i in client.responses.input_items.list(
        second.id, limit=1, after=newest.data[0].id).data] == [items[1].id]
    with pytest.raises(openai.NotFoundError):
        rig.client("other").responses.input_items.list(second.id)


def test_the_paths_work_without_the_v1_prefix_too(rig: ResponsesRig) -> None:
    client = rig.opened.track(openai.OpenAI(base_url=rig.url, api_key=rig.keys["keeper"],
                                            max_retries=0))
    created = client.responses.create(model="auto", input="Hi", max_output_tokens=5)
    assert client.responses.retrieve(created.id).id == created.id
