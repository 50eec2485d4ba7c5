"""The Dockerfile: hadolint (pip-installed, pinned in the test extras) plus the rules this
image depends on that no generic linter knows: a multi-stage build whose runtime stage runs
as a numeric non-root user, probes /health, and carries every file the gateway reads at run
time (package data in the wheel, migrations and policies beside it)."""

from __future__ import annotations

import fnmatch
import re
import subprocess
import tomllib
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.deploy.conftest import ROOT, tool

DOCKERFILE = ROOT / "Dockerfile"


@dataclass(frozen=True)
class Instruction:
    keyword: str
    args: str


def parse(text: str) -> list[Instruction]:
    """Instructions with continuation lines joined and comments dropped."""
    instructions: list[Instruction] = []
    pending = ""
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):  # also inside a continued instruction
            continue
        if stripped.endswith("\\"):
            pending += stripped[:-1].rstrip() + " "
            continue
        keyword, _, args = (pending + stripped).partition(" ")
        instructions.append(Instruction(keyword.upper(), args.strip()))
        pending = ""
    return instructions


@pytest.fixture(scope="module")
def instructions() -> list[Instruction]:
    return parse(DOCKERFILE.read_text())


def stages(instructions: list[Instruction]) -> list[list[Instruction]]:
    found: list[list[Instruction]] = []
    for instruction in instructions:
        if instruction.keyword == "FROM":
            found.append([])
        if found:
            found[-1].append(instruction)
    return found


def build_args(instructions: list[Instruction]) -> dict[str, str]:
    """Global ARGs (before the first FROM) with their defaults."""
    args: dict[str, str] = {}
    for instruction in instructions:
        if instruction.keyword == "FROM":
            break
        if instruction.keyword == "ARG":
            name, _, default = instruction.args.partition("=")
            args[name] = default
    return args


def test_hadolint_passes() -> None:
    result = subprocess.run(
        [tool("hadolint"), "--no-color", "--failure-threshold", "info", str(DOCKERFILE)],
        capture_output=True, text=True, timeout=60, check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_parse_joins_continuations_and_skips_comments() -> None:
    parsed = parse("# top\nFROM a:1 AS b\nRUN x \\\n  # inside\n  && y\nUSER 1\n")
    assert parsed == [Instruction("FROM", "a:1 AS b"), Instruction("RUN", "x && y"),
                      Instruction("USER", "1")]


def test_multi_stage_build_from_pinned_bases(instructions: list[Instruction]) -> None:
    all_stages = stages(instructions)
    assert len(all_stages) >= 2
    args = build_args(instructions)
    for stage in all_stages:
        image = stage[0].args.split()[0]
        image = re.sub(r"\$\{(\w+)\}", lambda m: args[m.group(1)], image)
        tag = image.rsplit("/", 1)[-1].partition(":")[2]
        # a patch-level tag on a named Debian release: rebuilds pick up no surprise upgrade
        assert re.fullmatch(r"\d+\.\d+\.\d+-slim-\w+", tag), image
    runtime = all_stages[-1]
    assert any(i.keyword == "COPY" and i.args.startswith("--from=") for i in runtime)


def test_runtime_runs_as_a_numeric_non_root_user(instructions: list[Instruction]) -> None:
    runtime = stages(instructions)[-1]
    users = [i for i in runtime if i.keyword == "USER"]
    assert users, "the runtime stage sets no USER"
    uid = users[-1].args.split(":")[0]
    assert uid.isdigit() and int(uid) != 0
    position = runtime.index(users[-1])
    later = [i.keyword for i in runtime[position:]]
    assert "RUN" not in later  # everything after USER runs unprivileged; nothing re-escalates
    assert later.index("ENTRYPOINT") > 0 and later.index("CMD") > 0


def test_writable_directories_belong_to_the_runtime_user(
    instructions: list[Instruction],
) -> None:
    runtime = stages(instructions)[-1]
    uid = [i for i in runtime if i.keyword == "USER"][-1].args.split(":")[0]
    env = " ".join(i.args for i in runtime if i.keyword == "ENV")
    spool = re.search(r"GATEWAY_AUDIT_SPOOL_DIR=(\S+)", env)
    assert spool, "the image sets no audit spool directory"
    owned = " ".join(i.args for i in runtime if i.keyword in {"RUN", "COPY"})
    for directory in (spool.group(1), "/app/.gateway"):
        assert re.search(rf"-o {uid} .*{re.escape(directory)}|--chown={uid}\S* .*"
                         rf"{re.escape(directory)}", owned), directory


def test_healthcheck_probes_health(instructions: list[Instruction]) -> None:
    runtime = stages(instructions)[-1]
    checks = [i for i in runtime if i.keyword == "HEALTHCHECK"]
    assert len(checks) == 1
    assert "/health" in checks[0].args and "--timeout=" in checks[0].args
    exposed = [i.args for i in runtime if i.keyword == "EXPOSE"]
    assert exposed and exposed[0] in checks[0].args


def test_no_remote_add_and_apt_lists_cleaned(instructions: list[Instruction]) -> None:
    for instruction in instructions:
        assert instruction.keyword != "ADD", "use COPY (ADD fetches URLs, unpacks archives)"
        if instruction.keyword == "RUN" and "apt-get install" in instruction.args:
            assert "rm -rf /var/lib/apt/lists" in instruction.args
            assert "--no-install-recommends" in instruction.args


def dockerignored(path: str) -> bool:
    patterns = [line.strip() for line in (ROOT / ".dockerignore").read_text().splitlines()
                if line.strip() and not line.startswith("#")]
    return any(fnmatch.fnmatch(path, p) or fnmatch.fnmatch(path, p.removeprefix("**/"))
               for p in patterns)


def test_runtime_carries_what_the_gateway_reads(instructions: list[Instruction]) -> None:
    copied: list[str] = []
    for instruction in instructions:
        if instruction.keyword == "COPY" and "--from=" not in instruction.args:
            sources = [a for a in instruction.args.split() if not a.startswith("--")][:-1]
            copied += sources
    for source in copied:
        assert (ROOT / source).exists(), f"COPY {source}: not in the repository"
        assert not dockerignored(source), f"COPY {source}: excluded by .dockerignore"
    # `alembic.ini` and the migrations `gateway migrate` runs; the policies the image serves
    for needed in ("pyproject.toml", "gateway", "migrations", "policies", "alembic.ini"):
        assert needed in copied, needed


def test_package_data_covers_every_non_python_file() -> None:
    """The image installs a wheel: a file that is not package data is missing at run time."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    package_data: dict[str, list[str]] = config["tool"]["setuptools"]["package-data"]
    package_root = ROOT / "gateway"
    for path in package_root.rglob("*"):
        if not path.is_file() or path.suffix in {".py", ".pyc"} or "__pycache__" in path.parts:
            continue
        covered = False
        for package, globs in package_data.items():
            base = ROOT.joinpath(*package.split("."))
            if base in path.parents:
                relative = path.relative_to(base).as_posix()
                covered = covered or any(fnmatch.fnmatch(relative, g) for g in globs)
        assert covered, f"{path.relative_to(ROOT)} is not package data in pyproject.toml"


def test_default_command_serves_on_the_exposed_port(instructions: list[Instruction]) -> None:
    runtime = stages(instructions)[-1]
    entrypoint = next(i.args for i in runtime if i.keyword == "ENTRYPOINT")
    cmd = next(i.args for i in runtime if i.keyword == "CMD")
    assert entrypoint == '["gateway"]'
    assert '"serve"' in cmd and '"0.0.0.0"' in cmd and '"8080"' in cmd


def test_dockerfile_names_no_secret() -> None:
    text = DOCKERFILE.read_text()
    assert not re.search(r"(KEY|PASSWORD|SECRET|TOKEN|PEPPER)\w*=", text)
    assert Path(ROOT / ".dockerignore").read_text().count(".env") >= 1
