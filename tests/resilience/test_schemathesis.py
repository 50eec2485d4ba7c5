"""Schemathesis fuzzes every operation of the gateway's own OpenAPI document (inference,
admin, reports, usage, health) against a real gateway: no input, valid or not, gets a 5xx.
And `schemathesis run --checks all` (bounded) passes: the document tells the truth about
statuses, content types, bodies, authentication and methods (405 with `Allow`).

Bounded: a few dozen examples per operation, with the tenant key (or the admin key on
/admin routes) so requests get past authentication into the handlers."""

from __future__ import annotations

import subprocess
import sys
from collections import Counter, defaultdict
from collections.abc import Iterator
from pathlib import Path

import hypothesis
import pytest
import schemathesis
from schemathesis.checks import not_a_server_error

from gateway.app import create_app
from gateway.policy.loader import parse_policy
from gateway.settings import Settings
from gateway.sim.config import SimConfig
from gateway.sim.server import create_sim_app
from tests.e2e.conftest import ADMIN_KEY, FAST, create_key
from tests.resilience.processes import sims_policy
from tests.support.servers import ServerThread, serve

pytestmark = pytest.mark.resilience

KEYS: dict[str, str] = {}
URLS: dict[str, str] = {}
# Examples per operation in each phase of the CLI run, and a bound on its wall time.
CLI_EXAMPLES = 10
CLI_TIMEOUT_S = 400
CONFIG = "schemathesis.toml"  # why a schema-valid request may still get a 400

@pytest.fixture(scope="module")
def api_schema(tmp_path_factory: pytest.TempPathFactory) -> Iterator[schemathesis.BaseSchema]:
    tmp: Path = tmp_path_factory.mktemp("fuzz")
    db_url = f"sqlite+aiosqlite:///{tmp}/gw.db"
    KEYS["tenant"] = create_key(db_url, "acme")
    sim = ServerThread(create_sim_app(SimConfig(model_name="sim-model", seed=5, **FAST)))
    sim.start()
    settings = Settings(database_url=db_url, admin_key=ADMIN_KEY, max_body_bytes=64 * 1024,
                        audit_spool_dir=tmp / "spool", upstream_read_timeout_s=5)
    try:
        with serve(create_app(settings, policy=parse_policy(sims_policy({"sim": sim.port})))) as gw:
            URLS["gateway"] = gw.url
            yield schemathesis.openapi.from_url(f"{gw.url}/openapi.json")
    finally:
        sim.stop()


def fuzz(operation: schemathesis.APIOperation, key: str, statuses: Counter[int]) -> None:
    @hypothesis.given(case=operation.as_strategy())
    @hypothesis.settings(max_examples=25, deadline=None, derandomize=True, database=None,
                         suppress_health_check=list(hypothesis.HealthCheck))
    def run(case: schemathesis.Case) -> None:
        body = case.body
        if isinstance(body, dict) and isinstance(body.get("model"), str) and len(body) % 2:
            body["model"] = "auto"  # about half name a served model, so they reach routing
        response = case.call_and_validate(headers={"authorization": f"Bearer {key}"},
                                          checks=[not_a_server_error], timeout=30)
        statuses[response.status_code // 100 * 100] += 1

    run()


def test_no_input_gets_a_server_error(api_schema: schemathesis.BaseSchema) -> None:
    # One Hypothesis run per operation, driven here rather than by schemathesis' pytest
    # plugin (its lazy fixture schemas do not work with the pytest this suite runs).
    failures: list[str] = []
    statuses: dict[str, Counter[int]] = defaultdict(Counter)
    operations = [result.ok() for result in api_schema.get_all_operations()]
    assert any(op.path == "/v1/chat/completions" for op in operations)
    for operation in operations:
        key = ADMIN_KEY if operation.path.startswith("/admin") else KEYS["tenant"]

        try:
            fuzz(operation, key, statuses[f"{operation.method.upper()} {operation.path}"])
        except Exception as exc:  # collected, so one run reports every failing operation
            failures.append(f"{operation.method.upper()} {operation.path}: {exc}"[:2000])
    assert not failures, "\n\n".join(failures)
    # The fuzzer got past validation into routing, not only 4xx answers.
    for route in ("POST /v1/chat/completions", "POST /v1/messages", "GET /admin/fleet"):
        assert statuses[route][200] > 0, (route, statuses[route])


@pytest.mark.parametrize(("paths", "key"), [("tenant", "tenant"), ("admin", "admin")])
def test_schemathesis_run_with_all_checks_passes(
    api_schema: schemathesis.BaseSchema, paths: str, key: str, tmp_path: Path
) -> None:
    """The CLI as a user runs it: every phase (examples, coverage, fuzzing, stateful) and
    every check, the tenant's operations with the tenant key, the admin API with its own."""
    secret = ADMIN_KEY if key == "admin" else KEYS["tenant"]
    select = (["--include-path-regex", "^/admin"] if paths == "admin"
              else ["--exclude-path-regex", "^/admin"])
    cli = Path(sys.executable).with_name("schemathesis")
    done = subprocess.run(
        [str(cli), "--no-color", "--config-file", str(Path(__file__).with_name(CONFIG)),
         "run", f"{URLS['gateway']}/openapi.json", "--checks", "all",
         "--max-examples", str(CLI_EXAMPLES), "--seed", "21", "--generation-deterministic",
         "--request-timeout", "30", "-H", f"Authorization: Bearer {secret}", *select],
        capture_output=True, text=True, timeout=CLI_TIMEOUT_S, check=False,
        cwd=tmp_path,  # its .schemathesis cache stays out of the checkout
    )
    assert done.returncode == 0, done.stdout[-12000:] + done.stderr[-2000:]
