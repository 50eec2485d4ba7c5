"""`gateway --help` and every usage error answer without loading the web stack, the
database layer or the classifiers: each command's module imports only what parsing its
arguments needs, and the rest when the command runs. Checked in a fresh interpreter."""

from __future__ import annotations

import subprocess
import sys

import pytest

from gateway.cli.main import COMMANDS

# What takes tenths of a second to import and no argument parser needs.
HEAVY = ("sqlalchemy", "alembic", "fastapi", "starlette", "uvicorn", "pydantic", "sklearn",
         "numpy", "httpx", "aiohttp", "redis", "hyperscan", "bpe_openai", "opentelemetry",
         "yaml")


def loaded_after(statement: str) -> set[str]:
    code = (f"import sys; {statement}; "
            f"print(' '.join(sorted({{m.split('.')[0] for m in sys.modules}})))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True)
    return set(done.stdout.split())


def test_the_command_table_loads_nothing_heavy() -> None:
    assert loaded_after("import gateway.cli.main").isdisjoint(HEAVY)


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_a_commands_module_loads_nothing_heavy(name: str) -> None:
    module, attribute, _ = COMMANDS[name]
    heavy = loaded_after(f"import {module}; getattr({module}, {attribute!r})") & set(HEAVY)
    assert heavy == set(), f"importing {module} loads {sorted(heavy)}"
