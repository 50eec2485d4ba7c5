"""Text extraction from, and redaction of, OpenAI chat payloads."""

from __future__ import annotations

import copy
import json

from gateway.classify.payload_text import extract_chat_text, redact_chat_payload
from gateway.classify.redaction import restore
from gateway.classify.sensitivity import SensitivityScanner

SCANNER = SensitivityScanner()


def payload() -> dict[str, object]:
    return {
        "model": "gpt-x",
        "temperature": 0.2,
        "messages": [
            {"role": "system", "content": "You assist Anna Kowalska."},
            {"role": "user", "content": [
                {"type": "text", "text": "Write to anna.k@acme-corp.com about it."},
                {"type": "image_url", "image_url": {"url": "https://img.example/1.png"}},
            ]},
            {"role": "assistant", "content": None, "tool_calls": [{
                "id": "call_1", "type": "function",
                "function": {"name": "send", "arguments": json.dumps(
                    {"to": "anna.k@acme-corp.com", "password": "Zx9!kq2LwPp"})},
            }]},
            {"role": "assistant", "function_call": {"name": "legacy",
                                                    "arguments": '{"ip": "8.8.4.4"}'}},
            {"role": "tool", "tool_call_id": "call_1", "content": "sent"},
        ],
    }


def test_extract_every_text() -> None:
    text = extract_chat_text(payload())
    for piece in ("You assist Anna Kowalska.", "Write to anna.k@acme-corp.com about it.",
                  '"password": "Zx9!kq2LwPp"', '{"ip": "8.8.4.4"}', "sent"):
        assert piece in text
    assert "img.example" not in text
    assert extract_chat_text({"messages": "not a list"}) == ""
    assert extract_chat_text({}) == ""


def test_redact_payload_copies_and_keeps_json_valid() -> None:
    original = payload()
    before = copy.deepcopy(original)
    redacted, mapping = redact_chat_payload(original, SCANNER)
    assert original == before  # never mutated
    messages = redacted["messages"]
    assert messages[0]["content"] == "You assist [PERSON_1]."
    assert messages[1]["content"][0]["text"] == "Write to [EMAIL_1] about it."
    assert messages[1]["content"][1] == before["messages"][1]["content"][1]
    arguments = json.loads(messages[2]["tool_calls"][0]["function"]["arguments"])
    assert arguments == {"to": "[EMAIL_1]", "password": "[SECRET_1]"}
    assert json.loads(messages[3]["function_call"]["arguments"]) == {"ip": "[IP_ADDRESS_1]"}
    assert redacted["temperature"] == 0.2
    reply = "Done, [PERSON_1]: mailed [EMAIL_1] from [IP_ADDRESS_1]."
    assert restore(reply, mapping) == (
        "Done, Anna Kowalska: mailed anna.k@acme-corp.com from 8.8.4.4.")


def test_payload_without_findings_is_unchanged() -> None:
    clean = {"model": "m", "messages": [{"role": "user", "content": "What are my options?"}]}
    redacted, mapping = redact_chat_payload(clean, SCANNER)
    assert redacted == clean and len(mapping) == 0
