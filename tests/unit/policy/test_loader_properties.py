"""Property tests for the policy loader: any text, and any mutation of the shipped policies,
compiles to a PolicySet or is refused with problems that name the file, a line and a key."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gateway.policy.loader import PolicyError, PolicySet, parse_policy

POLICIES = Path(__file__).parents[3] / "policies"
SHIPPED = {p.name: p.read_text(encoding="utf-8")
           for p in [POLICIES / "default.yaml", *sorted((POLICIES / "examples").glob("*.yaml"))]}
SOURCE = "policies/mutated.yaml"

scalars = (st.none() | st.booleans() | st.integers(-(10**6), 10**6)
           | st.floats(allow_nan=False, allow_infinity=False, width=32)
           | st.text(alphabet="abcxyz-_ 0123456789", max_size=10))
values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=3)
                      | st.dictionaries(st.text(alphabet="abcxyz_", max_size=6), inner,
                                        max_size=3), max_leaves=6)


def check_outcome(text: str) -> None:
    try:
        policy = parse_policy(text, SOURCE)
    except PolicyError as exc:
        lines = text.count("\n") + 2
        assert exc.problems
        for problem in exc.problems:
            assert problem.file == SOURCE and problem.message
            assert problem.line is None or 1 <= problem.line <= lines
            assert str(problem).startswith(SOURCE)
        return
    assert isinstance(policy, PolicySet) and policy.source == SOURCE


def paths(node: Any, here: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every key or index path inside a loaded YAML document."""
    found = [here] if here else []
    if isinstance(node, dict):
        for key, child in node.items():
            found += paths(child, (*here, key))
    elif isinstance(node, list):
        for i, child in enumerate(node):
            found += paths(child, (*here, i))
    return found


@st.composite
def mutated_policies(draw: st.DrawFn) -> str:
    document = yaml.safe_load(SHIPPED[draw(st.sampled_from(sorted(SHIPPED)))])
    for _ in range(draw(st.integers(1, 3))):
        path = draw(st.sampled_from(paths(document)))
        parent = document
        for key in path[:-1]:
            parent = parent[key]
        last = path[-1]
        action = draw(st.sampled_from(["replace", "delete", "add", "duplicate"]))
        if action == "replace":
            parent[last] = draw(values)
        elif action == "delete":
            del parent[last]
        elif action == "add" and isinstance(parent, dict):
            parent[draw(st.text(alphabet="abcxyz_", min_size=1, max_size=8))] = draw(values)
        elif action == "duplicate" and isinstance(parent, list):
            parent.append(parent[last])  # duplicate names, rules, members
        if not paths(document):
            break
    return yaml.safe_dump(document, sort_keys=False)


@pytest.mark.parametrize("name", sorted(SHIPPED))
def test_every_shipped_policy_compiles(name: str) -> None:
    assert isinstance(parse_policy(SHIPPED[name], name), PolicySet)


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated_policies())
def test_a_mutated_policy_compiles_or_names_where_it_is_wrong(text: str) -> None:
    check_outcome(text)


yamlish = st.text(alphabet=st.sampled_from(list("abc:-[]{},'\"&*!|>#% \n\t0123."))
                  | st.characters(), max_size=80)


@settings(max_examples=300, deadline=None)
@given(yamlish | st.sampled_from(list(SHIPPED.values())).flatmap(
    lambda text: st.tuples(st.integers(0, len(text)), st.integers(0, len(text)), yamlish).map(
        lambda cut: text[:min(cut[:2])] + cut[2] + text[max(cut[:2]):])))
def test_any_text_compiles_or_names_where_it_is_wrong(text: str) -> None:
    check_outcome(text)


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(sorted(SHIPPED)), st.data(),
       st.text(alphabet="abcxyz_", min_size=1, max_size=8).map(lambda k: "zz_" + k))
def test_an_unknown_key_is_named_with_its_line(name: str, data: st.DataObject, key: str) -> None:
    document = yaml.safe_load(SHIPPED[name])
    index = data.draw(st.integers(0, len(document["backends"]) - 1))
    document["backends"][index][key] = 1
    text = yaml.safe_dump(document, sort_keys=False)
    with pytest.raises(PolicyError) as raised:
        parse_policy(text, SOURCE)
    line = next(n for n, row in enumerate(text.splitlines(), 1) if f"{key}: 1" in row)
    assert [(p.path, p.line) for p in raised.value.problems] == [
        (f"backends[{index}].{key}", line)]
