"""Secrets given as files, rotated under a running gateway: the admin and metrics keys and a
provider's key take effect without a restart (a changed file is noticed; SIGHUP re-reads
everything at once), and a secret given two ways stops `gateway serve` naming both."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from gateway.app import create_app
from gateway.settings import Settings
from tests.e2e.conftest import create_key
from tests.resilience.processes import REPO, Process, gateway_process
from tests.support.mock_openai import MockOpenAI
from tests.support.servers import free_port, serve

CHAT = {"model": "auto", "max_tokens": 1, "messages": [{"role": "user", "content": "hi"}]}


def write_secret(path: Path, value: str) -> Path:
    """As an operator rotates a bind-mounted Docker secret: rewritten in place, mode 0600."""
    path.write_text(value + "\n")
    path.chmod(0o600)
    return path


def policy(upstream_port: int, key_file: Path) -> str:
    return ("version: 1\nbackends:\n  - name: upstream\n    provider: openai_compat\n"
            f"    base_url: http://127.0.0.1:{upstream_port}/v1\n    model: gpt-4o-mini\n"
            f"    context_window: 8192\n    api_key_file: {key_file}\n"
            "models:\n  auto: [upstream]\n")


def wait_for(predicate: Callable[[], bool], timeout_s: float = 10.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not predicate():
        assert time.monotonic() < deadline, "the rotated secret never took effect"
        time.sleep(0.05)


def status(url: str, key: str) -> int:
    return httpx.get(url, headers={"authorization": f"Bearer {key}"}, timeout=10).status_code


@dataclass
class Running:
    url: str
    tenant_key: str
    upstream: MockOpenAI
    files: dict[str, Path]


@pytest.fixture
def running(tmp_path: Path) -> Iterator[Running]:
    files = {name: write_secret(tmp_path / name, f"{name}-1")
             for name in ("admin", "metrics", "provider")}
    upstream = MockOpenAI(api_key="provider-1")
    db_url = f"sqlite+aiosqlite:///{tmp_path}/gw.db"
    tenant_key = create_key(db_url, "acme")
    with serve(upstream.app()) as mock:
        policy_path = tmp_path / "policy.yaml"
        policy_path.write_text(policy(mock.port, files["provider"]))
        settings = Settings(
            database_url=db_url, policy_path=policy_path, policy_poll_interval_s=0.05,
            admin_key_file=files["admin"], metrics_key_file=files["metrics"],
            audit_spool_dir=tmp_path / "spool")
        with serve(create_app(settings)) as gateway:
            yield Running(gateway.url, tenant_key, upstream, files)


def test_a_rotated_admin_key_file_replaces_the_old_key(running: Running) -> None:
    admin = running.url + "/admin/tenants"
    assert status(admin, "admin-1") == 200
    write_secret(running.files["admin"], "admin-2")
    wait_for(lambda: status(admin, "admin-2") == 200)
    assert status(admin, "admin-1") == 401


def test_a_rotated_metrics_key_file_replaces_the_old_key(running: Running) -> None:
    scrape = running.url + "/metrics"
    assert status(scrape, "metrics-1") == 200
    write_secret(running.files["metrics"], "metrics-2")
    wait_for(lambda: status(scrape, "metrics-2") == 200)
    assert status(scrape, "metrics-1") == 401


def test_a_rotated_provider_key_file_is_sent_upstream(running: Running) -> None:
    def chat() -> httpx.Response:
        return httpx.post(running.url + "/v1/chat/completions", json=CHAT, timeout=10,
                          headers={"authorization": f"Bearer {running.tenant_key}"})

    assert chat().status_code == 200
    assert running.upstream.last().headers["authorization"] == "Bearer provider-1"
    running.upstream.api_key = "provider-2"  # the provider revokes the old key...
    write_secret(running.files["provider"], "provider-2")  # ...and the new one is mounted
    wait_for(lambda: chat().status_code == 200)
    assert running.upstream.last().headers["authorization"] == "Bearer provider-2"


def test_an_unreadable_rotated_provider_key_keeps_the_running_policy(running: Running) -> None:
    running.files["provider"].unlink()
    scrape = running.url + "/metrics"

    def rejected_reloads() -> float:
        text = httpx.get(scrape, headers={"authorization": "Bearer metrics-1"}).text
        lines = [line for line in text.splitlines()
                 if line.startswith('gateway_policy_reloads_total{result="rejected"}')]
        return float(lines[0].rsplit(" ", 1)[1]) if lines else 0.0

    wait_for(lambda: rejected_reloads() >= 1)
    resp = httpx.post(running.url + "/v1/chat/completions", json=CHAT, timeout=10,
                      headers={"authorization": f"Bearer {running.tenant_key}"})
    assert resp.status_code == 200  # still on the key read before the file vanished
    assert running.upstream.last().headers["authorization"] == "Bearer provider-1"


def serve_process(tmp: Path, policy_path: Path, env: dict[str, str], workers: int = 1) -> Process:
    port = free_port()
    settings = {"GATEWAY_DATABASE_URL": f"sqlite+aiosqlite:///{tmp}/gw.db",
                "GATEWAY_LOG_LEVEL": "warning", "OTEL_SDK_DISABLED": "true", **env}
    return gateway_process("gateway", ["serve", "--port", str(port), "--policy", str(policy_path),
                               "--no-sim", "--workers", str(workers)], tmp, settings, port)


def workers_of(pid: int) -> set[int]:
    """uvicorn's worker processes under `gateway serve` (spawned, so started by spawn_main)."""
    children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    found = set()
    for child in children:
        try:
            cmdline = Path(f"/proc/{child}/cmdline").read_bytes()
        except FileNotFoundError:
            continue
        if b"spawn_main" in cmdline:
            found.add(int(child))
    return found


def test_sighup_rereads_every_secret_file_at_once(tmp_path: Path) -> None:
    """One worker: uvicorn leaves SIGHUP to the gateway, which re-reads the policy (provider
    key files) and its own keys. The file watch is made too slow to be what notices."""
    files = {name: write_secret(tmp_path / name, f"{name}-1") for name in ("admin", "provider")}
    upstream = MockOpenAI(api_key="provider-1")
    tenant_key = create_key(f"sqlite+aiosqlite:///{tmp_path}/gw.db", "acme")
    with serve(upstream.app()) as mock:
        policy_path = tmp_path / "policy.yaml"
        policy_path.write_text(policy(mock.port, files["provider"]))
        gateway = serve_process(tmp_path, policy_path, {
            "GATEWAY_ADMIN_KEY_FILE": str(files["admin"]),
            "GATEWAY_POLICY_POLL_INTERVAL_S": "3600"})
        try:
            gateway.wait_healthy(timeout_s=60)
            admin = gateway.url + "/admin/tenants"
            assert status(admin, "admin-1") == 200
            write_secret(files["admin"], "admin-2")
            write_secret(files["provider"], "provider-2")
            upstream.api_key = "provider-2"
            time.sleep(0.5)
            assert status(admin, "admin-1") == 200  # nothing re-read on its own
            gateway.signal(signal.SIGHUP)
            wait_for(lambda: status(admin, "admin-2") == 200)
            assert status(admin, "admin-1") == 401
            resp = httpx.post(gateway.url + "/v1/chat/completions", json=CHAT, timeout=10,
                              headers={"authorization": f"Bearer {tenant_key}"})
            assert resp.status_code == 200, resp.text
            assert upstream.last().headers["authorization"] == "Bearer provider-2"
            assert gateway.proc.poll() is None  # SIGHUP's default action would have killed it
        finally:
            gateway.stop()
        log = gateway.log_path.read_text(errors="replace")
        assert "provider-2" not in log and "admin-2" not in log


def test_sighup_with_two_workers_replaces_them_reading_the_new_key(tmp_path: Path) -> None:
    """--workers 2: uvicorn's supervisor answers SIGHUP by replacing its workers one at a
    time; the new ones read the rotated file. Every scrape keeps counting what the old ones
    served."""
    admin_file = write_secret(tmp_path / "admin", "admin-1")
    upstream = MockOpenAI(api_key="provider-1")
    tenant_key = create_key(f"sqlite+aiosqlite:///{tmp_path}/gw.db", "acme")
    with serve(upstream.app()) as mock:
        policy_path = tmp_path / "policy.yaml"
        policy_path.write_text(policy(mock.port, write_secret(tmp_path / "p", "provider-1")))
        gateway = serve_process(tmp_path, policy_path, {
            "GATEWAY_ADMIN_KEY_FILE": str(admin_file),
            "GATEWAY_POLICY_POLL_INTERVAL_S": "3600"}, workers=2)
        try:
            gateway.wait_healthy(timeout_s=90)
            resp = httpx.post(gateway.url + "/v1/chat/completions", json=CHAT, timeout=10,
                              headers={"authorization": f"Bearer {tenant_key}"})
            assert resp.status_code == 200, resp.text
            old = workers_of(gateway.pid)
            assert len(old) == 2
            write_secret(admin_file, "admin-2")
            gateway.signal(signal.SIGHUP)
            wait_for(lambda: not old & workers_of(gateway.pid) and len(
                workers_of(gateway.pid)) == 2, timeout_s=120)
            for _ in range(6):  # whichever new worker answers
                with httpx.Client(headers={"Connection": "close"}) as client:
                    admin = gateway.url + "/admin/tenants"
                    assert client.get(admin, headers={
                        "authorization": "Bearer admin-2"}).status_code == 200
                    assert client.get(admin, headers={
                        "authorization": "Bearer admin-1"}).status_code == 401
            wait_for(lambda: "gateway_requests_total{" in httpx.get(
                gateway.url + "/metrics", headers={"authorization": "Bearer admin-2"}).text)
        finally:
            gateway.stop()


def test_serve_refuses_a_secret_given_both_ways(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GATEWAY_")}
    env.update(PYTHONPATH=str(REPO), GATEWAY_ADMIN_KEY="inline-admin-key",
               GATEWAY_ADMIN_KEY_FILE=str(write_secret(tmp_path / "admin", "file-admin-key")))
    result = subprocess.run(
        [sys.executable, "-m", "gateway", "serve", "--port", str(free_port()), "--no-sim"],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=60, check=False)
    assert result.returncode != 0
    assert "GATEWAY_ADMIN_KEY and GATEWAY_ADMIN_KEY_FILE are both set" in result.stderr
    assert "inline-admin-key" not in result.stderr and "file-admin-key" not in result.stderr
