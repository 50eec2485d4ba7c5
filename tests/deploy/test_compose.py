"""docker-compose.yml: valid for Compose (Debian's docker-compose checks it against the
compose-spec schema without a daemon), and shaped as the deployment needs it: a one-shot
migration the gateway waits for, health checks, secrets only from the environment, and a
policy whose backends are the stack's own services."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
import yaml

from gateway.policy.loader import load_policy
from tests.deploy.conftest import ROOT, load_yaml, tool

PROFILES = {"otel-collector": ["otel"], "prometheus": ["monitoring"], "grafana": ["monitoring"]}
SECRET_NAME = re.compile(r"KEY|PASSWORD|SECRET|TOKEN|PEPPER", re.IGNORECASE)
# "${NAME}", "${NAME:?message}", "${NAME:-default}" as the whole value
REFERENCE = re.compile(r"^\$\{(?P<name>[A-Z0-9_]+)(?:(?P<op>:?[?-])(?P<arg>[^}]*))?\}$")
# The one secret with a literal default: the local stack's Postgres password (Postgres
# publishes no port; see the comment at the top of docker-compose.yml).
DEV_DEFAULTS = {"POSTGRES_PASSWORD"}


def run_compose(
    *args: str, admin_key: str | None = "test-admin-key", metrics_key: str | None = None
) -> subprocess.CompletedProcess[str]:
    # the stack's own variables only as each test sets them (not the test run's GATEWAY_*)
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("GATEWAY_", "POSTGRES_", "COMPOSE_", "OTEL_"))}
    if admin_key is not None:
        env["GATEWAY_ADMIN_KEY"] = admin_key
    if metrics_key is not None:
        env["GATEWAY_METRICS_KEY"] = metrics_key
    return subprocess.run(
        [tool("docker-compose"), "--project-directory", str(ROOT),
         "-f", str(ROOT / "docker-compose.yml"), *args],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=60, check=False,
    )


@pytest.mark.parametrize("profiles", [[], ["otel", "monitoring"]])
def test_compose_config_is_valid(profiles: list[str]) -> None:
    flags = [arg for profile in profiles for arg in ("--profile", profile)]
    result = run_compose(*flags, "config", "-q")
    assert result.returncode == 0, result.stderr


def test_compose_refuses_to_start_without_the_admin_key() -> None:
    result = run_compose("config", "-q", admin_key=None)
    assert result.returncode != 0
    assert "GATEWAY_ADMIN_KEY" in result.stderr


def test_compose_resolves_the_gateway_environment() -> None:
    result = run_compose("config", admin_key="resolved-key")
    assert result.returncode == 0, result.stderr
    resolved = yaml.safe_load(result.stdout)["services"]["gateway"]["environment"]
    assert resolved["GATEWAY_ADMIN_KEY"] == "resolved-key"
    assert resolved["GATEWAY_DATABASE_URL"].startswith("postgresql+asyncpg://gateway:")
    assert not resolved["GATEWAY_METRICS_KEY"]  # optional: unset, only the admin key reads


def test_the_metrics_key_reaches_the_gateway_from_the_environment() -> None:
    result = run_compose("--profile", "monitoring", "config", metrics_key="scrape-key")
    assert result.returncode == 0, result.stderr
    resolved = yaml.safe_load(result.stdout)
    assert resolved["services"]["gateway"]["environment"]["GATEWAY_METRICS_KEY"] == "scrape-key"
    assert "scrape-key" not in yaml.safe_dump(resolved["services"]["prometheus"])


def services(compose: dict[str, Any]) -> dict[str, dict[str, Any]]:
    found = compose["services"]
    assert isinstance(found, dict)
    return found


def depends_on(service: dict[str, Any]) -> dict[str, str]:
    deps = service.get("depends_on", {})
    if isinstance(deps, list):
        return dict.fromkeys(deps, "service_started")
    return {name: spec.get("condition", "service_started") for name, spec in deps.items()}


def environment(service: dict[str, Any]) -> dict[str, str]:
    env = service.get("environment", {})
    if isinstance(env, list):
        return dict(item.split("=", 1) if "=" in item else (item, "") for item in env)
    return {k: "" if v is None else str(v) for k, v in env.items()}


def test_the_stack_has_every_part(compose: dict[str, Any]) -> None:
    assert {"gateway", "migrate", "postgres", "redis", "vllm-sim-a", "vllm-sim-b",
            "otel-collector", "prometheus", "grafana"} <= set(services(compose))


def test_every_dependency_exists_and_waits_on_a_known_condition(
    compose: dict[str, Any],
) -> None:
    all_services = services(compose)
    for name, service in all_services.items():
        for target, condition in depends_on(service).items():
            assert target in all_services, f"{name} depends on missing {target}"
            assert condition in {"service_started", "service_healthy",
                                 "service_completed_successfully"}
            if condition == "service_healthy":
                assert has_healthcheck(compose, all_services[target]), (name, target)
            # a service that always runs must not wait for one behind a profile
            if "profiles" not in service:
                assert "profiles" not in all_services[target], (name, target)


def test_migrate_is_one_shot_and_gates_the_gateway(compose: dict[str, Any]) -> None:
    migrate = services(compose)["migrate"]
    assert migrate["command"] == ["migrate"]
    assert migrate.get("restart", "no") == "no"
    assert "ports" not in migrate
    assert depends_on(migrate) == {"postgres": "service_healthy"}
    gateway = services(compose)["gateway"]
    assert depends_on(gateway)["migrate"] == "service_completed_successfully"
    # the same image and settings: migrations and the code that reads them always match
    assert migrate["image"] == gateway["image"] and migrate["build"] == gateway["build"]
    assert environment(migrate)["GATEWAY_DATABASE_URL"] == (
        environment(gateway)["GATEWAY_DATABASE_URL"])


def has_healthcheck(compose: dict[str, Any], service: dict[str, Any]) -> bool:
    check = service.get("healthcheck")
    if check is not None:
        return not check.get("disable", False) and bool(check.get("test"))
    # built from our Dockerfile, whose HEALTHCHECK probes the gateway port
    return "build" in service and "HEALTHCHECK" in (ROOT / "Dockerfile").read_text()


@pytest.mark.parametrize("name", ["postgres", "redis", "gateway", "vllm-sim-a", "vllm-sim-b"])
def test_health_checks(compose: dict[str, Any], name: str) -> None:
    assert has_healthcheck(compose, services(compose)[name])


def test_secrets_come_only_from_the_environment(compose: dict[str, Any]) -> None:
    for name, service in services(compose).items():
        for key, value in environment(service).items():
            if SECRET_NAME.search(key):
                ref = REFERENCE.match(value)
                assert ref, f"{name}.{key} must be ${{VARIABLE}}, not a literal"
                if ref["op"] and ref["op"].endswith("-") and ref["arg"]:
                    assert ref["name"] in DEV_DEFAULTS, f"{name}.{key} has a literal default"
            for user_info in re.findall(r"://([^/@\s]+)@", value):
                password = user_info.partition(":")[2]
                assert not password or REFERENCE.match(password), (
                    f"{name}.{key}: the password in the URL must be a ${{VARIABLE}}")
    assert environment(services(compose)["gateway"])["GATEWAY_ADMIN_KEY"].startswith(
        "${GATEWAY_ADMIN_KEY:?")
    for name, service in services(compose).items():
        build = service.get("build")
        # build arguments end up in the image's history: never a place for a secret
        assert not isinstance(build, dict) or "args" not in build, name


def test_databases_publish_no_port(compose: dict[str, Any]) -> None:
    # the reason a local default Postgres password is acceptable
    for name in ("postgres", "redis"):
        assert "ports" not in services(compose)[name], name


def test_images_are_pinned(compose: dict[str, Any]) -> None:
    for name, service in services(compose).items():
        image = service["image"]
        tag = image.rsplit("/", 1)[-1].partition(":")[2]
        assert tag and tag != "latest", f"{name}: {image} has no pinned tag"


def test_optional_services_sit_behind_profiles(compose: dict[str, Any]) -> None:
    for name, service in services(compose).items():
        assert service.get("profiles") == PROFILES.get(name), name


def test_bind_mounts_exist(compose: dict[str, Any]) -> None:
    for name, service in services(compose).items():
        for volume in service.get("volumes", []):
            source = volume.split(":", 1)[0]
            if source.startswith("."):
                assert (ROOT / source).exists(), f"{name} mounts missing {source}"
            else:
                assert source in compose["volumes"], f"{name}: undeclared volume {source}"


def test_the_audit_spool_is_a_volume(compose: dict[str, Any]) -> None:
    gateway = services(compose)["gateway"]
    spool = environment(gateway)["GATEWAY_AUDIT_SPOOL_DIR"]
    targets = {v.split(":")[1] for v in gateway["volumes"]}
    assert spool in targets
    assert f"GATEWAY_AUDIT_SPOOL_DIR={spool}" in (ROOT / "Dockerfile").read_text()


def sim_flags(service: dict[str, Any]) -> dict[str, str]:
    command = service["command"]
    assert command[0] == "sim"
    return dict(zip(command[1::2], command[2::2], strict=True))


def test_the_policy_routes_to_the_stacks_own_backends(compose: dict[str, Any]) -> None:
    gateway = services(compose)["gateway"]
    path = environment(gateway)["GATEWAY_POLICY_PATH"]
    assert path.startswith("/app/policies/") and "./policies:/app/policies:ro" in gateway[
        "volumes"]
    policy = load_policy(ROOT / "policies" / Path(path).name)
    assert policy.backends
    for backend in policy.backends.values():
        url = urlsplit(backend.base_url)
        sim = services(compose)[url.hostname or ""]
        flags = sim_flags(sim)
        assert flags["--port"] == str(url.port) and flags["--model"] == backend.model
        assert url.hostname in depends_on(gateway)


def test_monitoring_configs_scrape_the_stack(compose: dict[str, Any]) -> None:
    names = set(services(compose))
    prometheus = load_yaml(ROOT / "deploy" / "prometheus.yml")
    collector = load_yaml(ROOT / "deploy" / "otel-collector.yaml")
    scrape_configs = (prometheus["scrape_configs"]
                      + collector["receivers"]["prometheus"]["config"]["scrape_configs"])
    for job in scrape_configs:
        for static in job["static_configs"]:
            for target in static["targets"]:
                assert target.split(":")[0] in names, target
    for pipeline in collector["service"]["pipelines"].values():
        for kind in ("receivers", "processors", "exporters"):
            for component in pipeline[kind]:
                assert component in collector[kind], component


def test_scrapers_read_the_gateway_metrics_key_from_a_secret_file(
    compose: dict[str, Any],
) -> None:
    """/metrics answers only its key: Prometheus and the collector send it from a compose
    secret (a file outside git), never from a literal in their configuration."""
    prometheus = load_yaml(ROOT / "deploy" / "prometheus.yml")
    collector = load_yaml(ROOT / "deploy" / "otel-collector.yaml")
    jobs = {"prometheus": prometheus["scrape_configs"],
            "otel-collector": collector["receivers"]["prometheus"]["config"]["scrape_configs"]}
    for service_name, scrape_configs in jobs.items():
        (job,) = [j for j in scrape_configs if j["job_name"] == "gateway"]
        auth = job["authorization"]
        assert auth["type"] == "Bearer" and "credentials" not in auth, service_name
        path = Path(auth["credentials_file"])
        assert path.parent == Path("/run/secrets"), service_name
        assert path.name in services(compose)[service_name]["secrets"], service_name
        source = REFERENCE.match(compose["secrets"][path.name]["file"])
        assert source and source["op"] == ":-", "the file is the operator's to choose"
        # the default file's folder keeps everything but its own .gitignore out of git
        folder = (ROOT / source["arg"]).parent
        patterns = set((folder / ".gitignore").read_text().split())
        assert folder != ROOT and {"*", "!.gitignore"} <= patterns, (
            f"{source['arg']} must be git-ignored")
    assert environment(services(compose)["gateway"])["GATEWAY_METRICS_KEY"].startswith(
        "${GATEWAY_METRICS_KEY")


def test_grafana_provisions_the_dashboard(compose: dict[str, Any]) -> None:
    grafana = services(compose)["grafana"]
    provider = load_yaml(ROOT / "deploy/grafana/provisioning/dashboards/gateway.yaml")
    folder = provider["providers"][0]["options"]["path"]
    mounts = dict(v.split(":")[:2] for v in grafana["volumes"])
    assert mounts["./deploy/grafana/gateway-dashboard.json"].startswith(folder + "/")
    datasource = load_yaml(ROOT / "deploy/grafana/provisioning/datasources/prometheus.yaml")
    url = urlsplit(datasource["datasources"][0]["url"])
    assert url.hostname in services(compose)
