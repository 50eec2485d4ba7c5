"""A request with health data sent, unredacted, to an external vendor approved for it (a BAA):
its audit row names the approval, and the savings report counts it apart from the sensitive
requests kept at home. Driven with the official openai SDK through a real gateway in front
of a simulated OpenAI API and a simulated vLLM engine."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import openai
import pytest

from gateway.app import create_app
from gateway.policy.loader import parse_policy
from gateway.settings import Settings
from gateway.sim.config import SimConfig
from gateway.sim.server import create_sim_app
from tests.e2e.conftest import FAST, create_key
from tests.support.audit_mirror import mirror_rows
from tests.support.servers import ServerThread, serve

REPO = Path(__file__).resolve().parents[2]
PHI_TEXT = "Patient was diagnosed with type 2 diabetes, ICD-10 E11.9, MRN 4839201."
PII_TEXT = "My card is 4539 1488 0343 6467, charge it."


def test_the_approval_is_named_in_the_audit_row_and_counted_apart(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db_url = f"sqlite+aiosqlite:///{tmp_path}/gw.db"
    key = create_key(db_url, "clinic")
    home = ServerThread(create_sim_app(SimConfig(model_name="m", seed=1, **FAST)))
    vendor = ServerThread(create_sim_app(SimConfig(api="openai", model_name="gpt-4o", seed=2,
                                                   **FAST)))
    home.start()
    vendor.start()
    monkeypatch.setenv("VENDOR_TEST_KEY", "sk-test")
    policy = parse_policy(f"""\
version: 1
backends:
  - {{name: home, provider: vllm, base_url: "{home.url}/v1", model: m,
     context_window: 1024}}
  - name: azure-baa
    provider: openai
    base_url: {vendor.url}/v1
    api_key_env: VENDOR_TEST_KEY
    model: gpt-4o
    context_window: 1024
    zone: external
    quality_tier: 4
    price_per_mtok_usd: {{input: 2.5, output: 10}}
    approved_for: [phi]
    approval: BAA-2026-017
models:
  auto: [home, azure-baa]
rules:
  - name: other-sensitive-home
    when: {{sensitivity: [pii, secret]}}
    allow_zones: [self_hosted]
  - name: health-to-baa
    when: {{sensitivity: [phi]}}
    backends: [azure-baa]
  - name: default
    backends: [home]
""", "p.yaml")
    audit = tmp_path / "audit.jsonl"
    settings = Settings(database_url=db_url, audit_log_path=str(audit))
    try:
        with serve(create_app(settings, policy=policy)) as server, openai.OpenAI(
                base_url=f"{server.url}/v1", api_key=key, max_retries=0) as client:
            for text in (PHI_TEXT, PII_TEXT):
                client.chat.completions.create(
                    model="auto", max_tokens=8, messages=[{"role": "user", "content": text}])
            deadline = time.monotonic() + 10
            while len(mirror_rows(audit)) < 2 and time.monotonic() < deadline:
                time.sleep(0.05)
    finally:
        home.stop()
        vendor.stop()
    events = {tuple(e["sensitivity"]): e for e in mirror_rows(audit)}
    assert events[("phi",)]["backend"] == "azure-baa" and not events[("phi",)]["redacted"]
    assert events[("phi",)]["approval"] == "BAA-2026-017"
    assert events[("pii",)]["backend"] == "home" and events[("pii",)]["approval"] is None
    # The stored row carries it too (its trace): the daily rollup counts it from there.
    env = {k: v for k, v in os.environ.items() if not k.startswith("GATEWAY_")}
    done = subprocess.run(
        [sys.executable, "-m", "gateway", "report", "savings", "--since", "1d", "--format",
         "json", "--database-url", db_url], capture_output=True, text=True, check=False,
        cwd=tmp_path, env={**env, "PYTHONPATH": str(REPO)}, timeout=120)
    assert done.returncode == 0, done.stderr
    totals = json.loads(done.stdout)["totals"]
    assert (totals["sensitive"], totals["sensitive_kept_home"], totals["sensitive_external"],
            totals["sensitive_approved"]) == (2, 1, 1, 1)
