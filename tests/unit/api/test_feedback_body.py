"""Any body POST /v1/feedback can receive is either a valid feedback or a 400 naming what is
wrong: never another exception (which would be a 500)."""

from __future__ import annotations

import orjson
from hypothesis import given
from hypothesis import strategies as st

from gateway.api.feedback import parse_feedback
from gateway.errors import InvalidRequest

JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**63), 2**63 - 1)
    | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(), inner, max_size=3),
    max_leaves=8,
)
FIELDS = st.fixed_dictionaries({"request_id": st.text(min_size=1, max_size=64)}, optional={
    "score": JSON, "label": JSON | st.sampled_from(["good"]),
}) | st.fixed_dictionaries({}, optional={"request_id": JSON, "score": JSON, "label": JSON})


@given(FIELDS | JSON)
def test_every_body_is_feedback_or_a_400(body: object) -> None:
    try:
        request_id, score, label = parse_feedback(orjson.dumps(body))
    except InvalidRequest as exc:
        assert exc.status == 400
        return
    assert isinstance(request_id, str) and 0 <= score <= 1
    assert label in (None, "good", "bad")


def test_not_json_is_a_400() -> None:
    for raw in (b"", b"{", b"\xff"):
        try:
            parse_feedback(raw)
        except InvalidRequest:
            continue
        raise AssertionError(raw)
