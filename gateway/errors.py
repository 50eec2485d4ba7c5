"""The gateway's error tree: each error knows its HTTP status and its OpenAI-shaped body.

Expected outcomes (bad input, unknown model, no eligible backend, quota) are typed errors that
render as `{"error": {"message", "type", "param", "code"}}`; they are never 500s.
"""

from __future__ import annotations

import orjson


class SetupError(Exception):
    """The gateway cannot start or a command cannot run as configured: a missing file, an
    unreachable service. The message names the setting to change; the CLI prints it as one
    line."""


class GatewayError(Exception):
    status: int = 500
    error_type: str = "server_error"
    code: str | None = None
    # Tells the official SDKs whether retrying can help (they honour it over the status).
    should_retry: bool | None = None

    def __init__(
        self,
        message: str,
        *,
        param: str | None = None,
        code: str | None = None,
        status: int | None = None,
        error_type: str | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.param = param
        if code is not None:
            self.code = code
        if status is not None:
            self.status = status
        if error_type is not None:
            self.error_type = error_type
        self.extra_headers = headers or {}

    def to_dict(self) -> dict[str, dict[str, str | None]]:
        return {
            "error": {
                "message": self.message,
                "type": self.error_type,
                "param": self.param,
                "code": self.code,
            }
        }

    def to_json(self) -> bytes:
        return orjson.dumps(self.to_dict())

    def headers(self) -> dict[str, str]:
        out = dict(self.extra_headers)
        if self.should_retry is not None:
            out["x-should-retry"] = "true" if self.should_retry else "false"
        return out


class InvalidRequest(GatewayError):
    status = 400
    error_type = "invalid_request_error"


class AuthenticationFailed(GatewayError):
    status = 401
    error_type = "invalid_request_error"
    code = "invalid_api_key"


class PermissionDenied(GatewayError):
    status = 403
    error_type = "permission_error"


class NotFound(GatewayError):
    status = 404
    error_type = "invalid_request_error"
    code = "not_found"


class ModelNotFound(NotFound):
    code = "model_not_found"


class PayloadTooLarge(GatewayError):
    status = 413
    error_type = "invalid_request_error"
    code = "request_too_large"


class RateLimited(GatewayError):
    status = 429
    error_type = "rate_limit_error"
    code = "rate_limit_exceeded"


class QuotaExceeded(GatewayError):
    status = 429
    error_type = "insufficient_quota"
    code = "insufficient_quota"
    should_retry = False


class NoEligibleBackend(GatewayError):
    status = 503
    error_type = "service_unavailable"
    code = "no_eligible_backend"


class UpstreamFailed(GatewayError):
    """Every candidate failed before a byte reached the client (5xx, timeouts, refusals)."""

    status = 502
    error_type = "upstream_error"
    code = "upstream_unavailable"


class UpstreamTimeout(UpstreamFailed):
    status = 504
    code = "upstream_timeout"


class UpstreamRejected(GatewayError):
    """An upstream 4xx about the request itself, normalised and passed on."""

    error_type = "invalid_request_error"


class InternalError(GatewayError):
    status = 500
    error_type = "server_error"
    code = "internal_error"


class BudgetStoreUnavailable(GatewayError):
    """The budget store (Redis) did not answer and the tenant's policy says fail closed."""

    status = 503
    error_type = "service_unavailable"
    code = "budget_store_unavailable"


class ServerBusy(GatewayError):
    """This process is at a capacity bound (request bodies being received); retry shortly."""

    status = 503
    error_type = "service_unavailable"
    code = "server_busy"
    should_retry = True


class DatabaseUnavailable(GatewayError):
    """The database did not answer, and nothing cached can stand in for what was asked."""

    status = 503
    error_type = "service_unavailable"
    code = "database_unavailable"
