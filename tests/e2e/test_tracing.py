"""OpenTelemetry traces end to end: openai SDK → a traced gateway → simulated vLLM servers, with
spans exported over OTLP/HTTP to a real receiver on 127.0.0.1 and decoded from protobuf."""

from __future__ import annotations

import gzip
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import openai
import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.proto.common.v1.common_pb2 import AnyValue
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from gateway.app import create_app
from gateway.budget.pricing import format_usd
from gateway.policy.loader import parse_policy
from gateway.settings import Settings
from tests.e2e.conftest import HELLO_BODY, Gateway, create_key, policy_text
from tests.support.servers import ServerThread, free_port, serve

SERVICE = "gateway-under-test"
SERVER_KIND, CLIENT_KIND = 2, 3  # opentelemetry.proto.trace.v1.Span.SpanKind
STATUS_ERROR = 2
STEPS = {"classify", "decide", "reserve", "settle"}


@dataclass(frozen=True)
class Exported:
    """One span as the receiver decoded it."""

    name: str
    kind: int
    trace_id: str
    span_id: str
    parent_span_id: str
    attributes: dict[str, object]
    status: int
    events: tuple[str, ...]
    service: str


def _value(value: AnyValue) -> object:
    kind = value.WhichOneof("value")
    if kind == "array_value":
        return [_value(v) for v in value.array_value.values]
    return getattr(value, kind) if kind else None


class Receiver:
    """A minimal OTLP/HTTP trace collector: POST /v1/traces, protobuf in, spans kept."""

    def __init__(self) -> None:
        self.spans: list[Exported] = []
        self.posts = 0
        self.url = ""
        self._lock = threading.Lock()
        self.app = Starlette(routes=[Route("/v1/traces", self._receive, methods=["POST"])])

    async def _receive(self, request: Request) -> Response:
        body = await request.body()
        if request.headers.get("content-encoding") == "gzip":
            body = gzip.decompress(body)
        export = ExportTraceServiceRequest.FromString(body)
        got = []
        for resource_spans in export.resource_spans:
            resource = {a.key: _value(a.value) for a in resource_spans.resource.attributes}
            for scope_spans in resource_spans.scope_spans:
                got += [Exported(
                    name=span.name, kind=span.kind, trace_id=span.trace_id.hex(),
                    span_id=span.span_id.hex(), parent_span_id=span.parent_span_id.hex(),
                    attributes={a.key: _value(a.value) for a in span.attributes},
                    status=span.status.code, events=tuple(e.name for e in span.events),
                    service=str(resource.get("service.name")),
                ) for span in scope_spans.spans]
        with self._lock:
            self.spans += got
            self.posts += 1
        return Response(ExportTraceServiceResponse().SerializeToString(),
                        media_type="application/x-protobuf")

    def trace(self, trace_id: str) -> list[Exported]:
        with self._lock:
            return [s for s in self.spans if s.trace_id == trace_id]

    def wait_for_trace(
        self, find: Callable[[Exported], bool], *, names: set[str], timeout_s: float = 15.0
    ) -> list[Exported]:
        """The whole trace of the span `find` picks, once every span named in `names` is in."""
        deadline = time.monotonic() + timeout_s
        while True:
            with self._lock:
                root = next((s for s in self.spans if find(s)), None)
            spans = self.trace(root.trace_id) if root is not None else []
            if names <= {s.name for s in spans}:
                return spans
            if time.monotonic() > deadline:
                raise AssertionError(f"trace incomplete: {sorted(s.name for s in spans)}")
            time.sleep(0.05)


@pytest.fixture(scope="module")
def receiver() -> Iterator[Receiver]:
    found = Receiver()
    with serve(found.app) as server:
        found.url = server.url
        yield found


@pytest.fixture(scope="module")
def traced(
    gateway: Gateway, receiver: Receiver, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Gateway]:
    """A second gateway in front of the same simulated backends, exporting its traces."""
    tmp = tmp_path_factory.mktemp("traced")
    db_url = f"sqlite+aiosqlite:///{tmp}/gw.db"
    key = create_key(db_url, "acme")
    settings = Settings(
        database_url=db_url, audit_log_path=str(tmp / "audit.jsonl"),
        otel_exporter_otlp_endpoint=receiver.url,
        otel_service_name=SERVICE, breaker_failures=1000, breaker_min_attempts=10**9,
    )
    ports = {name[-1]: sim.port for name, sim in gateway.sims.items()}
    policy = parse_policy(policy_text(ports, free_port()))
    with pytest.MonkeyPatch.context() as env:
        env.setenv("OTEL_BSP_SCHEDULE_DELAY", "50")  # export within 50 ms, not 5 s
        server = ServerThread(create_app(settings, policy=policy)).start()
    try:
        yield Gateway(server.url, key, db_url, tmp / "audit.jsonl", gateway.sims)
    finally:
        server.stop()


def by_name(spans: list[Exported]) -> dict[str, list[Exported]]:
    out: dict[str, list[Exported]] = {}
    for span in spans:
        out.setdefault(span.name, []).append(span)
    return out


def traceparent_of(headers: object) -> tuple[str, str]:
    assert isinstance(headers, dict)
    version, trace_id, span_id, _flags = headers["traceparent"].split("-")
    assert version == "00"
    return trace_id, span_id


def test_a_request_continues_the_clients_trace_and_the_upstream_joins_it(
    traced: Gateway, receiver: Receiver
) -> None:
    client_trace, client_span = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
    raw = traced.client().chat.completions.with_raw_response.create(
        model="only-b", max_tokens=5, temperature=0.5, **HELLO_BODY,  # type: ignore[arg-type]
        extra_headers={"traceparent": f"00-{client_trace}-{client_span}-01"})
    completion = raw.parse()
    request_id = raw.headers["x-request-id"]
    spans = receiver.wait_for_trace(
        lambda s: s.attributes.get("gateway.request_id") == request_id,
        names={"chat only-b", "chat sim-model", *STEPS})
    tree = by_name(spans)
    (server,) = tree["chat only-b"]
    assert (server.trace_id, server.parent_span_id) == (client_trace, client_span)
    assert server.kind == SERVER_KIND
    assert server.service == SERVICE
    usage = completion.usage
    assert usage is not None
    assert server.attributes | {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": "vllm",
        "gen_ai.request.model": "only-b",
        "gen_ai.request.max_tokens": 5,
        "gen_ai.request.temperature": 0.5,
        "gen_ai.response.model": "sim-model",
        "gen_ai.usage.input_tokens": usage.prompt_tokens,
        "gen_ai.usage.output_tokens": usage.completion_tokens,
        "gateway.tenant": "acme",
        "gateway.backend": "sim-b",
        "gateway.rule": raw.headers["x-gateway-rule"],
        "gateway.attempts": 1,
        "http.response.status_code": 200,
    } == server.attributes
    cost = server.attributes["gateway.cost_micro_usd"]
    assert isinstance(cost, int) and format_usd(cost) == raw.headers["x-gateway-cost-usd"]
    for step in STEPS:
        (span,) = tree[step]
        assert span.parent_span_id == server.span_id
    (upstream,) = tree["chat sim-model"]
    assert upstream.kind == CLIENT_KIND and upstream.parent_span_id == server.span_id
    assert upstream.attributes["server.address"] == "127.0.0.1"
    assert upstream.attributes["server.port"] == traced.sims["sim-b"].port
    assert upstream.attributes["http.response.status_code"] == 200
    assert upstream.attributes["gen_ai.usage.output_tokens"] == usage.completion_tokens
    # The backend saw the upstream span as its parent, in the client's trace.
    sent = traced.recorded(request_id)["headers"]
    assert traceparent_of(sent) == (client_trace, upstream.span_id)


def test_a_streams_upstream_span_ends_with_the_stream_and_notes_the_first_chunk(
    traced: Gateway, receiver: Receiver
) -> None:
    raw = traced.client().chat.completions.with_raw_response.create(
        model="only-b", max_tokens=8, stream=True, **HELLO_BODY)  # type: ignore[arg-type]
    request_id = raw.headers["x-request-id"]
    chunks = list(raw.parse())
    assert chunks
    spans = receiver.wait_for_trace(
        lambda s: s.attributes.get("gateway.request_id") == request_id,
        names={"chat only-b", "chat sim-model", *STEPS})
    tree = by_name(spans)
    (server,) = tree["chat only-b"]
    (upstream,) = tree["chat sim-model"]
    assert server.parent_span_id == ""  # no trace context from the client: a new trace
    assert server.attributes["gen_ai.request.stream"] is True
    assert server.attributes["gateway.outcome"] == "ok"
    assert isinstance(server.attributes["gen_ai.response.time_to_first_chunk"], float)
    ttft = upstream.attributes["gen_ai.response.time_to_first_chunk"]
    assert isinstance(ttft, float) and ttft >= 0
    assert "gen_ai.first_chunk" in upstream.events
    output = upstream.attributes["gen_ai.usage.output_tokens"]
    assert isinstance(output, int) and output > 0
    assert output == server.attributes["gen_ai.usage.output_tokens"]
    assert traceparent_of(traced.recorded(request_id)["headers"]) == (
        server.trace_id, upstream.span_id)


def test_each_attempt_is_its_own_client_span_and_failures_say_why(
    traced: Gateway, receiver: Receiver
) -> None:
    raw = traced.client().chat.completions.with_raw_response.create(
        model="failover", max_tokens=3, **HELLO_BODY)  # type: ignore[arg-type]
    request_id = raw.headers["x-request-id"]
    spans = receiver.wait_for_trace(
        lambda s: s.attributes.get("gateway.request_id") == request_id,
        names={"chat failover", "chat sim-model", *STEPS})
    tree = by_name(spans)
    (server,) = tree["chat failover"]
    assert server.attributes["gateway.attempts"] == 2
    dead, served = sorted(tree["chat sim-model"], key=lambda s: s.attributes["gateway.backend"]
                          != "dead")
    assert dead.attributes["gateway.backend"] == "dead"
    assert dead.status == STATUS_ERROR
    assert dead.attributes["error.type"] == "UpstreamFailed"
    assert served.attributes["gateway.backend"] == "sim-a"
    assert served.attributes["http.response.status_code"] == 200
    assert served.status != STATUS_ERROR


def test_a_failed_request_is_an_error_span(traced: Gateway, receiver: Receiver) -> None:
    with pytest.raises(openai.APIStatusError) as failed:
        traced.client().chat.completions.create(
            model="all-dead", max_tokens=3, **HELLO_BODY)  # type: ignore[arg-type]
    request_id = failed.value.response.headers["x-request-id"]
    spans = receiver.wait_for_trace(
        lambda s: s.attributes.get("gateway.request_id") == request_id,
        names={"chat all-dead", "chat sim-model", *STEPS})
    tree = by_name(spans)
    (server,) = tree["chat all-dead"]
    assert server.status == STATUS_ERROR
    assert server.attributes["error.type"] == failed.value.body["type"]  # type: ignore[index]
    assert server.attributes["http.response.status_code"] == failed.value.status_code
    (upstream,) = tree["chat sim-model"]
    assert upstream.status == STATUS_ERROR


def test_with_tracing_off_nothing_is_sent_upstream_or_exported(
    gw: Gateway, receiver: Receiver
) -> None:
    client_trace = "5bf92f3577b34da6a3ce929d0e0e4737"
    raw = gw.client().chat.completions.with_raw_response.create(
        model="only-b", max_tokens=3, **HELLO_BODY,  # type: ignore[arg-type]
        extra_headers={"traceparent": f"00-{client_trace}-00f067aa0ba902b7-01"})
    sent = gw.recorded(raw.headers["x-request-id"])["headers"]
    assert isinstance(sent, dict)
    assert "traceparent" not in sent and "tracestate" not in sent
    time.sleep(0.3)  # several of the traced gateway's export intervals
    assert receiver.trace(client_trace) == []
