"""Every benchmark script still imports: a benchmark that rots when the package moves on is
found here, not on the day someone needs its numbers."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


@pytest.mark.parametrize("name", sorted(p.stem for p in BENCHMARKS.glob("*.py")))
def test_the_benchmark_imports(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # Scripts run from the checkout import their siblings both ways (`benchmarks.x`, `x`).
    monkeypatch.setattr(sys, "path", [str(BENCHMARKS.parent), str(BENCHMARKS), *sys.path])
    module = importlib.import_module(f"benchmarks.{name}")
    assert module.__doc__, f"benchmarks/{name}.py says in its docstring what it measures"
