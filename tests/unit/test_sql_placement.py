"""Every SQL statement lives in a repository: outside gateway/db/ and modules named
*repository* / *repositories*, no module imports SQLAlchemy's query builders or executes SQL."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "gateway"

# Names `from sqlalchemy import ...` may bring in outside a repository: column types (the
# audit record fitting reads the schema's types) and the exception module. Every other
# lowercase name there (select, insert, text, func, and_, cast, ...) builds a query.
ALLOWED_FROM_SQLALCHEMY = {"exc"}
# Sub-packages only query building lives in (dialect inserts, expressions, the ORM).
BUILDER_MODULES = ("sqlalchemy.sql", "sqlalchemy.dialects", "sqlalchemy.orm",
                   "sqlalchemy.future")
EXECUTING = {"execute", "exec_driver_sql", "scalar", "scalars"}
# Not SQL: the budget store's Redis pipeline is executed with .execute().
ALLOWED_EXECUTE = {"budget/redis_pipeline.py"}


def outside_repositories() -> list[Path]:
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        relative = path.relative_to(PACKAGE)
        if relative.parts[0] in ("db", "migrations"):
            continue  # db/ is where SQL belongs; migrations/ is Alembic's, linked in
        if any("repositor" in part for part in relative.parts):
            continue
        found.append(path)
    return found


def sql_uses(source: str, relative: str) -> list[str]:
    """What the module (at `relative` in gateway/) does to build or run SQL, as `line: what`."""
    found: list[str] = []
    for node in ast.walk(ast.parse(source, relative)):
        if isinstance(node, ast.Import):
            found += [f"{node.lineno}: import {a.name}" for a in node.names
                      if a.name == "sqlalchemy" or a.name.startswith(BUILDER_MODULES)]
        elif isinstance(node, ast.ImportFrom) and node.module:
            if node.module.startswith(BUILDER_MODULES):
                found.append(f"{node.lineno}: from {node.module} import ...")
            elif node.module == "sqlalchemy":
                found += [f"{node.lineno}: from sqlalchemy import {a.name}" for a in node.names
                          if a.name[:1].islower() and a.name not in ALLOWED_FROM_SQLALCHEMY]
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
              and node.func.attr in EXECUTING and relative not in ALLOWED_EXECUTE):
            found.append(f"{node.lineno}: .{node.func.attr}(...)")
    return found


def test_no_module_outside_the_repositories_builds_or_runs_sql() -> None:
    offenders = {}
    for path in outside_repositories():
        relative = path.relative_to(PACKAGE).as_posix()
        if uses := sql_uses(path.read_text(encoding="utf-8"), relative):
            offenders[relative] = uses
    assert not offenders, f"SQL outside gateway/db/ and *repository* modules: {offenders}"


def test_the_scan_sees_a_query_built_outside_a_repository() -> None:
    source = ("from sqlalchemy import func, select\n"
              "from sqlalchemy.dialects import postgresql\n"
              "async def count(conn):\n"
              "    return await conn.execute(select(func.count()))\n")
    assert sql_uses(source, "reports/report.py") == [
        "1: from sqlalchemy import func", "1: from sqlalchemy import select",
        "2: from sqlalchemy.dialects import ...", "4: .execute(...)"]


def test_exceptions_column_types_and_the_engine_type_are_no_query() -> None:
    source = ("from sqlalchemy import JSON, String, exc\n"
              "from sqlalchemy.exc import SQLAlchemyError\n"
              "from sqlalchemy.ext.asyncio import AsyncEngine\n")
    assert sql_uses(source, "audit/records.py") == []


def test_the_redis_pipeline_is_no_sql() -> None:
    assert sql_uses("await pipe.execute()\n", "budget/redis_pipeline.py") == []
