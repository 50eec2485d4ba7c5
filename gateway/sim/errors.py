"""SimError and vLLM's error envelope: {"error": {message, type, param, code}} with an int code.

vLLM (since 0.10.1) names the type after the exception class and puts the HTTP status in
`code`, unlike OpenAI's string codes; the gateway normalises it, so the sim must not.
"""

from __future__ import annotations

from typing import Any

import orjson
from starlette.responses import Response

_ERROR_TYPES = {
    400: "BadRequestError",
    401: "AuthenticationError",
    403: "PermissionDeniedError",
    404: "NotFoundError",
    408: "RequestTimeoutError",
    409: "ConflictError",
    413: "RequestEntityTooLargeError",
    422: "UnprocessableEntityError",
    429: "RateLimitError",
    500: "InternalServerError",
    501: "NotImplementedError",
    502: "BadGatewayError",
    503: "ServiceUnavailableError",
    504: "GatewayTimeoutError",
}


def error_type(status: int) -> str:
    return _ERROR_TYPES.get(status, "BadRequestError" if status < 500 else "InternalServerError")


def error_body(status: int, message: str, param: str | None = None) -> dict[str, Any]:
    return {
        "error": {"message": message, "type": error_type(status), "param": param, "code": status}
    }


def error_response(status: int, message: str, param: str | None = None) -> Response:
    return Response(
        orjson.dumps(error_body(status, message, param)),
        status_code=status,
        media_type="application/json",
    )


class SimError(Exception):
    """A request the sim refuses, rendered once by the app's exception handler."""

    def __init__(self, status: int, message: str, param: str | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.param = param

    def to_response(self) -> Response:
        return error_response(self.status, self.message, self.param)


def bad_request(message: str, param: str | None = None) -> SimError:
    return SimError(400, message, param)


def prompt_too_long(max_model_len: int, prompt_tokens: int) -> SimError:
    """vLLM 0.32's wording when the prompt alone leaves no room for output."""
    return SimError(
        400,
        f"This model's maximum context length is {max_model_len} tokens. However, your prompt "
        f"contains at least {prompt_tokens} input tokens, which exceeds this limit even without "
        "any output tokens. Please reduce the length of the input prompt. "
        f"(parameter=input_tokens, value={prompt_tokens})",
        "input_tokens",
    )


def max_tokens_too_large(max_model_len: int, max_tokens: int) -> SimError:
    return SimError(
        400,
        f"max_tokens={max_tokens} cannot be greater than max_model_len={max_model_len}. "
        f"Please request fewer output tokens. (parameter=max_tokens, value={max_tokens})",
        "max_tokens",
    )


def context_length_error(max_model_len: int, prompt_tokens: int, max_tokens: int) -> SimError:
    """Older vLLM's wording (before max_tokens was capped to the room left)."""
    return bad_request(
        f"This model's maximum context length is {max_model_len} tokens. However, you "
        f"requested {prompt_tokens + max_tokens} tokens ({prompt_tokens} in the messages, "
        f"{max_tokens} in the completion). Please reduce the length of the messages or "
        "completion."
    )
