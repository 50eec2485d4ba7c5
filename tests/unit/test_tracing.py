"""Trace names and attributes (GenAI conventions + gateway.*), the OTLP endpoint rules, the
off switch, and one request's span tree recorded by the real SDK into memory."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.sdk.trace.sampling import ALWAYS_OFF
from opentelemetry.trace import SpanKind, StatusCode

from gateway.errors import NoEligibleBackend, UpstreamFailed, UpstreamTimeout
from gateway.policy.loader import parse_policy
from gateway.providers.http_pool import upstream_headers
from gateway.telemetry.genai_attributes import (
    decision_attributes,
    dispatch_error_type,
    operation_name,
    outcome_attributes,
    profile_attributes,
    provider_name,
    request_attributes,
    reservation_attributes,
    span_name,
    upstream_attributes,
    usage_attributes,
)
from gateway.telemetry.otlp import start_tracing, traces_url
from gateway.telemetry.tracing import NO_SPANS, Tracing
from gateway.types import (
    AffinityKind,
    Backend,
    Complexity,
    Endpoint,
    Profile,
    Rejection,
    RejectionKind,
    RouteDecision,
    RouteRequest,
    TenantContext,
    Usage,
)
from gateway.upstream import DispatchError

TENANT = TenantContext("t-1", "acme", "k-1")
VLLM = Backend(name="llama", provider="vllm", base_url="http://10.0.0.7:8000/v1",
               model="meta-llama/Llama-3.1-8B-Instruct", zone="self_hosted",
               context_window=32768, quality_tier=2)
OPENAI = Backend(name="frontier", provider="openai", base_url="https://api.openai.com/v1",
                 model="gpt-4o", zone="external", context_window=128000, quality_tier=4)
PARENT_TRACE = "0af7651916cd43dd8448eb211c80319c"
TRACEPARENT = f"00-{PARENT_TRACE}-b7ad6b7169203331-01"


def chat(**payload: object) -> RouteRequest:
    body = {"model": "auto", "messages": [{"role": "user", "content": "hi"}], **payload}
    return RouteRequest(request_id="req-1", endpoint=Endpoint.CHAT, model="auto", payload=body,
                        stream=bool(payload.get("stream")),
                        max_output_tokens=payload.get("max_tokens"),  # type: ignore[arg-type]
                        tags=("team-a",))


def test_operation_and_span_names_follow_the_conventions() -> None:
    assert operation_name(Endpoint.CHAT) == "chat"
    assert operation_name(Endpoint.COMPLETIONS) == "text_completion"
    assert operation_name(Endpoint.EMBEDDINGS) == "embeddings"
    assert span_name("chat", "gpt-4o") == "chat gpt-4o"


def test_provider_names_use_well_known_values_and_keep_the_rest() -> None:
    assert provider_name(OPENAI) == "openai"
    # Each kind declares its name (gateway/provider_kinds); the policy compiles it in.
    azure = parse_policy(
        "version: 1\nbackends:\n  - {name: az, provider: azure, model: m, context_window: 1,"
        " base_url: 'https://x/openai/v1'}\n").backends["az"]
    assert provider_name(azure) == "azure.ai.openai"
    assert provider_name(VLLM) == "vllm"


def test_request_attributes_carry_the_request_and_the_tenant() -> None:
    attrs = request_attributes(TENANT, chat(stream=True, max_tokens=64, temperature=0.2,
                                            top_p=True, n=2, stop="END"))
    assert attrs == {
        "gen_ai.operation.name": "chat",
        "gen_ai.request.model": "auto",
        "gateway.tenant": "acme",
        "gateway.tenant_id": "t-1",
        "gateway.request_id": "req-1",
        "gen_ai.request.stream": True,
        "gen_ai.request.max_tokens": 64,
        "gateway.tags": ["team-a"],
        "gen_ai.request.temperature": 0.2,  # top_p=True is not a number: left out
        "gen_ai.request.choice.count": 2,
        "gen_ai.request.stop_sequences": ["END"],
    }


def test_unstreamed_requests_leave_out_the_stream_flag() -> None:
    attrs = request_attributes(TENANT, chat(n=1))
    assert "gen_ai.request.stream" not in attrs
    assert "gen_ai.request.choice.count" not in attrs


def test_profile_attributes_name_categories_never_values() -> None:
    profile = Profile(prompt_tokens=42, max_output_tokens=None,
                      complexity=Complexity(p_strong=0.7, label="high"),
                      sensitivity=("pii",))
    assert profile_attributes(profile) == {
        "gateway.prompt_tokens": 42, "gateway.prompt_tokens_exact": True,
        "gateway.sensitivity": ["pii"], "gateway.complexity": "high", "gateway.p_strong": 0.7,
    }


def test_decision_attributes_say_why_and_where() -> None:
    decision = RouteDecision(primary=VLLM, fallbacks=(OPENAI,), rule="default",
                             rejected=(Rejection("tiny", "context window",
                                                 RejectionKind.CONTEXT_WINDOW),),
                             predicted_cost_micro_usd=1234, predicted_ttft_s=0.25,
                             affinity=AffinityKind.SESSION)
    attrs = decision_attributes(decision)
    assert attrs["gateway.rule"] == "default"
    assert attrs["gateway.backend"] == "llama"
    assert attrs["gateway.candidates"] == ["llama", "frontier"]
    assert attrs["gateway.rejected"] == ["tiny: context window"]
    assert attrs["gateway.predicted_cost_micro_usd"] == 1234
    assert attrs["gateway.affinity"] == "session"
    assert "gateway.objective" not in attrs


def test_reservation_attributes() -> None:
    assert reservation_attributes(None) == {"gateway.unmetered": True}
    assert reservation_attributes(900) == {"gateway.unmetered": False,
                                           "gateway.reserved_micro_usd": 900}


def test_upstream_attributes_name_the_server_behind_the_gateway() -> None:
    assert upstream_attributes(VLLM, "chat") == {
        "gen_ai.operation.name": "chat", "gen_ai.provider.name": "vllm",
        "gen_ai.request.model": "meta-llama/Llama-3.1-8B-Instruct",
        "gateway.backend": "llama", "gateway.zone": "self_hosted",
        "server.address": "10.0.0.7", "server.port": 8000,
    }
    attrs = upstream_attributes(OPENAI, "chat")
    assert (attrs["server.address"], attrs["server.port"]) == ("api.openai.com", 443)


def test_usage_attributes_count_cached_tokens_inside_the_input() -> None:
    assert usage_attributes(Usage(10, 5)) == {
        "gen_ai.usage.input_tokens": 10, "gen_ai.usage.output_tokens": 5}
    assert usage_attributes(Usage(10, 5, cached_tokens=8))[
        "gen_ai.usage.cache_read.input_tokens"] == 8


def test_error_types_of_failed_attempts() -> None:
    failed = UpstreamFailed("boom")
    assert dispatch_error_type(DispatchError(failed, retryable=True, upstream_status=503)) == "503"
    timeout = DispatchError(UpstreamTimeout("slow"), retryable=True)
    assert dispatch_error_type(timeout) == "UpstreamTimeout"
    assert dispatch_error_type(TimeoutError()) == "TimeoutError"


def test_outcome_attributes() -> None:
    ok = outcome_attributes(VLLM, "default", Usage(10, 5), 77, attempts=1, error=None,
                            cancelled=False)
    assert ok["gateway.cost_micro_usd"] == 77
    assert ok["gateway.outcome"] == "ok"
    assert ok["http.response.status_code"] == 200
    assert ok["gen_ai.response.model"] == VLLM.model
    assert ok["gen_ai.provider.name"] == "vllm"
    assert "error.type" not in ok
    refused = outcome_attributes(None, None, Usage(), 0, attempts=0,
                                 error=NoEligibleBackend("none"), cancelled=False)
    assert refused["error.type"] == "service_unavailable"
    assert refused["http.response.status_code"] == 503
    assert "gen_ai.usage.input_tokens" not in refused
    gone = outcome_attributes(VLLM, "default", Usage(), 0, attempts=1, error=None,
                              cancelled=True)
    assert (gone["gateway.outcome"], gone["http.response.status_code"]) == (
        "client_disconnected", 499)


@pytest.mark.parametrize(("generic", "specific", "disabled", "url"), [
    (None, None, False, None),
    ("", "", False, None),  # set but empty (as docker compose passes it): off
    ("http://collector:4318", None, False, "http://collector:4318/v1/traces"),
    ("http://collector:4318/", None, False, "http://collector:4318/v1/traces"),
    ("http://collector:4318", "http://other/traces", False, "http://other/traces"),
    ("http://collector:4318", None, True, None),
])
def test_traces_url_follows_the_otlp_exporter_rules(
    generic: str | None, specific: str | None, disabled: bool, url: str | None
) -> None:
    assert traces_url(generic, specific, sdk_disabled=disabled) == url


def test_off_means_one_shared_recorder_that_hands_values_back() -> None:
    tracing = start_tracing(None, "gw", "0")
    assert not tracing.enabled
    spans = tracing.begin(TENANT, chat(), {"traceparent": TRACEPARENT})
    assert spans is NO_SPANS
    profile = Profile(prompt_tokens=1, max_output_tokens=None)
    assert spans.classified(profile) is profile
    assert spans.settled(VLLM, Usage(), 55, None, False, None) == 55
    tracing.shutdown()


def test_upstream_headers_carry_a_traceparent_only_inside_a_span() -> None:
    assert "traceparent" not in upstream_headers(VLLM, "req-1")
    tracer = TracerProvider().get_tracer("test")
    with tracer.start_as_current_span("call") as span:
        headers = upstream_headers(VLLM, "req-1")
    context = span.get_span_context()
    version, trace_id, span_id, _flags = headers["traceparent"].split("-")
    assert (version, trace_id, span_id) == (
        "00", f"{context.trace_id:032x}", f"{context.span_id:016x}")


@dataclass
class Held:
    cost_micro_usd: int


@dataclass
class Admitted:
    reservation: Held | None


def recorded() -> tuple[Tracing, InMemorySpanExporter]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    return Tracing(provider.get_tracer("test"), provider), exporter


def by_name(spans: tuple[ReadableSpan, ...]) -> dict[str, ReadableSpan]:
    return {span.name: span for span in spans}


def test_a_request_is_a_server_span_with_its_steps_as_children() -> None:
    tracing, exporter = recorded()
    spans = tracing.begin(TENANT, chat(), {"traceparent": TRACEPARENT})
    spans.classified(Profile(prompt_tokens=12, max_output_tokens=None))
    spans.decided(RouteDecision(primary=VLLM, fallbacks=(), rule="default"))
    spans.reserved(Admitted(Held(500)))
    spans.settling()
    assert spans.settled(VLLM, Usage(12, 3), 40, None, False, None) == 40
    tree = by_name(exporter.get_finished_spans())
    assert set(tree) == {"chat auto", "classify", "decide", "reserve", "settle"}
    server = tree["chat auto"]
    assert server.kind is SpanKind.SERVER
    assert server.parent is not None and server.parent.is_remote
    assert f"{server.context.trace_id:032x}" == PARENT_TRACE
    for step in ("classify", "decide", "reserve", "settle"):
        assert tree[step].parent is not None
        assert tree[step].parent.span_id == server.context.span_id
    assert tree["reserve"].attributes["gateway.reserved_micro_usd"] == 500
    assert tree["settle"].attributes["gateway.settled"] is True
    attrs = server.attributes
    assert attrs["gateway.rule"] == "default"
    assert attrs["gateway.backend"] == "llama"
    assert attrs["gateway.cost_micro_usd"] == 40
    assert attrs["gen_ai.usage.output_tokens"] == 3
    assert server.status.status_code is StatusCode.UNSET
    tracing.shutdown()


def test_a_refused_request_records_the_step_that_failed() -> None:
    tracing, exporter = recorded()
    spans = tracing.begin(TENANT, chat(), None)
    spans.classified(Profile(prompt_tokens=12, max_output_tokens=None))
    spans.settling()
    spans.settled(None, Usage(), 0, NoEligibleBackend("nothing fits"), False, None)
    tree = by_name(exporter.get_finished_spans())
    assert set(tree) == {"chat auto", "classify", "decide", "settle"}
    assert tree["chat auto"].parent is None  # no client trace context: a new trace
    for name in ("decide", "chat auto"):
        assert tree[name].status.status_code is StatusCode.ERROR
        assert tree[name].attributes["error.type"] == "service_unavailable"
    tracing.shutdown()


def test_a_sampled_out_request_records_nothing() -> None:
    exporter = InMemorySpanExporter()
    provider = TracerProvider(sampler=ALWAYS_OFF)
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracing = Tracing(provider.get_tracer("test"), provider)
    spans = tracing.begin(TENANT, chat(), None)
    spans.classified(Profile(prompt_tokens=12, max_output_tokens=None))
    spans.decided(RouteDecision(primary=VLLM, fallbacks=(), rule="default"))
    spans.reserved(Admitted(None))
    spans.settling()
    assert spans.settled(VLLM, Usage(12, 3), 40, None, False, None) == 40
    assert exporter.get_finished_spans() == ()
    tracing.shutdown()
