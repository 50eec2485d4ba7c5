import pytest

from gateway.errors import ModelNotFound, NoEligibleBackend, PermissionDenied
from gateway.policy.engine import decide
from gateway.policy.loader import PolicyError, parse_policy
from gateway.types import (
    BackendState,
    Circuit,
    Endpoint,
    FleetSnapshot,
    Profile,
    RouteRequest,
    TenantContext,
)

POLICY = """\
version: 1
backends:
  - name: a
    provider: vllm
    base_url: http://127.0.0.1:9001/v1
    model: m
    context_window: 4096
  - name: b
    provider: vllm
    base_url: http://127.0.0.1:9002/v1
    model: m
    context_window: 32768
models:
  auto: [a, b]
tenants:
  limited:
    models: [b]
"""
TENANT = TenantContext("t1", "acme", "k1")
OPEN = BackendState(circuit=Circuit.OPEN, consecutive_failures=3, retry_at_s=1e9)


def request(model: str = "auto") -> RouteRequest:
    return RouteRequest("r", Endpoint.CHAT, model, {"model": model})


def test_round_robin_over_healthy_members_with_the_rest_as_fallbacks():
    policy = parse_policy(POLICY)
    profile = Profile(100, 100)
    first = decide(request(), profile, TENANT, FleetSnapshot(), policy, rotation=0)
    second = decide(request(), profile, TENANT, FleetSnapshot(), policy, rotation=1)
    assert [b.name for b in first.candidates] == ["a", "b"]
    assert [b.name for b in second.candidates] == ["b", "a"]
    assert first.rule == "model-pool"


def test_priority_pools_keep_their_order():
    priority = "auto: {backends: [b, a], strategy: priority}"
    policy = parse_policy(POLICY.replace("auto: [a, b]", priority))
    for rotation in range(3):
        decision = decide(request(), Profile(1, None), TENANT, FleetSnapshot(), policy, rotation)
        assert [b.name for b in decision.candidates] == ["b", "a"]


def test_backend_names_are_models_too_and_unknown_models_are_404():
    policy = parse_policy(POLICY)
    decision = decide(request("b"), Profile(1, None), TENANT, FleetSnapshot(), policy)
    assert decision.primary.name == "b"
    with pytest.raises(ModelNotFound):
        decide(request("gpt-9"), Profile(1, None), TENANT, FleetSnapshot(), policy)


def test_context_window_rejections_are_explained():
    policy = parse_policy(POLICY)
    decision = decide(request(), Profile(4000, 500), TENANT, FleetSnapshot(), policy)
    assert decision.primary.name == "b" and decision.fallbacks == ()
    assert decision.rejected[0].backend == "a"
    assert "context_window 4096" in decision.rejected[0].reason
    with pytest.raises(NoEligibleBackend) as info:
        decide(request(), Profile(40000, None), TENANT, FleetSnapshot(), policy)
    assert info.value.status == 400 and info.value.code == "context_length_exceeded"


def test_unhealthy_backends_go_last_not_away():
    policy = parse_policy(POLICY)
    fleet = FleetSnapshot({"a": OPEN})
    decision = decide(request(), Profile(1, None), TENANT, fleet, policy, rotation=0)
    assert [b.name for b in decision.candidates] == ["b", "a"]
    assert any("circuit open" in r.reason for r in decision.rejected)
    all_sick = FleetSnapshot({n: OPEN for n in ("a", "b")})
    assert len(decide(request(), Profile(1, None), TENANT, all_sick, policy).candidates) == 2


def test_tenant_model_allow_list():
    policy = parse_policy(POLICY)
    limited = TenantContext("t2", "limited", "k2")
    with pytest.raises(PermissionDenied):
        decide(request("auto"), Profile(1, None), limited, FleetSnapshot(), policy)
    assert decide(request("b"), Profile(1, None), limited, FleetSnapshot(), policy)


def test_errors_name_file_line_and_key_path_and_all_are_reported():
    bad = POLICY.replace("    context_window: 4096\n",
                         "    context_window: lots\n    colour: red\n")
    with pytest.raises(PolicyError) as info:
        parse_policy(bad, "p.yaml")
    problems = {p.path: p for p in info.value.problems}
    assert problems["backends[0].context_window"].line == 7
    assert problems["backends[0].colour"].line == 8
    assert all(p.file == "p.yaml" for p in problems.values())
    assert str(problems["backends[0].colour"]).startswith("p.yaml:8: backends[0].colour:")


def test_undefined_backend_references_and_bad_yaml():
    with pytest.raises(PolicyError, match=r"undefined backend .c."):
        parse_policy(POLICY.replace("auto: [a, b]", "auto: [a, c]"))
    with pytest.raises(PolicyError, match="invalid YAML") as info:
        parse_policy("version: 1\nbackends: [\n")
    assert info.value.problems[0].line is not None


def test_secrets_never_in_urls():
    with pytest.raises(PolicyError, match="credentials"):
        parse_policy(POLICY.replace("http://127.0.0.1:9001", "http://u:p@127.0.0.1:9001"))


def test_shipped_policies_validate_and_schema_json_is_current():
    import json
    from pathlib import Path

    from gateway.policy.loader import load_policy
    from gateway.policy.schema import PolicyFile

    root = Path(__file__).resolve().parents[2] / "policies"
    for path in [*root.glob("*.yaml"), *root.glob("examples/*.yaml")]:
        load_policy(path)
    shipped = json.loads((root / "schema.json").read_text())
    regenerate = "run: gateway policy schema -o policies/schema.json"
    assert shipped == PolicyFile.model_json_schema(), regenerate


def test_every_package_directory_is_a_regular_package():
    # setuptools' find_packages skips directories without __init__.py: the wheel (and so
    # the container image) would silently miss them.
    from pathlib import Path

    root = Path(__file__).resolve().parents[2] / "gateway"
    missing = [str(d) for d in root.rglob("*") if d.is_dir() and d.name != "__pycache__"
               and any(d.glob("*.py")) and not (d / "__init__.py").exists()]
    assert missing == []


def test_baseline_is_a_backend_or_a_price_and_defaults_to_the_dearest_api() -> None:
    base = """
version: 1
backends:
  - {name: home, provider: vllm, base_url: "http://127.0.0.1:9/v1", model: m,
     context_window: 4096, gpu: {type: L4, hourly_usd: 0.8}}
  - {name: mini, provider: openai, base_url: "https://api.example.com/v1", model: mini,
     zone: external, context_window: 4096, price_per_mtok_usd: {input: 0.15, output: 0.6}}
  - {name: big, provider: openai, base_url: "https://api.example.com/v1", model: big,
     zone: external, context_window: 4096, price_per_mtok_usd: {input: 2.5, output: 10}}
rules:
  - {name: home, when: {sensitivity: [pii, secret, phi]}, allow_zones: [self_hosted]}
"""
    default = parse_policy(base).baseline
    assert default is not None and default.name == "big" and default.price.output_usd == 10
    named = parse_policy(base + "baseline: mini\n").baseline
    assert named is not None and named.name == "mini"
    priced = parse_policy(
        base + "baseline: {name: o3, price_per_mtok_usd: {input: 2, output: 8}}\n"
    ).baseline
    assert priced is not None and priced.name == "o3" and priced.price.input_usd == 2
    with pytest.raises(PolicyError, match="unknown backend 'nope'"):
        parse_policy(base + "baseline: nope\n")


ONE_BACKEND = ("version: 1\nbackends:\n  - {name: a, provider: vllm, base_url: 'http://a/v1', "
               "model: m, context_window: 4096}\n")


def test_min_confidence_is_the_policys_unless_the_tenant_sets_its_own() -> None:
    policy = parse_policy(ONE_BACKEND + "sensitivity: {min_confidence: 0.7}\n"
                          "tenants:\n  clinic: {min_confidence: 0}\n  acme: {}\n")
    assert policy.min_confidence("acme") == 0.7 and policy.min_confidence("other") == 0.7
    assert policy.min_confidence("clinic") == 0.0
    assert parse_policy(ONE_BACKEND).min_confidence("x") == 0.0
    with pytest.raises(PolicyError, match="min_confidence"):
        parse_policy(ONE_BACKEND + "sensitivity: {min_confidence: 1.5}\n")
