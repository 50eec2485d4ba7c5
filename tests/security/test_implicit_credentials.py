"""`gateway serve` on the embedded database with an operator's own policy creates no tenant and
no key (only the demo policy makes tenant 'demo'), and says how to make one."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.support.processes import Process
from tests.support.servers import free_port

REPO = Path(__file__).resolve().parents[2]


def test_an_operators_policy_starts_with_no_tenant_and_says_how_to_make_a_key(
    tmp_path: Path,
) -> None:
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("GATEWAY_")}
    serve = Process("serve", [sys.executable, "-m", "gateway", "serve", "--no-sim", "--policy",
                              str(REPO / "policies" / "default.yaml"), "--port", str(port)],
                    tmp_path, env, port)
    try:
        serve.wait_healthy(timeout_s=60)
        log = serve.output()
    finally:
        assert serve.stop() == 0, serve.output()
    assert "API key of tenant" not in log and "sk-gw-" not in log, log
    assert "gateway keys create --tenant NAME" in log, log
    listed = subprocess.run([sys.executable, "-m", "gateway", "tenants", "list"], cwd=tmp_path,
                            env=env, capture_output=True, text=True, timeout=60, check=True)
    assert "demo" not in listed.stdout, listed.stdout
