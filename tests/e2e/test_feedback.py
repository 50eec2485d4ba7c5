"""POST /v1/feedback on a real gateway (uvicorn, real Postgres) through the openai SDK: a
tenant scores its own requests only, bad bodies are 400s naming the parameter, and feedback
sent before the request's audit row reaches the database is kept, not refused."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator

import openai
import pytest
from sqlalchemy import text

from gateway.db.engine import create_engine
from tests.e2e.outcome_rig import Rig, outcome_rig, replica_of

pytestmark = pytest.mark.postgres
OFF = "{sample: 0, strong: strong, judge: strong, daily_usd: 0}"


@pytest.fixture(scope="module")
def rig(postgres_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Rig]:
    with outcome_rig(postgres_url, tmp_path_factory.mktemp("feedback"), OFF) as rig:
        yield rig


def test_a_score_is_stored_with_the_request(rig: Rig) -> None:
    request_id, _, _ = rig.ask("What is the capital of France?")
    reply = rig.feedback({"request_id": request_id, "score": 0.75})
    assert reply == {"object": "feedback", "request_id": request_id, "score": 0.75,
                     "label": None}
    [row] = rig.outcomes(request_id)
    assert (row["source"], row["score"], row["label"]) == ("feedback", 0.75, None)
    assert row["tenant_id"] == rig.parts.audit.recent.tenant_of(request_id)


def test_a_label_replaces_the_earlier_feedback(rig: Rig) -> None:
    request_id, _, _ = rig.ask("Name three primary colours.")
    rig.feedback({"request_id": request_id, "label": "good"})
    rig.feedback({"request_id": request_id, "label": "bad"})
    [row] = rig.outcomes(request_id)
    assert (row["score"], row["label"]) == (0.0, "bad")


def test_another_tenants_request_is_not_found(rig: Rig) -> None:
    request_id, _, _ = rig.ask("A request of acme's.")
    rig.wait_for(lambda: _in_audit_log(rig, request_id))  # both ways: in flight and stored
    with pytest.raises(openai.NotFoundError) as caught:
        rig.feedback({"request_id": request_id, "score": 1}, tenant="globex")
    error = caught.value.body
    assert isinstance(error, dict)
    assert (error["param"], error["code"], error["type"]) == (
        "request_id", "request_not_found", "invalid_request_error")
    assert rig.outcomes(request_id) == []


def test_another_replica_finds_the_request_in_the_database(
        rig: Rig, tmp_path_factory: pytest.TempPathFactory) -> None:
    request_id, _, _ = rig.ask("Answered by the first replica.")
    with replica_of(rig, tmp_path_factory.mktemp("replica")) as replica:
        assert replica.parts.audit.recent.tenant_of(request_id) is None
        # It started after the row landed: the database is the only place it can find it.
        replica.feedback({"request_id": request_id, "score": 0.5})
        with pytest.raises(openai.NotFoundError):
            replica.feedback({"request_id": request_id, "score": 0.5}, tenant="globex")
    [row] = rig.outcomes(request_id)
    assert row["score"] == 0.5


def test_an_unknown_request_is_not_found(rig: Rig) -> None:
    with pytest.raises(openai.NotFoundError):
        rig.feedback({"request_id": "req_does_not_exist", "label": "good"})


@pytest.mark.parametrize(("body", "param"), [
    ({"score": 1}, "request_id"),
    ({"request_id": 7, "score": 1}, "request_id"),
    ({"request_id": "x"}, "score"),
    ({"request_id": "x", "score": 1, "label": "good"}, "score"),
    ({"request_id": "x", "score": 1.5}, "score"),
    ({"request_id": "x", "score": True}, "score"),
    ({"request_id": "x", "label": "great"}, "label"),
    ({"request_id": "x", "label": {}}, "label"),
    ({"request_id": "x", "score": 1, "comment": "hi"}, "comment"),
])
def test_a_bad_body_is_a_400_naming_the_parameter(rig: Rig, body: dict[str, object],
                                                  param: str) -> None:
    with pytest.raises(openai.BadRequestError) as caught:
        rig.feedback(body)
    assert isinstance(caught.value.body, dict)
    assert caught.value.body["param"] == param


def test_feedback_before_the_audit_row_lands_is_kept(rig: Rig) -> None:
    """The audit table is locked, so the request's row cannot reach the database while the
    feedback arrives; the feedback is accepted for the right tenant and joins the row once
    the lock is gone."""
    locked, release, done = threading.Event(), threading.Event(), threading.Event()
    holder = threading.Thread(target=_hold_lock, args=(rig.db_url, locked, release, done))
    holder.start()
    try:
        assert locked.wait(10)
        request_id, _, _ = rig.ask("Feedback races its own audit row.")
        rig.feedback({"request_id": request_id, "label": "good"})
        with pytest.raises(openai.NotFoundError):  # still only for its own tenant
            rig.feedback({"request_id": request_id, "label": "bad"}, tenant="globex")
        assert not done.is_set()
    finally:
        release.set()
        holder.join(10)
    [row] = rig.outcomes(request_id)
    assert (row["score"], row["label"]) == (1.0, "good")
    rig.wait_for(lambda: _in_audit_log(rig, request_id))


def _hold_lock(db_url: str, locked: threading.Event, release: threading.Event,
               done: threading.Event) -> None:
    async def hold() -> None:
        engine = create_engine(db_url)
        try:
            async with engine.begin() as conn:
                await conn.execute(text("LOCK TABLE audit_log IN ACCESS EXCLUSIVE MODE"))
                locked.set()
                await asyncio.to_thread(release.wait, 10)
        finally:
            await engine.dispose()
            done.set()

    asyncio.run(hold())


def _in_audit_log(rig: Rig, request_id: str) -> bool:
    async def read() -> bool:
        engine = create_engine(rig.db_url)
        try:
            async with engine.connect() as conn:
                return bool(await conn.scalar(text(
                    "SELECT count(*) FROM audit_log WHERE request_id = :r"), {"r": request_id}))
        finally:
            await engine.dispose()

    return asyncio.run(read())
