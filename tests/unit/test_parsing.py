import orjson
import pytest

from gateway.api.parsing import parse_route_request
from gateway.errors import InvalidRequest
from gateway.types import Endpoint


def parse(body: object, endpoint: Endpoint = Endpoint.CHAT, tags: str | None = None):
    raw = body if isinstance(body, bytes) else orjson.dumps(body)
    return parse_route_request(raw, endpoint, "req_1", tags)


def test_routing_fields_are_extracted_and_payload_kept_whole():
    body = {"model": "auto", "messages": [{"role": "user", "content": "hi"}], "stream": True,
            "stream_options": {"include_usage": True}, "max_completion_tokens": 50,
            "top_k": 3, "metadata": {"a": "b"}}
    req = parse(body, tags="a, b,,")
    assert (req.model, req.stream, req.include_usage, req.max_output_tokens) == (
        "auto", True, True, 50)
    assert req.payload == body
    assert req.tags == ("a", "b")


@pytest.mark.parametrize(
    ("body", "param"),
    [
        (b"{not json", None),
        (b"", None),
        (b"[1,2]", None),
        ({"messages": [{"role": "user", "content": "x"}]}, "model"),
        ({"model": "m"}, "messages"),
        ({"model": "m", "messages": []}, "messages"),
        ({"model": "m", "messages": [{}], "stream": "yes"}, "stream"),
        ({"model": "m", "messages": [{}], "max_tokens": 0}, "max_tokens"),
        ({"model": "m", "messages": [{}], "max_tokens": True}, "max_tokens"),
        ({"model": "m", "messages": [{}], "stream_options": 3}, "stream_options"),
    ],
)
def test_bad_requests_name_the_parameter(body, param):
    with pytest.raises(InvalidRequest) as info:
        parse(body)
    assert info.value.status == 400
    assert info.value.param == param


def test_each_endpoint_requires_its_input():
    with pytest.raises(InvalidRequest, match="prompt"):
        parse({"model": "m"}, Endpoint.COMPLETIONS)
    with pytest.raises(InvalidRequest, match="input"):
        parse({"model": "m"}, Endpoint.EMBEDDINGS)
    with pytest.raises(InvalidRequest, match="streamed"):
        parse({"model": "m", "input": "x", "stream": True}, Endpoint.EMBEDDINGS)
