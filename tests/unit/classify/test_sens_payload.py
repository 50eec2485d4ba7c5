"""Text extraction from, and redaction of, OpenAI chat payloads."""

from __future__ import annotations

import copy
import json

from gateway.classify.payload_text import extract_chat_text, prefix_text, redact_chat_payload
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


def with_fields() -> dict[str, object]:
    return {
        "model": "m",
        "user": "marta.kowalczyk84@gmail.com",
        "safety_identifier": "Call +1 415-867-2394",
        "prompt_cache_key": "team-search",
        "metadata": {"customer_email": "dana.wells@gmail.com", "plan": "gold", "n": 3},
        "prediction": {"type": "content", "content": "Dear Anna Kowalska,"},
        "messages": [{"role": "user", "name": "dana.wells@gmail.com",
                      "content": "Summarise our call notes."}],
    }


def test_the_fields_beside_the_messages_are_scanned_after_them() -> None:
    text = extract_chat_text(with_fields())
    for piece in ("marta.kowalczyk84@gmail.com", "+1 415-867-2394", "team-search",
                  "dana.wells@gmail.com", "gold", "Dear Anna Kowalska,"):
        assert piece in text
    assert "customer_email" not in text  # metadata keys are the caller's own names
    assert text.startswith("Summarise our call notes.")  # message offsets come first
    assert extract_chat_text({"user": "u-1"}) == "u-1"


def test_identity_fields_metadata_names_and_prediction_are_redacted() -> None:
    original = with_fields()
    before = copy.deepcopy(original)
    redacted, mapping = redact_chat_payload(original, SCANNER)
    assert original == before
    assert redacted["messages"][0]["name"] == "[EMAIL_1]"
    assert redacted["user"] == "[EMAIL_2]"
    assert redacted["safety_identifier"] == "Call [PHONE_1]"
    assert redacted["prompt_cache_key"] == "team-search"
    # keys kept, non-string values untouched; one numbering across the whole request
    assert redacted["metadata"] == {"customer_email": "[EMAIL_1]", "plan": "gold", "n": 3}
    assert redacted["prediction"] == {"type": "content", "content": "Dear [PERSON_1],"}
    assert restore(redacted["user"], mapping) == "marta.kowalczyk84@gmail.com"


def test_fields_are_redacted_even_without_messages() -> None:
    redacted, _ = redact_chat_payload({"user": "dana.wells@gmail.com"}, SCANNER)
    assert redacted == {"user": "[EMAIL_1]"}


def test_the_affinity_prefix_ignores_the_identity_fields() -> None:
    """The prefix a replica's KV cache can reuse is the prompt; who asks does not change it."""
    plain = {"messages": [{"role": "user", "content": "hi"}]}
    assert prefix_text(True, {**plain, "user": "someone@gmail.com"}, 100) == prefix_text(
        True, plain, 100) == "hi"


def test_stand_ins_are_masked_too() -> None:
    """Reserved stand-ins never make a request sensitive, but a redacted copy masks them."""
    payload = {"user": "jrmccalx@example.com", "messages": [
        {"role": "user", "content": "Card 4111 1111 1111 1111, key AKIAIOSFODNN7EXAMPLE."}]}
    assert SCANNER.scan(extract_chat_text(payload)) == []
    redacted, mapping = redact_chat_payload(payload, SCANNER)
    assert redacted["user"] == "[EMAIL_1]"
    assert redacted["messages"][0]["content"] == "Card [PAYMENT_CARD_1], key [SECRET_1]."
    assert len(mapping) == 3
