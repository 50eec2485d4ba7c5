"""The deployment files (Dockerfile, docker-compose.yml, deploy/), checked statically: no
container engine runs where the tests do. The dashboard test reuses the e2e gateway."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.conftest import REQUIRE
from tests.e2e.conftest import gateway  # noqa: F401  (the real gateway the dashboard test scrapes)

ROOT = Path(__file__).resolve().parents[2]


def load_yaml(path: Path) -> Any:
    with path.open() as f:
        return yaml.safe_load(f)


@pytest.fixture(scope="session")
def compose() -> dict[str, Any]:
    data = load_yaml(ROOT / "docker-compose.yml")
    assert isinstance(data, dict)
    return data


def tool(name: str) -> str:
    """An installed linter or validator: the venv's own first (pip-installed), then PATH.
    scripts/test.sh installs them, so CI fails rather than skips without one."""
    beside = Path(sys.executable).parent / name
    found = str(beside) if beside.exists() else shutil.which(name)
    if found is None:
        if REQUIRE:
            pytest.fail(f"{name} is not installed but GATEWAY_TEST_REQUIRE_SERVICES=1")
        pytest.skip(f"{name} is not installed (scripts/test.sh installs it)")
    return found
