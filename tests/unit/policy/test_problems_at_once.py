"""A policy's problems arrive in one pass (schema, references, leak paths, simulator limits),
each with file:line, and a mistyped key or name gets the closest valid one. Property: a valid
shipped policy with one schema key misspelt gives exactly one problem, naming that key and
suggesting the right one."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from gateway.policy.loader import PolicyError, parse_policy
from gateway.policy.schema_check import valid_keys
from gateway.policy.suggestions import closest, edit_distance

POLICIES = Path(__file__).parents[3] / "policies"
SHIPPED = {p.name: p.read_text(encoding="utf-8")
           for p in [POLICIES / "default.yaml", *sorted((POLICIES / "examples").glob("*.yaml"))]}

BROKEN = """\
version: 1
sensitivty: {}
backends:
  - name: llama-8b
    provider: vllm
    base_url: http://127.0.0.1:8101/v1
    model: m
    context_window: 8192
    zon: self_hosted
    simulate: {num_gpu_blocks: 16}
  - name: gpt
    provider: openai
    base_url: https://api.openai.com/v1
    model: gpt-4o
    context_window: 128000
    zone: external
models:
  auto: [llama-8b, gpt]
  pool: {backendz: [llama-8b]}
rules:
  - name: everything
    prefer: [llama8b]
"""


def problems(text: str) -> list[tuple[int | None, str, str]]:
    with pytest.raises(PolicyError) as info:
        parse_policy(text, "p.yaml")
    return [(p.line, p.path, p.message) for p in info.value.problems]


def test_every_kind_of_problem_is_reported_in_one_pass_with_its_line() -> None:
    found = problems(BROKEN)
    by_path = {path: (line, message) for line, path, message in found}
    assert by_path["sensitivty"] == (2, "unknown key 'sensitivty' (did you mean "
                                        "'sensitivity'?)")
    assert by_path["backends[0].zon"] == (9, "unknown key 'zon' (did you mean 'zone'?)")
    # A mapping with a mistyped key: that key, not also "not a valid list".
    assert by_path["models.pool.backendz"] == (
        19, "unknown key 'backendz' (did you mean 'backends'?)")
    assert by_path["rules[0].prefer[0]"] == (
        22, "undefined backend 'llama8b' (did you mean 'llama-8b'?)")
    leaks = [m for _, p, m in found if p == "rules[0]"]
    assert any("pii findings can reach gpt outside the self_hosted zone" in m for m in leaks)
    assert by_path["backends[0].simulate.num_gpu_blocks"][0] == 10  # the simulator's limit
    assert "cannot hold one request" in by_path["backends[0].simulate.num_gpu_blocks"][1]
    assert len(found) == len(by_path) + len(leaks) - 1  # nothing else, nothing twice


def test_an_unknown_key_with_nothing_close_lists_what_is_valid_there() -> None:
    text = SHIPPED["default.yaml"].replace("version: 1\n", "version: 1\nxyzzy: 1\n", 1)
    [(_, path, message)] = problems(text)
    assert path == "xyzzy" and message.startswith("unknown key 'xyzzy'; valid here: backends, ")


def test_unknown_names_get_the_closest_valid_one() -> None:
    text = SHIPPED["default.yaml"].replace("baseline: gpt-4o", "baseline: gpt4o")
    assert ("baseline", "unknown backend 'gpt4o' (did you mean 'gpt-4o'?)") in [
        (path, message) for _, path, message in problems(text)]


@pytest.mark.parametrize(("typo", "choices", "meant"), [
    ("backend", ["backends", "models", "rules"], "backends"),
    ("rulse", ["rules", "models"], "rules"),  # a swap of neighbours is one edit
    ("llama8b", ["llama-8b", "qwen-32b"], "llama-8b"),
    ("zebra", ["backends", "models"], None),  # nothing close: no guess
    ("rpm", ["rpm"], None),  # the name itself is no suggestion
])
def test_closest(typo: str, choices: list[str], meant: str | None) -> None:
    assert closest(typo, choices) == meant


def test_edit_distance() -> None:
    assert edit_distance("zone", "zone") == 0
    assert edit_distance("zone", "zoen") == 1
    assert edit_distance("zone", "zon") == 1
    assert edit_distance("backends", "bakcneds") == 2
    assert edit_distance("", "abc") == 3


def schema_keys(node: Any, here: tuple[Any, ...] = ()) -> list[tuple[tuple[Any, ...], str]]:
    """Every (mapping path, key) where the key is a schema field (not a name the user chose,
    such as a tenant's or a model's)."""
    found = []
    if isinstance(node, dict):
        named_by_schema = valid_keys(here, node)
        for key, child in node.items():
            if key in named_by_schema:
                found.append((here, key))
            found += schema_keys(child, (*here, key))
    elif isinstance(node, list):
        for i, child in enumerate(node):
            found += schema_keys(child, (*here, i))
    return found


@st.composite
def one_edit(draw: st.DrawFn, word: str) -> str:
    i = draw(st.integers(0, len(word) - 1))
    letter = draw(st.sampled_from("abcdefghijklmnopqrstuvwxyz_"))
    kind = draw(st.sampled_from(["delete", "swap", "replace", "insert"]))
    if kind == "delete":
        return word[:i] + word[i + 1:]
    if kind == "swap" and i < len(word) - 1:
        return word[:i] + word[i + 1] + word[i] + word[i + 2:]
    if kind == "replace":
        return word[:i] + letter + word[i + 1:]
    return word[:i] + letter + word[i:]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_one_misspelt_key_gives_exactly_one_problem_naming_the_key_meant(
    data: st.DataObject,
) -> None:
    document = yaml.safe_load(SHIPPED[data.draw(st.sampled_from(sorted(SHIPPED)))])
    where, key = data.draw(st.sampled_from([
        (path, key) for path, key in schema_keys(document) if len(key) >= 4]))
    typo = data.draw(one_edit(key))
    parent = document
    for step in where:
        parent = parent[step]
    # Every key valid here, whatever the provider: a typo that spells another key is no typo.
    valid = valid_keys(where, {k: v for k, v in parent.items() if k != "provider"})
    assume(typo not in valid and typo not in parent)
    # The key meant is the one valid key this close: the suggestion is then unambiguous.
    assume(all(edit_distance(typo, other) > 2 for other in valid if other != key))
    renamed = {(typo if k == key else k): v for k, v in parent.items()}
    parent.clear()
    parent.update(renamed)
    text = yaml.safe_dump(document, sort_keys=False, default_flow_style=False)
    with pytest.raises(PolicyError) as info:
        parse_policy(text, "p.yaml")
    [problem] = info.value.problems
    assert problem.message == f"unknown key {typo!r} (did you mean {key!r}?)"
    assert problem.path.endswith(typo)
    assert problem.line is not None
    assert text.splitlines()[problem.line - 1].lstrip(" -").startswith(f"{typo}:")


def test_a_typo_inside_a_mistyped_key_is_found_in_the_same_pass() -> None:
    text = (SHIPPED["default.yaml"].replace("\nbackends:", "\nbackend:", 1)
            .replace("    zone: external", "    zon: external", 1))
    found = problems(text)
    assert [(path, message) for _, path, message in found] == [
        ("backend", "unknown key 'backend' (did you mean 'backends'?)"),
        ("backend[2].zon", "unknown key 'zon' (did you mean 'zone'?)"),
    ]
    lines = text.splitlines()
    assert [lines[line - 1].strip(" -").split(":")[0] for line, _, _ in found] == [
        "backend", "zon"]
