"""The serving install leaves out the `train` extra (scikit-learn, scipy): the demo gateway
starts, `gateway demo traffic` is routed, and what serves live traffic besides requests (the
explain endpoint, the report page with its capacity section) answers, all in processes where
importing either package fails as it does when it is not installed."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from gateway.cli.extras import TRAIN_MODULES
from gateway.package_data import demo_policy_path
from tests.support.processes import Process
from tests.support.servers import free_port

ADMIN_KEY = "admin-without-train"


@dataclass
class Serving:
    url: str
    key: str
    home: Path
    env: dict[str, str]

    def gateway(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "gateway", *args], cwd=self.home,
                              env=self.env, capture_output=True, text=True, timeout=300,
                              check=False)


def without_train(folder: Path) -> Path:
    """A folder that, first on PYTHONPATH, makes each training package fail to import as a
    missing one does, in every process the gateway starts (workers, simulators) too."""
    for name in TRAIN_MODULES:
        (folder / name).mkdir(parents=True)
        (folder / name / "__init__.py").write_text(
            f"raise ModuleNotFoundError(\"No module named '{name}'\", name={name!r})\n")
    return folder


@pytest.fixture(scope="module")
def serving(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Serving]:
    home = tmp_path_factory.mktemp("serving")
    blocked = without_train(tmp_path_factory.mktemp("blocked"))
    text = demo_policy_path().read_text()
    for port in sorted(set(re.findall(r"127\.0\.0\.1:(\d+)", text))):
        text = text.replace(f"127.0.0.1:{port}", f"127.0.0.1:{free_port()}")
    (home / "policy.yaml").write_text(text)
    env = {k: v for k, v in os.environ.items() if not k.startswith("GATEWAY_")}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(blocked), env.get("PYTHONPATH")]))
    env["GATEWAY_ADMIN_KEY"] = ADMIN_KEY
    probe = subprocess.run([sys.executable, "-c", "import sklearn"], env=env,
                           capture_output=True, text=True, check=False)
    assert probe.returncode == 1 and "No module named 'sklearn'" in probe.stderr
    made = subprocess.run([sys.executable, "-m", "gateway", "keys", "create", "--tenant", "demo"],
                          cwd=home, env=env, capture_output=True, text=True, timeout=60,
                          check=True)
    port = free_port()
    serve = Process("serve", [sys.executable, "-m", "gateway", "serve", "--policy",
                              "policy.yaml", "--port", str(port)], home, env, port)
    try:
        serve.wait_healthy(timeout_s=90)
        yield Serving(serve.url, made.stdout.strip().splitlines()[-1], home, env)
    finally:
        returncode = serve.stop()
    assert returncode == 0, serve.output()


def test_the_demo_routes_its_traffic_without_the_train_extra(serving: Serving) -> None:
    done = serving.gateway("demo", "traffic", "--url", serving.url, "--key", serving.key,
                           "--requests", "12", "--concurrency", "4", "--burst", "4")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "llama-8b" in done.stdout


def test_explain_and_the_report_page_answer_without_the_train_extra(serving: Serving) -> None:
    admin = {"authorization": f"Bearer {ADMIN_KEY}"}
    body = {"tenant": "demo", "request": {"model": "auto", "max_tokens": 8,
                                         "messages": [{"role": "user", "content": "hi"}]}}
    explained = httpx.post(f"{serving.url}/admin/policy/explain", json=body, headers=admin,
                           timeout=30)
    assert explained.status_code == 200, explained.text
    assert explained.json()["outcome"] == "routed"
    page = httpx.get(f"{serving.url}/admin/reports", headers=admin, timeout=60)
    assert page.status_code == 200, page.text[:500]


def test_offline_commands_that_need_no_training_run_without_it(serving: Serving) -> None:
    request = serving.home / "request.json"
    request.write_text('{"model": "auto", "messages": [{"role": "user", "content": "hi"}]}')
    explained = serving.gateway("policy", "explain", "--policy", "policy.yaml",
                                "--request", str(request))
    assert explained.returncode == 0, explained.stderr
    assert "primary" in explained.stdout
    planned = serving.gateway("plan", "--model", "llama-3.1-8b", "--gpu", "H100",
                              "--sessions", "8", "--prompt-tokens", "1000",
                              "--output-tokens", "200")
    assert planned.returncode == 0, planned.stderr
