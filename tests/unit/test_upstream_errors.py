import orjson

from gateway.providers.upstream_errors import normalise_upstream_error, parse_error_body


def test_vllm_integer_code_becomes_a_string_and_class_name_type_is_mapped():
    body = orjson.dumps({"error": {"message": "bad temperature", "type": "BadRequestError",
                                   "param": "temperature", "code": 400}})
    err, retryable = normalise_upstream_error(400, body, "b")
    assert not retryable
    assert err.status == 400
    assert err.to_dict() == {"error": {"message": "bad temperature",
                                       "type": "invalid_request_error",
                                       "param": "temperature", "code": "400"}}


def test_context_length_message_gets_openai_code():
    body = orjson.dumps({"object": "error", "message": "This model's maximum context length is "
                         "2048 tokens. However, you requested 3000 tokens", "type":
                         "BadRequestError", "param": None, "code": 400})
    err, retryable = normalise_upstream_error(400, body, "b")
    assert not retryable
    assert err.code == "context_length_exceeded"
    assert "maximum context length" in err.message


def test_server_errors_and_rate_limits_are_retryable():
    for status in (500, 502, 503, 504, 429, 408):
        err, retryable = normalise_upstream_error(status, b"oops", "b")
        assert retryable, status
        assert err.status in (429, 502)


def test_upstream_auth_failure_is_not_shown_as_the_clients_auth_failure():
    err, retryable = normalise_upstream_error(401, b'{"error":{"message":"bad key"}}', "b")
    assert retryable
    assert err.status == 502
    assert err.code == "upstream_misconfigured"


def test_plain_text_and_empty_bodies():
    assert parse_error_body(400, b"nope")[0] == "nope"
    assert parse_error_body(400, b"")[0] == "upstream returned HTTP 400"


def test_an_upstream_auth_error_never_echoes_the_gateways_key():
    body = b'{"error":{"message":"Incorrect API key provided: sk-proj-****abcd","code":"x"}}'
    for status in (401, 403):
        err, _ = normalise_upstream_error(status, body, "b")
        assert "sk-proj" not in err.message and f"HTTP {status}" in err.message
