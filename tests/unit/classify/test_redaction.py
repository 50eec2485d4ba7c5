"""Redaction to typed placeholders, restoration, and restoration of a streamed reply."""

from __future__ import annotations

from itertools import pairwise

from hypothesis import given, settings
from hypothesis import strategies as st

from gateway.classify.redaction import (
    RedactionMap,
    StreamRestorer,
    placeholder_label,
    redact,
    restore,
)
from gateway.types import SensitiveSpan


def span(kind: str, text: str, value: str, occurrence: int = 0) -> SensitiveSpan:
    start = -1
    for _ in range(occurrence + 1):
        start = text.index(value, start + 1)
    category = "secret" if kind.startswith("secret.") else "pii"
    return SensitiveSpan(kind, category, start, start + len(value), 0.9)


def test_redact_and_restore() -> None:
    text = "Mail ann@x.io or bob@y.io, again ann@x.io; key sk_live_abc"
    spans = [span("email", text, "ann@x.io"), span("email", text, "bob@y.io"),
             span("email", text, "ann@x.io", 1), span("secret.stripe_key", text, "sk_live_abc")]
    redacted, mapping = redact(text, spans)
    assert redacted == "Mail [EMAIL_1] or [EMAIL_2], again [EMAIL_1]; key [SECRET_1]"
    assert len(mapping) == 3
    assert restore(redacted, mapping) == text
    assert restore("unknown [EMAIL_9] stays", mapping) == "unknown [EMAIL_9] stays"


def test_map_never_shows_values() -> None:
    text = "call 555-0143"
    _, mapping = redact(text, [span("phone", text, "555-0143")])
    assert "555" not in repr(mapping) and "555" not in str(mapping)


def test_placeholders_already_in_the_text_are_not_reused() -> None:
    text = "the template says [EMAIL_1]; mine is me@x.io"
    redacted, mapping = redact(text, [span("email", text, "me@x.io")])
    assert redacted == "the template says [EMAIL_1]; mine is [EMAIL_2]"
    assert restore(redacted, mapping) == text


def test_numbering_shared_across_strings_of_a_request() -> None:
    mapping = RedactionMap()
    first, _ = redact("a@x.io", [SensitiveSpan("email", "pii", 0, 6, 1.0)], into=mapping)
    second, _ = redact("b@x.io a@x.io", [SensitiveSpan("email", "pii", 0, 6, 1.0),
                                          SensitiveSpan("email", "pii", 7, 13, 1.0)], into=mapping)
    assert (first, second) == ("[EMAIL_1]", "[EMAIL_2] [EMAIL_1]")


def test_labels() -> None:
    assert placeholder_label("street_address") == "STREET_ADDRESS"
    assert placeholder_label("secret.github_token") == "SECRET"
    assert placeholder_label("custom.project-codes") == "CUSTOM_PROJECT_CODES"


def test_stream_holds_back_only_possible_placeholders() -> None:
    text = "hi ann@x.io"
    redacted, mapping = redact(text, [span("email", text, "ann@x.io")])
    restorer = StreamRestorer(mapping)
    assert redacted == "hi [EMAIL_1]"
    assert restorer.feed("Dear [EM") == "Dear "
    assert restorer.feed("AIL_1], see [note") == "ann@x.io, see [note"
    assert restorer.feed(" [EMAIL_") == " "
    assert restorer.feed("2] ok") == "[EMAIL_2] ok"
    assert restorer.feed("[EMAIL_1") == ""
    assert restorer.flush() == "[EMAIL_1"


_ALPHABET = st.sampled_from(list("ab [_]1AEILMPSx@.\n"))


@st.composite
def redacted_case(draw: st.DrawFn) -> tuple[str, list[SensitiveSpan]]:
    text = draw(st.text(_ALPHABET, max_size=80))
    cuts = sorted(draw(st.lists(st.integers(0, len(text)), max_size=8)))
    spans = []
    kinds = ["email", "person", "secret.jwt", "phone"]
    for index, (start, end) in enumerate(zip(cuts[::2], cuts[1::2], strict=False)):
        if end > start:
            spans.append(SensitiveSpan(kinds[index % 4], "pii", start, end, 1.0))
    return text, spans


@st.composite
def chunking(draw: st.DrawFn, text: str) -> list[str]:
    cuts = sorted(set(draw(st.lists(st.integers(0, len(text)), max_size=12))))
    bounds = [0, *cuts, len(text)]
    return [text[a:b] for a, b in pairwise(bounds)]


@settings(max_examples=300, deadline=None)
@given(case=redacted_case(), data=st.data())
def test_any_chunking_restores_the_original(
    case: tuple[str, list[SensitiveSpan]], data: st.DataObject
) -> None:
    text, spans = case
    redacted, mapping = redact(text, spans)
    assert restore(redacted, mapping) == text
    restorer = StreamRestorer(mapping)
    pieces = data.draw(chunking(redacted))
    streamed = "".join(restorer.feed(piece) for piece in pieces) + restorer.flush()
    assert streamed == text


@settings(max_examples=200, deadline=None)
@given(text=st.text(_ALPHABET, max_size=60), data=st.data())
def test_stream_of_unredacted_text_is_unchanged(text: str, data: st.DataObject) -> None:
    mapping = RedactionMap()
    mapping.placeholder_for("EMAIL", "x@y.z")
    mapping.reserve(text)
    restorer = StreamRestorer(mapping)
    pieces = data.draw(chunking(text))
    assert "".join(restorer.feed(p) for p in pieces) + restorer.flush() == restore(text, mapping)
