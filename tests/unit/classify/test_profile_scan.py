"""The classify step scans everything that would leave the zone, tool-call arguments too."""

from __future__ import annotations

from gateway.classify.profiler import RequestClassifier, scan_text
from gateway.classify.sensitivity import SensitivityScanner
from gateway.classify.tokens import TokenCounter
from gateway.types import Endpoint, RouteRequest

CHAT = {"messages": [
    {"role": "user", "content": "Book the usual table."},
    {"role": "assistant", "content": None, "tool_calls": [{
        "id": "c1", "type": "function",
        "function": {"name": "book", "arguments": '{"contact": "dana.wells@gmail.com"}'}}]},
]}


def test_tool_call_arguments_are_part_of_the_scanned_text() -> None:
    assert "dana.wells@gmail.com" in scan_text(Endpoint.CHAT, CHAT)


async def test_a_finding_only_in_tool_arguments_marks_the_request_sensitive() -> None:
    classifier = RequestClassifier(TokenCounter(), sensitivity=SensitivityScanner())
    profile = await classifier.profile(RouteRequest("r", Endpoint.CHAT, "m", CHAT))
    assert profile.sensitivity == ("pii",)
    assert [s.type for s in profile.spans] == ["email"]
