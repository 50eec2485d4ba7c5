from hypothesis import given
from hypothesis import strategies as st

from gateway.providers.sse import SSESplitter

payloads = st.lists(
    st.text(alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\r\n"),
            min_size=1, max_size=40),
    min_size=1, max_size=20,
)


def _wire(events: list[str], newline: str = "\n") -> bytes:
    return "".join(f"data: {e}{newline}{newline}" for e in events).encode()


@given(payloads, st.lists(st.integers(min_value=1, max_value=7), min_size=1, max_size=50),
       st.sampled_from(["\n", "\r\n"]))
def test_any_chunking_yields_the_same_events(events, cuts, newline):
    wire = _wire(events, newline)
    splitter = SSESplitter()
    out: list[bytes] = []
    pos = 0
    for size in cuts * 100:
        if pos >= len(wire):
            break
        out += splitter.feed(wire[pos : pos + size])
        pos += size
    out += splitter.feed(wire[pos:])
    out += splitter.flush()
    assert out == [e.encode() for e in events]


def test_comments_and_event_fields_are_ignored_and_multiline_data_joined():
    splitter = SSESplitter()
    events = splitter.feed(b": keep-alive\n\nevent: x\ndata: a\ndata: b\n\ndata:c\n\n")
    assert events == [b"a\nb", b"c"]


def test_unterminated_last_event_is_flushed():
    splitter = SSESplitter()
    assert splitter.feed(b"data: one\n\ndata: two") == [b"one"]
    assert splitter.flush() == [b"two"]
    assert splitter.flush() == []
