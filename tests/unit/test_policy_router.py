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


def test_explain_scores_with_the_router_the_request_path_would_use(tmp_path: Path) -> None:
    import asyncio
    import json

    from gateway.classify.complexity_features import FEATURIZER_VERSION
    from gateway.classify.router_model import ROUTER_FORMAT
    from gateway.classify.standard import standard_classifier
    from gateway.routing.explain import explain
    from gateway.types import Endpoint, RouteRequest, TenantContext
    from tests.support.routers import shipped_encoder

    tenant, group = routers(tmp_path)
    for directory, log_odds in ((tenant, 9.0), (group, -9.0)):
        (directory / "router.json").write_text(json.dumps({
            "format": ROUTER_FORMAT, "featurizer_version": FEATURIZER_VERSION,
            "intercept": log_odds, "dense": {}, "ngrams": {}, "thresholds": [0.4, 0.6],
            "encoder": shipped_encoder()}))
    policy = parse_policy(POLICY.format(tenant=tenant, group=group))
    classifier = standard_classifier()

    def complexity(name: str, model: str) -> dict[str, object]:
        request = RouteRequest("r", Endpoint.CHAT, model, {
            "model": model, "messages": [{"role": "user", "content": "What is 2 + 2?"}]})
        result = asyncio.run(explain(classifier, policy, TenantContext(name, name, "-"),
                                     request))
        return result["profile"]["complexity"]  # type: ignore[no-any-return]

    assert complexity("acme", "auto")["class"] == "high"  # the tenant's router
    assert complexity("globex", "tuned")["class"] == "low"  # the model group's
    shipped = complexity("globex", "auto")  # neither: the shipped model
    assert 0.0 < float(shipped["p_strong"]) < 0.9  # type: ignore[arg-type]
