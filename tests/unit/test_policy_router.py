"""`router:` per tenant and per model group: compiled into the policy (the tenant's first),
a directory without a router file refused with its line, and the files watched for reload."""

from __future__ import annotations

from pathlib import Path

import pytest

from gateway.policy.loader import PolicyError, parse_policy
from gateway.policy.store import key_files

POLICY = """\
version: 1
backends:
  - name: a
    provider: vllm
    base_url: http://127.0.0.1:9001/v1
    model: m
    context_window: 4096
models:
  auto: [a]
  tuned: {{backends: [a], router: {group}}}
tenants:
  acme: {{router: {tenant}}}
  globex: {{}}
"""


def routers(tmp_path: Path) -> tuple[Path, Path]:
    tenant, group = tmp_path / "acme", tmp_path / "group"
    for directory in (tenant, group):
        directory.mkdir()
        (directory / "router.json").write_text("{}", encoding="utf-8")
    return tenant, group


def test_the_tenants_router_comes_before_the_model_groups(tmp_path: Path) -> None:
    tenant, group = routers(tmp_path)
    policy = parse_policy(POLICY.format(tenant=tenant, group=group))
    assert policy.routers.choose("acme", "tuned") == tenant
    assert policy.routers.choose("acme", "auto") == tenant
    assert policy.routers.choose("globex", "tuned") == group
    assert policy.routers.choose("globex", "auto") is None
    assert policy.routers.directories() == {tenant, group}
    assert {tenant / "router.json", group / "router.json"} <= set(key_files(policy))


def test_a_router_directory_without_a_router_is_refused_with_its_line(tmp_path: Path) -> None:
    tenant, group = routers(tmp_path)
    (tenant / "router.json").unlink()
    with pytest.raises(PolicyError) as info:
        parse_policy(POLICY.format(tenant=tenant, group=group), "p.yaml")
    [problem] = info.value.problems
    assert problem.path == "tenants.acme.router" and problem.line == 12
    assert "gateway router fit" in problem.message


def test_a_policy_without_routers_names_none() -> None:
    policy = parse_policy(POLICY.replace("  tuned: {{backends: [a], router: {group}}}\n", "")
                          .replace("{{router: {tenant}}}", "{{}}").format())
    assert policy.routers.directories() == frozenset()
    assert policy.routers.choose("acme", "auto") is None
