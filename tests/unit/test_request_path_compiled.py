"""Nothing on the request path looks a backend up by name or reads behaviour out of a string:
the policy, routing and budget modules that run per request are scanned for prefix tests on
messages, comparisons with the spellings the enums replaced, and lookups in `.backends`."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from enum import StrEnum
from pathlib import Path

import pytest

from gateway.budget.limits import LimitReason
from gateway.policy.runtime import PoolStrategy
from gateway.types import (
    AffinityKind,
    AuthScheme,
    BudgetState,
    Circuit,
    EntryPoint,
    RejectionKind,
    Zone,
)

GATEWAY = Path(__file__).resolve().parents[2] / "gateway"
PACKAGES = ("policy", "routing", "budget")
# Read the YAML or serve operators, never a request: validating and compiling the policy
# (strings are what a spec holds), and the admin fleet view.
NOT_PER_REQUEST = {
    "policy/loader.py", "policy/schema.py", "policy/rule_schema.py", "policy/shadow_schema.py",
    "policy/sensitivity_schema.py", "policy/schema_check.py", "policy/validation.py",
    "policy/backend_kinds.py", "policy/suggestions.py", "policy/simulation.py",
    "policy/store.py", "routing/fleet_view.py",
}
# A model is what a client names: PolicySet.pool resolves it once per kind of request (the
# plan is cached by for_request), not per decision.
NAMED_BY_CLIENT = {("policy/runtime.py", "pool")}
VOCABULARIES: tuple[type[StrEnum], ...] = (
    PoolStrategy, BudgetState, LimitReason, RejectionKind, AffinityKind, AuthScheme, Circuit,
    Zone, EntryPoint,
)
SPELLINGS = frozenset(m.value for vocabulary in VOCABULARIES for m in vocabulary)


def _strings(node: ast.AST) -> Iterator[str]:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        yield node.value
    elif isinstance(node, ast.Tuple | ast.List | ast.Set):
        for item in node.elts:
            yield from _strings(item)
    elif isinstance(node, ast.IfExp):
        yield from _strings(node.body)
        yield from _strings(node.orelse)


def _name(node: ast.AST) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    return node.attr if isinstance(node, ast.Attribute) else None


def _policy_backends(node: ast.AST) -> bool:
    """`<policy>.backends`, not the fleet snapshot's: the fleet's live state is keyed by
    backend name (the scraper and the in-flight tracker write it so), the policy's are not
    to be looked up again once compiled."""
    if not isinstance(node, ast.Attribute) or node.attr != "backends":
        return False
    owner = node.value
    if isinstance(owner, ast.Call):  # fleet.snapshot().backends
        return _name(owner.func) != "snapshot"
    return _name(owner) not in ("fleet", "snapshot", "live")


class Finder(ast.NodeVisitor):
    """Collects (line, what) for each way of picking behaviour by a name or a string."""

    def __init__(self, module: str) -> None:
        self.module = module
        self.function: str | None = None
        self.found: list[tuple[int, str]] = []

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        if node.name.startswith(("compile_", "_compile")):
            return  # runs once, at load
        outer, self.function = self.function, node.name
        self.generic_visit(node)
        self.function = outer

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        if isinstance(func, ast.Attribute):
            if func.attr in ("startswith", "endswith"):
                self.found.append((node.lineno, f"{_name(func.value)}.{func.attr}()"))
            elif func.attr == "get" and _policy_backends(func.value):
                self._lookup(node.lineno)
        self.generic_visit(node)

    def visit_Subscript(self, node: ast.Subscript) -> None:
        if _policy_backends(node.value):
            self._lookup(node.lineno)
        self.generic_visit(node)

    def visit_Compare(self, node: ast.Compare) -> None:
        for side in (node.left, *node.comparators):
            for text in _strings(side):
                if text in SPELLINGS:
                    self.found.append((node.lineno, f"compared with {text!r}"))
        self.generic_visit(node)

    def _lookup(self, line: int) -> None:
        if (self.module, self.function) not in NAMED_BY_CLIENT:
            self.found.append((line, "backend looked up by name"))


def findings(module: str, source: str) -> list[tuple[int, str]]:
    finder = Finder(module)
    finder.visit(ast.parse(source))
    return sorted(finder.found, key=lambda found: found[0])  # by line, as found within one


def request_path_modules() -> list[str]:
    modules = [str(p.relative_to(GATEWAY)) for package in PACKAGES
               for p in sorted((GATEWAY / package).rglob("*.py"))]
    # What every dispatch runs to send a backend its key (the rest of providers/ parses wire
    # formats, whose strings are the data itself).
    modules.append("providers/http_pool.py")
    return [m for m in modules if m not in NOT_PER_REQUEST]


def test_the_scan_covers_the_decision_and_the_budget() -> None:
    modules = request_path_modules()
    for expected in ("policy/engine.py", "policy/rules.py", "policy/load_state.py",
                     "policy/capacity.py", "routing/budgeting.py", "routing/refusals.py",
                     "routing/shadow.py", "budget/redis_store.py", "budget/evaluation.py",
                     "providers/http_pool.py"):
        assert expected in modules


@pytest.mark.parametrize("module", request_path_modules())
def test_nothing_per_request_picks_behaviour_by_a_name_or_a_string(module: str) -> None:
    assert findings(module, (GATEWAY / module).read_text(encoding="utf-8")) == []


def test_the_scan_finds_what_the_compile_replaced() -> None:
    # How the decision read before: each of these must be reported.
    before = '''
def decide(policy, rule, rejected, strategy, over_soft_limit, admission, key, fleet):
    pool = tuple(policy.backends[n] for n in rule.backends)
    strong = policy.backends.get(rule.strong)
    state = fleet.backends.get(pool[0].name)  # the fleet's live state: keyed by name
    balanced = strategy != "priority"
    if ("soft_limit" if over_soft_limit else "ok") not in rule.budget:
        pass
    allowed = [r for r in rejected if not r.reason.startswith(("zone ", "not in rule"))]
    rate = admission.reason in ("rpm", "tpm", "concurrent")
    kind = "session" if key.startswith(b"s:") else "prefix"

def compile_rule(spec, backends):
    return tuple(backends[n] for n in spec.backends)  # at load: allowed
'''
    assert [what for _, what in findings("policy/engine.py", before)] == [
        "backend looked up by name", "backend looked up by name", "compared with 'priority'",
        "compared with 'soft_limit'", "compared with 'ok'", "reason.startswith()",
        "compared with 'rpm'", "compared with 'tpm'", "compared with 'concurrent'",
        "key.startswith()",
    ]
