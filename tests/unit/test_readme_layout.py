"""The README's Layout section matches the package: every top-level folder of gateway/ is
described there, and every folder it names in the name column exists."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PACKAGE = REPO / "gateway"


def layout_block() -> str:
    """The gateway/ tree drawn in the Layout section's first code block."""
    readme = REPO / "README.md"
    section = readme.read_text(encoding="utf-8").split("\n## Layout\n", 1)[1]
    section = section.split("\n## ", 1)[0]
    return section.split("```", 2)[1]


def package_folders() -> set[str]:
    return {p.name for p in PACKAGE.iterdir()
            if p.is_dir() and not p.name.startswith((".", "_"))}


def named_folders(block: str) -> set[str]:
    """The folders in the name column: lines that start (two spaces in) with `name/`, one
    or more of them ("classify/ policy/ budget/ ..." describes several at once)."""
    found: set[str] = set()
    for line in block.splitlines():
        match = re.match(r"  ((?:[a-z_]+/ ?)+)(?:\s|$)", line)
        if match:
            found |= {name.rstrip("/") for name in match.group(1).split()}
    return found


def test_every_top_level_folder_of_the_package_is_described_in_the_layout() -> None:
    missing = package_folders() - named_folders(layout_block())
    assert not missing, f"README's Layout does not describe gateway/{sorted(missing)}"


def test_every_folder_the_layout_names_exists() -> None:
    stale = named_folders(layout_block()) - package_folders()
    assert not stale, f"README's Layout names folders gateway/ does not have: {sorted(stale)}"


def test_the_layout_block_is_read() -> None:
    # Guards the two tests above against a parser that finds nothing and so passes vacuously.
    assert {"api", "routing", "offline", "capacity", "classify", "tenancy"} <= named_folders(
        layout_block())
