"""Planted personal data and secrets, sent through a real gateway, end up nowhere they should
not: not in its logs (every logger at debug), not in any database table (audit rows with their
trace JSON; audit content, which a tenant may opt into, holds placeholders only), not in the
audit mirror, not in the OTLP spans, and not in what an external-zone upstream receives. Only
the self-hosted upstream may see them: that is what keeping data home means."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import openai
import pytest

from gateway.app import create_app
from gateway.db.engine import create_engine
from gateway.policy.loader import parse_policy
from gateway.settings import Settings
from gateway.sim.config import SimConfig
from gateway.sim.server import create_sim_app
from tests.e2e.conftest import FAST, create_key
from tests.e2e.test_tracing import Receiver, receiver
from tests.security.evidence import database_text, find, logs_into
from tests.support.databases import empty_postgres
from tests.support.servers import ServerThread, serve

__all__ = ["receiver"]

# Realistic values, each one a detector finds (no reserved domains, no published test cards).
PLANTED = {
    "email": "marta.kowalczyk84@gmail.com",
    "phone": "+1 415-867-2394",
    "card": "4539 1488 0343 6467",  # Luhn-valid Visa
    "aws key id": "AKIA4Q7ZJ3WT6M2RXB5N",
    "aws secret": "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",
    "github token": "ghp_7bN3kQ9xVt2Lm8Rw4Yc6Hp1Zs5Dj0Ga3Fe7K",
    "jwt": "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiI4NDcyOTEiLCJpYXQiOjE3MTYyMzkwMjJ9"
           ".kX9vQ2mT7rL4pN8wZ3yB6cH1dF5gJ0sA2eU7iO4tR9k",
}
PROMPT = (
    f"Customer record: email {PLANTED['email']}, call her on {PLANTED['phone']}, card "
    f"{PLANTED['card']}. Deploy config: aws_access_key_id={PLANTED['aws key id']} "
    f"aws_secret_access_key={PLANTED['aws secret']}; the CI token is {PLANTED['github token']}"
    f" and the session token is {PLANTED['jwt']}. Summarise the record."
)
MESSAGES = [{"role": "system", "content": f"Reach me at {PLANTED['email']}"},
            {"role": "user", "content": PROMPT}]
TENANTS = ("plain", "archive")  # archive keeps redacted content with its audit rows


@dataclass
class Rig:
    url: str
    keys: dict[str, str]
    db_url: str
    tmp: Path
    home: ServerThread
    away: ServerThread
    receiver: Receiver
    request_ids: list[str]

    def sent_to(self, sim: ServerThread) -> str:
        return httpx.get(sim.url + "/sim/requests", timeout=10).text


def policy(home: int, away: int) -> str:
    def backend(name: str, provider: str, port: int, zone: str) -> str:
        return (f"  - name: {name}\n    provider: {provider}\n"
                f"    base_url: http://127.0.0.1:{port}/v1\n    model: sim-model\n"
                f"    zone: {zone}\n    context_window: 4096\n")

    return (
        "version: 1\nbackends:\n" + backend("home", "vllm", home, "self_hosted")
        + backend("away", "openai_compat", away, "external")
        + "models:\n  home: [home]\n  away: [away]\n"
        "rules:\n  - name: redact-going-out\n    redact: true\n"
        "tenants:\n  archive: {store_content: redacted}\n"
    )




@pytest.fixture(scope="module",
                params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def rig(
    request: pytest.FixtureRequest, receiver: Receiver,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[Rig]:
    tmp = tmp_path_factory.mktemp("planted")
    db_url = (f"sqlite+aiosqlite:///{tmp}/gw.db" if request.param == "sqlite"
              else empty_postgres(request.getfixturevalue("postgres_url")))
    receiver.spans.clear()  # each database's run is judged on its own spans
    keys = {tenant: create_key(db_url, tenant) for tenant in TENANTS}
    home = ServerThread(create_sim_app(SimConfig(model_name="sim-model", seed=5, **FAST))).start()
    away = ServerThread(create_sim_app(SimConfig(model_name="sim-model", seed=6, **FAST))).start()
    settings = Settings(
        database_url=db_url, audit_log_path=str(tmp / "audit.jsonl"),
        audit_spool_dir=tmp / "spool", log_level="debug", access_log=True,
        otel_exporter_otlp_endpoint=receiver.url, otel_service_name="planted",
    )
    app = create_app(settings, policy=parse_policy(policy(home.port, away.port)))
    try:
        with logs_into(tmp / "gateway.log"), pytest.MonkeyPatch.context() as env:
            env.setenv("OTEL_BSP_SCHEDULE_DELAY", "50")
            server = ServerThread(app).start()
            try:
                found = Rig(server.url, keys, db_url, tmp, home, away, receiver, [])
                _send(found)
                _wait_for_audit(found)
                for request_id in found.request_ids:
                    receiver.wait_for_trace(
                        lambda s, r=request_id: s.attributes.get("gateway.request_id") == r,
                        names={"classify", "decide"})
            finally:
                server.stop()  # flushes the audit writer and the span exporter
        yield found
    finally:
        home.stop()
        away.stop()


def _send(rig: Rig) -> None:
    for key in rig.keys.values():
        with openai.OpenAI(base_url=f"{rig.url}/v1", api_key=key, max_retries=0) as client:
            for model in ("home", "away"):
                raw = client.chat.completions.with_raw_response.create(
                    model=model, max_tokens=12, messages=MESSAGES)
                raw.parse()
                assert raw.headers["x-gateway-backend"] == model
                rig.request_ids.append(raw.headers["x-request-id"])
                rig.request_ids.append(_stream(rig.url, key, model))
                raw_text = client.completions.with_raw_response.create(
                    model=model, prompt=PROMPT, max_tokens=8)
                raw_text.parse()
                rig.request_ids.append(raw_text.headers["x-request-id"])
            rig.request_ids += _failures(rig, client)


def _stream(url: str, key: str, model: str) -> str:
    """A streamed chat read to the end of the HTTP body, not only to `data: [DONE]`: the SDK
    hangs up at [DONE], and a hang-up while the gateway is still settling the stream loses
    that request's audit row (see test_streamed_audit_rows_survive_a_hang_up_at_done)."""
    body = {"model": model, "max_tokens": 12, "stream": True, "messages": MESSAGES}
    with httpx.stream("POST", f"{url}/v1/chat/completions", json=body, timeout=30,
                      headers={"authorization": f"Bearer {key}"}) as resp:
        assert resp.status_code == 200 and resp.headers["x-gateway-backend"] == model
        assert b"data: [DONE]" in b"".join(resp.iter_raw())
        return resp.headers["x-request-id"]


def _failures(rig: Rig, client: openai.OpenAI) -> list[str]:
    """The self-hosted engine fails, quoting the personal data it was given in its error (as
    engines do with a bad input): the client may see that, the gateway's records may not."""
    quoted = f"cannot process {PLANTED['email']} / {PLANTED['jwt']}"
    httpx.post(rig.home.url + "/sim/faults", json={"status": 500, "message": quoted},
               timeout=10).raise_for_status()
    failed = []
    try:
        for stream in (False, True):
            with pytest.raises(openai.APIStatusError) as error:
                client.chat.completions.create(
                    model="home", max_tokens=4, stream=stream,
                    messages=[{"role": "user", "content": PROMPT}])
            failed.append(error.value.response.headers["x-request-id"])
    finally:
        httpx.delete(rig.home.url + "/sim/faults", timeout=10).raise_for_status()
    return failed


def _database(rig: Rig) -> dict[str, str]:
    async def main() -> dict[str, str]:
        engine = create_engine(rig.db_url)
        try:
            return await database_text(engine)
        finally:
            await engine.dispose()

    return asyncio.run(main())


def _wait_for_audit(rig: Rig, timeout_s: float = 20) -> None:
    deadline = time.monotonic() + timeout_s
    while True:
        audited = _database(rig).get("audit_log", "")
        missing = [rid for rid in rig.request_ids if rid not in audited]
        if not missing:
            return
        assert time.monotonic() < deadline, f"no audit row for {missing}"
        time.sleep(0.2)


def _spans(rig: Rig) -> str:
    return "\n".join(json.dumps([s.name, s.attributes, s.events], default=str)
                     for s in rig.receiver.spans)


def test_the_self_hosted_upstream_gets_the_originals_the_external_one_placeholders(
    rig: Rig,
) -> None:
    """The positive control: the values were sent, and detected on the way out."""
    home, away = rig.sent_to(rig.home), rig.sent_to(rig.away)
    assert all(value in home for value in PLANTED.values())
    assert "[EMAIL_1]" in away and "[SECRET_1]" in away and "[PAYMENT_CARD_1]" in away
    assert find(PLANTED, {"external upstream": away}) == []


def test_no_planted_value_in_logs_audit_traces_or_content(rig: Rig) -> None:
    database = _database(rig)
    haystacks = {f"table {name}": text for name, text in database.items()} | {
        "gateway log": (rig.tmp / "gateway.log").read_text(),
        "audit mirror": (rig.tmp / "audit.jsonl").read_text(),
        "spool": "".join(p.read_text(errors="replace") for p in
                         (rig.tmp / "spool").rglob("*") if p.is_file()),
        "OTLP spans": _spans(rig),
    }
    # Evidence that each place was really looked at, with this run's requests in it.
    assert rig.request_ids[0] in haystacks["table audit_log"]
    assert rig.request_ids[0] in haystacks["audit mirror"]
    assert rig.request_ids[0] in haystacks["OTLP spans"]
    assert " DEBUG httpcore" in haystacks["gateway log"]  # debug records from every logger
    assert find(PLANTED, haystacks) == []


def test_an_opted_in_tenant_keeps_only_redacted_content(rig: Rig) -> None:
    content = _database(rig)["audit_content"]
    rows = [line for line in content.splitlines() if line]
    # Every request of the archive tenant (home and away alike), none of the plain one's.
    assert len(rows) == len(rig.request_ids) // 2
    assert all("[EMAIL_1]" in row for row in rows)
    assert find(PLANTED, {"audit_content": content}) == []


@pytest.fixture
def fresh(tmp_path: Path) -> Iterator[Rig]:
    """A small gateway of its own, for the known-gap tests below (whose requests would spoil
    the module rig's evidence)."""
    db_url = f"sqlite+aiosqlite:///{tmp_path}/gw.db"
    keys = {tenant: create_key(db_url, tenant) for tenant in TENANTS}
    home = ServerThread(create_sim_app(SimConfig(model_name="sim-model", seed=7, **FAST))).start()
    away = ServerThread(create_sim_app(SimConfig(model_name="sim-model", seed=8, **FAST))).start()
    settings = Settings(database_url=db_url, audit_spool_dir=tmp_path / "spool")
    try:
        with serve(create_app(settings, policy=parse_policy(policy(home.port, away.port)))) as gw:
            yield Rig(gw.url, keys, db_url, tmp_path, home, away, Receiver(), [])
    finally:
        home.stop()
        away.stop()


def test_identifying_fields_outside_the_messages_are_redacted_too(fresh: Rig) -> None:
    """`user`, `safety_identifier`, `prompt_cache_key` and `metadata` values reach the upstream
    beside the messages: on a redacting route they go out as placeholders, keys kept."""
    with openai.OpenAI(base_url=f"{fresh.url}/v1", api_key=fresh.keys["plain"],
                       max_retries=0) as client:
        client.chat.completions.create(
            model="away", max_tokens=4, user=PLANTED["email"], store=True,
            metadata={"customer_phone": PLANTED["phone"]},
            extra_body={"safety_identifier": PLANTED["email"],
                        "prompt_cache_key": f"card {PLANTED['card']}"},
            messages=[{"role": "user", "content": "Summarise our call notes."}])
    sent = fresh.sent_to(fresh.away)
    assert find(PLANTED, {"external upstream": sent}) == []
    # The positive control: the fields were sent, as placeholders.
    assert "[EMAIL_1]" in sent and "[PHONE_1]" in sent and "[PAYMENT_CARD_1]" in sent
    assert "customer_phone" in sent


def test_streamed_audit_rows_survive_a_hang_up_at_done(fresh: Rig) -> None:
    with openai.OpenAI(base_url=f"{fresh.url}/v1", api_key=fresh.keys["archive"],
                       max_retries=0) as client:
        for _ in range(30):
            raw = client.chat.completions.with_raw_response.create(
                model="home", max_tokens=12, stream=True, messages=MESSAGES)
            list(raw.parse())
            fresh.request_ids.append(raw.headers["x-request-id"])
    _wait_for_audit(fresh, timeout_s=5)
