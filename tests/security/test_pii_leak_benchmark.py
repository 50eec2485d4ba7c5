"""pii-leak-benchmark (PyPI) against a real gateway: the benchmark starts its own capture
server, the gateway's policy routes to it as an EXTERNAL-zone backend with redaction on, and
the benchmark sends planted personal data and credentials through the gateway, then checks
what reached the capture and whether the client got its values back (we restore
placeholders in responses: the benchmark's default `--duty restore`)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from gateway.app import create_app
from gateway.policy.loader import parse_policy
from gateway.settings import Settings
from tests.e2e.conftest import create_key
from tests.support.servers import free_port, serve

BOUNDARY = "configured_upstream_boundary"
# The benchmark's specimens that are reserved or published stand-ins, identifying no person
# and opening no account. The detectors report them as reserved findings
# (SensitiveSpan.reserved): routing and the sensitivity evaluation ignore them, so a request
# holding only stand-ins is not "sensitive", but redaction masks them like any finding.
RESERVED_SPECIMENS = {
    "EMAIL": "always <8 letters>@example.com: an RFC 2606 reserved domain "
             "(detectors/contact.py _RESERVED_DOMAIN)",
    "CREDIT_CARD": "drawn from six published test PANs; 4111 1111 1111 1111, 4242 4242 4242 "
                   "4242 and 5555 5555 5555 4444 have two distinct digits "
                   "(validators.is_test_card), the others are valid cards to the detector",
    "AWS_ACCESS_KEY_ID": "AKIAIOSFODNN7EXAMPLE, AWS's documentation key: the EXAMPLE suffix "
                         "is a placeholder to secret_values.is_placeholder",
    "SLACK_TOKEN": "xoxb-00000-00000-EXAMPLENOTAREALTOKEN: a Slack prefix on a value that says "
                   "it is an example (secret_values.is_stand_in), not a Slack token's shape",
}


def policy(capture_port: int) -> str:
    return (
        "version: 1\nbackends:\n"
        "  - name: capture\n    provider: openai_compat\n"
        f"    base_url: http://127.0.0.1:{capture_port}/v1\n    model: capture-model\n"
        "    zone: external\n    context_window: 32768\n"
        "    price_per_mtok_usd: {input: 1.0, output: 2.0}\n"
        "models:\n  capture: [capture]\n"
        "rules:\n  - name: sensitive-goes-out-redacted\n"
        "    when: {sensitivity: [pii, secret, phi]}\n    redact: true\n"
    )


@dataclass(frozen=True)
class Run:
    exit_code: int
    report: dict[str, Any]
    output: str

    @property
    def boundary(self) -> dict[str, Any]:
        found: dict[str, Any] = self.report["checks"][BOUNDARY]
        return found

    def rows(self) -> dict[str, str]:
        """Each data type the benchmark sent, with its verdict as the benchmark prints it."""
        leaked = (set(self.boundary["leaked_entity_types"])
                  | set(self.boundary["unattributed_leaked_entity_types"]))
        return {kind: "LEAK" if kind in leaked else "CLEAN"
                for kind in self.boundary["needle_lengths"]}


def _benchmark() -> str:
    found = shutil.which("pii-leak-benchmark", path=str(Path(sys.executable).parent))
    if found is None:
        pytest.skip("pii-leak-benchmark is not installed (pip install -e '.[test]')")
    return found


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Run]:
    command = _benchmark()
    tmp = tmp_path_factory.mktemp("pii-bench")
    db_url = f"sqlite+aiosqlite:///{tmp}/gw.db"
    key = create_key(db_url, "bench")
    capture_port = free_port()
    settings = Settings(database_url=db_url, audit_spool_dir=tmp / "spool")
    app = create_app(settings, policy=parse_policy(policy(capture_port)))
    with serve(app) as gateway:
        done = subprocess.run(
            [command, "selfcheck", "--target-base-url", f"{gateway.url}/v1",
             "--target-model", "capture", "--capture-port", str(capture_port),
             "--duty", "restore", "--json-out", str(tmp / "report.json")],
            # The key by environment, as the benchmark prefers: argv shows in process lists.
            env={**os.environ, "CONFORMANCE_TARGET_API_KEY": key},
            capture_output=True, text=True, timeout=240, check=False)
    report = json.loads((tmp / "report.json").read_text())
    yield Run(done.returncode, report, done.stdout + done.stderr)


def test_the_benchmark_measured_the_gateway(run: Run) -> None:
    """Attributable (traffic reached the capture through the gateway) and every behaviour
    check but the leak check passes: responses restored, SSE valid, fragments rebuild."""
    assert run.exit_code in (0, 1), run.output  # 2: NOT MEASURED
    assert run.boundary["correlated_requests"] > 0 and run.boundary["uninspectable_requests"] == 0
    failed = sorted(name for name, check in run.report["checks"].items()
                    if name != BOUNDARY and not check["passed"])
    assert failed == [], run.output


def test_every_row_is_clean(run: Run) -> None:
    """Realistic specimens (an SSN-shaped number, a GitHub token) and the reserved stand-ins
    above alike: nothing the benchmark planted reaches the external upstream."""
    rows = run.rows()
    assert {"SSN", "GITHUB_TOKEN"} | RESERVED_SPECIMENS.keys() <= rows.keys(), rows
    assert run.exit_code == 0 and set(rows.values()) == {"CLEAN"}, run.output
