"""OpenAI chat ⇄ Anthropic Messages: the one interface both sides use.

The gateway routes, meters and relays OpenAI chat completions inside. Anthropic's Messages
format meets it at two edges, each a pair of directions:

- upstream (gateway/providers/anthropic.py, an OpenAI client reaching a Claude backend):
  `to_messages_request` (chat request → Messages request; `to_messages_payload`, what
  wire.py hands the provider, and `split_messages_payload`, how the provider reads it),
  `to_chat_completion` (message → chat completion and usage), `AnthropicStreamTranslator`
  (Messages events → chat chunks);
- front door (gateway/api/messages.py, a Claude client reaching any backend):
  `to_chat_payload` (Messages request → chat request), `split_extensions` (what of it only
  a translation reads, kept out of the routed payload), `to_anthropic_message` (chat
  completion → message), `AnthropicEventEncoder` (chat chunks → Messages events),
  `error_body` (a gateway error → Anthropic's error shape).

Each lives in its own module here (anthropic_*: toward Anthropic upstreams; messages_*: the
front door), and the vocabulary both directions map (stop reasons, error types, effort and
thinking budget) in one, anthropic_vocabulary.py. A round trip through both edges keeps the meaning
(tests/unit/api/test_round_trips.py).
"""

from __future__ import annotations

from gateway.translate.anthropic_reply import to_chat_completion
from gateway.translate.anthropic_request import (
    JsonMode,
    MessagesRequest,
    split_messages_payload,
    to_messages_payload,
    to_messages_request,
)
from gateway.translate.anthropic_stream import AnthropicStreamTranslator
from gateway.translate.messages_extensions import split_extensions
from gateway.translate.messages_reply import error_body, message_id, to_anthropic_message
from gateway.translate.messages_request import to_chat_payload
from gateway.translate.messages_stream import AnthropicEventEncoder

__all__ = [
    "AnthropicEventEncoder",
    "AnthropicStreamTranslator",
    "JsonMode",
    "MessagesRequest",
    "error_body",
    "message_id",
    "split_extensions",
    "split_messages_payload",
    "to_anthropic_message",
    "to_chat_completion",
    "to_chat_payload",
    "to_messages_payload",
    "to_messages_request",
]
