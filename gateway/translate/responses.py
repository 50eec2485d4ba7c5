"""OpenAI Responses ⇄ chat completions: the one interface the Responses front door uses.

The gateway routes, meters and relays OpenAI chat completions inside. A Responses request
(gateway/api/responses.py) is translated to the chat payload it routes, and what comes back
is translated to the Responses shape, so any backend can serve it:

- request: `parse_responses_request` (body → `ResponsesRequest`; `Untranslatable` for what
  only a Responses API backend can serve), `to_chat_payload` (→ the chat payload routed,
  with the stored conversation), `native_payload` (→ the body for a backend that serves
  /v1/responses itself);
- reply: `to_response` (chat completion → `response` object), `new_id`;
- stream: `ResponsesEventEncoder` (chat chunks → Responses events);
- a native backend's reply and events made the gateway's own: `adopt`, `event_frame`,
  `failure_frames`, `LIFECYCLE_END`;
- items: `append_item` (input item → chat messages), `listed_item` (a stored item as the
  input items list shows it).

Each lives in its own module here (responses_*).
"""

from __future__ import annotations

from gateway.translate.responses_items import Untranslatable, append_item, listed_item
from gateway.translate.responses_passthrough import (
    LIFECYCLE_END,
    adopt,
    event_frame,
    failure_frames,
)
from gateway.translate.responses_reply import new_id, to_response
from gateway.translate.responses_request import (
    ResponsesRequest,
    input_items,
    native_payload,
    parse_responses_request,
    to_chat_payload,
)
from gateway.translate.responses_stream import ResponsesEventEncoder

__all__ = [
    "LIFECYCLE_END",
    "ResponsesEventEncoder",
    "ResponsesRequest",
    "Untranslatable",
    "adopt",
    "append_item",
    "event_frame",
    "failure_frames",
    "input_items",
    "listed_item",
    "native_payload",
    "new_id",
    "parse_responses_request",
    "to_chat_payload",
    "to_response",
]
