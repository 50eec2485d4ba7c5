"""Files that ship inside the package: the demo policy, the example policies, the policy JSON
schema and the Alembic migrations, found with importlib.resources so an installed wheel works
from any directory.

In a checkout, `gateway/policies` and `gateway/migrations` are links to the top-level
`policies/` and `migrations/` folders (one copy of each file); a built wheel carries them as
real files.
"""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path

DEMO_POLICY_NAME = "default.yaml"


def _package_dir(name: str) -> Path:
    # Alembic and YAML loading need real paths; the package is always installed as files
    # (a wheel or a checkout), never imported from a zip.
    return Path(str(files("gateway").joinpath(name)))


def policies_dir() -> Path:
    return _package_dir("policies")


def demo_policy_path() -> Path:
    """The demo policy `gateway serve` runs when no policy is configured."""
    return policies_dir() / DEMO_POLICY_NAME


def policy_schema_path() -> Path:
    return policies_dir() / "schema.json"


def example_policies() -> list[Path]:
    return sorted((policies_dir() / "examples").glob("*.yaml"))


def migrations_path() -> Path:
    return _package_dir("migrations")
