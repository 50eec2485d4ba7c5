"""SimFaults: runtime failures injected through the sim-only POST /sim/faults hook.

Status and delay faults apply to the inference endpoints (or the given paths) before the
request reaches the engine; the stream-abort fault drops a streaming response after k tokens.
Every fault lasts `count` requests, or until DELETE /sim/faults when no count is given.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

DEFAULT_FAULT_PATHS = ("/v1/chat/completions", "/v1/completions", "/v1/embeddings")
_KEYS = {"status", "count", "message", "delay_s", "abort_stream_after_tokens", "paths"}


@dataclass
class _Fault:
    value: Any
    remaining: int | None  # None: until cleared

    def consume(self) -> Any:
        if self.remaining is not None:
            self.remaining -= 1
        return self.value

    @property
    def spent(self) -> bool:
        return self.remaining is not None and self.remaining <= 0


@dataclass(frozen=True)
class FaultAction:
    delay_s: float = 0.0
    status: int | None = None
    message: str = ""


class SimFaults:
    def __init__(self) -> None:
        self.clear()

    def clear(self) -> None:
        self._status: _Fault | None = None
        self._message = "Simulated failure (gateway sim fault hook)"
        self._delay: _Fault | None = None
        self._abort: _Fault | None = None
        self._paths: tuple[str, ...] = DEFAULT_FAULT_PATHS

    def configure(self, spec: dict[str, Any]) -> None:
        """Merge a fault spec; raises ValueError naming the bad key."""
        unknown = set(spec) - _KEYS
        if unknown:
            raise ValueError(f"unknown fault keys: {sorted(unknown)}")
        count = spec.get("count")
        if count is not None and (not _is_int(count) or count < 1):
            raise ValueError("count must be an integer >= 1")
        if "status" in spec:
            status = spec["status"]
            if not _is_int(status) or not 400 <= status <= 599:
                raise ValueError("status must be an integer in 400..599")
            self._status = _Fault(status, count)
        if "message" in spec:
            if not isinstance(spec["message"], str):
                raise ValueError("message must be a string")
            self._message = spec["message"]
        if "delay_s" in spec:
            delay = spec["delay_s"]
            if not isinstance(delay, int | float) or isinstance(delay, bool) or delay < 0:
                raise ValueError("delay_s must be a number >= 0")
            self._delay = _Fault(float(delay), count)
        if "abort_stream_after_tokens" in spec:
            tokens = spec["abort_stream_after_tokens"]
            if not _is_int(tokens) or tokens < 0:
                raise ValueError("abort_stream_after_tokens must be an integer >= 0")
            self._abort = _Fault(tokens, count)
        if "paths" in spec:
            paths = spec["paths"]
            if not isinstance(paths, list) or not all(isinstance(p, str) for p in paths):
                raise ValueError("paths must be a list of strings")
            self._paths = tuple(paths)

    def applies_to(self, path: str) -> bool:
        return path in self._paths

    def take(self, path: str) -> FaultAction:
        """The delay/status fault for one incoming request (counts it against `count`)."""
        if not self.applies_to(path):
            return FaultAction()
        delay = self._take(self._delay)
        status = self._take(self._status)
        self._delay = None if self._delay and self._delay.spent else self._delay
        self._status = None if self._status and self._status.spent else self._status
        return FaultAction(float(delay or 0.0), status, self._message)

    def take_stream_abort(self, path: str) -> int | None:
        """For a streaming response starting now: drop it after this many tokens, or None."""
        if not self.applies_to(path):
            return None
        tokens = self._take(self._abort)
        if self._abort is not None and self._abort.spent:
            self._abort = None
        return tokens

    def describe(self) -> dict[str, Any]:
        def show(fault: _Fault | None) -> dict[str, Any] | None:
            return None if fault is None else {"value": fault.value, "remaining": fault.remaining}

        return {
            "status": show(self._status),
            "message": self._message,
            "delay_s": show(self._delay),
            "abort_stream_after_tokens": show(self._abort),
            "paths": list(self._paths),
        }

    @staticmethod
    def _take(fault: _Fault | None) -> Any:
        return None if fault is None else fault.consume()


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)
