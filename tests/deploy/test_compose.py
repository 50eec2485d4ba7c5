"""docker-compose.yml: valid for Compose (Debian's docker-compose checks it against the
compose-spec schema without a daemon), and shaped as the deployment needs it: a one-shot
migration the gateway waits for, health checks and resource limits on every service, every
secret a file (a compose secret) and none with a default, databases pinned by digest, and a
policy whose backends are the stack's own services."""

from __future__ import annotations

import os
import re
import stat
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
SECRETS_DIR = "${GATEWAY_SECRETS_DIR:-./deploy/secrets}/"
ONE_SHOT = {"migrate"}
# The collector's image has no shell and no HTTP client to run a check with.
NO_HEALTHCHECK = {"otel-collector"}
# Stateful: the exact bytes that were tested, not whatever the tag points at today.
BY_DIGEST = {"postgres", "redis"}
DIGEST = re.compile(r"@sha256:[0-9a-f]{64}$")
EXACT_VERSION = re.compile(r"^v?\d+\.\d+(?:\.\d+)?(?:-[a-z0-9.]+)?$")  # Postgres: 16.15


def run_compose(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    # the stack's own variables only as each test sets them (not the test run's GATEWAY_*)
    clean = {k: v for k, v in os.environ.items()
             if not k.startswith(("GATEWAY_", "POSTGRES_", "COMPOSE_", "OTEL_"))}
    return subprocess.run(
        [tool("docker-compose"), "--project-directory", str(ROOT),
         "-f", str(ROOT / "docker-compose.yml"), *args],
        cwd=ROOT, env={**clean, **(env or {})}, capture_output=True, text=True, timeout=60,
        check=False,
    )


@pytest.mark.parametrize("profiles", [[], ["otel", "monitoring"]])
def test_compose_config_is_valid(profiles: list[str]) -> None:
    flags = [arg for profile in profiles for arg in ("--profile", profile)]
    result = run_compose(*flags, "config", "-q")
    assert result.returncode == 0, result.stderr


def test_compose_needs_no_secret_in_its_environment() -> None:
    """Nothing secret is read from the shell: the stack resolves with none set, and the
    gateway's resolved environment names files, never values."""
    result = run_compose("--profile", "otel", "--profile", "monitoring", "config")
    assert result.returncode == 0, result.stderr
    resolved = yaml.safe_load(result.stdout)
    gateway = resolved["services"]["gateway"]["environment"]
    assert gateway["GATEWAY_ADMIN_KEY_FILE"] == "/run/secrets/gateway_admin_key"
    assert not {"GATEWAY_ADMIN_KEY", "GATEWAY_METRICS_KEY", "GATEWAY_KEY_PEPPER"} & set(gateway)
    assert urlsplit(gateway["GATEWAY_DATABASE_URL"]).password is None
    files = {name: Path(spec["file"]) for name, spec in resolved["secrets"].items()}
    assert {path.parent for path in files.values()} == {ROOT / "deploy" / "secrets"}


def test_another_secrets_folder_is_one_variable_away(tmp_path: Path) -> None:
    result = run_compose("config", env={"GATEWAY_SECRETS_DIR": str(tmp_path)})
    assert result.returncode == 0, result.stderr
    for spec in yaml.safe_load(result.stdout)["secrets"].values():
        assert Path(spec["file"]).parent == tmp_path


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


def test_every_long_running_service_has_a_health_check(compose: dict[str, Any]) -> None:
    unchecked = {name for name, service in services(compose).items()
                 if not has_healthcheck(compose, service)}
    assert unchecked == ONE_SHOT | NO_HEALTHCHECK


def test_every_service_has_resource_limits(compose: dict[str, Any]) -> None:
    for name, service in services(compose).items():
        assert 0 < float(service["cpus"]) <= 4, name
        memory = re.fullmatch(r"(\d+)([mg])", str(service["mem_limit"]))
        assert memory, f"{name}: mem_limit {service.get('mem_limit')}"
        assert 128 <= int(memory[1]) * (1024 if memory[2] == "g" else 1) <= 4096, name
        assert 0 < int(service["pids_limit"]) <= 1000, name


def test_redis_never_evicts_budgets(compose: dict[str, Any]) -> None:
    command = services(compose)["redis"]["command"]
    flags = dict(zip(command[1::2], command[2::2], strict=False))
    assert flags["--maxmemory-policy"] == "noeviction" and flags["--appendonly"] == "yes"
    assert flags["--maxmemory"]  # below the container's limit: refused writes, not an OOM kill


def secret_targets(service: dict[str, Any]) -> dict[str, str]:
    """/run/secrets/<target> → the top-level secret it mounts."""
    found = {}
    for entry in service.get("secrets", []):
        if isinstance(entry, str):
            found[entry] = entry
        else:
            found[entry.get("target", entry["source"])] = entry["source"]
    return found


def test_every_secret_is_a_mounted_file(compose: dict[str, Any]) -> None:
    for name, service in services(compose).items():
        mounted = secret_targets(service)
        for key, value in environment(service).items():
            if SECRET_NAME.search(key):
                assert key.endswith("_FILE"), f"{name}.{key}: a secret as a value, not a file"
                path = Path(value)
                assert path.parent == Path("/run/secrets"), f"{name}.{key}: {value}"
                assert path.name in mounted, f"{name}.{key}: {path.name} is not mounted"
            for user_info in re.findall(r"://([^/@\s]+)@", value):
                assert not user_info.partition(":")[2], f"{name}.{key}: a password in the URL"
        for source in mounted.values():
            assert source in compose["secrets"], f"{name}: undeclared secret {source}"
    for name, spec in compose["secrets"].items():
        assert spec["file"].startswith(SECRETS_DIR), name  # never a literal, never inline
    for name, service in services(compose).items():
        build = service.get("build")
        # build arguments end up in the image's history: never a place for a secret
        assert not isinstance(build, dict) or "args" not in build, name


def test_the_database_password_has_no_default(compose: dict[str, Any]) -> None:
    postgres = services(compose)["postgres"]
    env = environment(postgres)
    assert "POSTGRES_PASSWORD" not in env and "POSTGRES_HOST_AUTH_METHOD" not in env
    assert env["POSTGRES_PASSWORD_FILE"] == "/run/secrets/postgres_password"
    for name in ("gateway", "migrate"):
        assert environment(services(compose)[name])["GATEWAY_DATABASE_PASSWORD_FILE"] == (
            env["POSTGRES_PASSWORD_FILE"])
    assert "postgres_password" in secret_targets(postgres)
    # the files come from the script, or from the operator's own secret store
    assert not any(SECRET_NAME.search(line) and ":-" in line and "SECRETS_DIR" not in line
                   for line in (ROOT / "docker-compose.yml").read_text().splitlines()
                   if not line.lstrip().startswith("#"))


def test_the_secrets_script_writes_every_compose_secret_0600(
    compose: dict[str, Any], tmp_path: Path,
) -> None:
    folder = tmp_path / "secrets"

    def run(*args: str) -> None:
        subprocess.run(["bash", str(ROOT / "scripts" / "compose-secrets.sh"), *args],
                       env={**os.environ, "GATEWAY_SECRETS_DIR": str(folder)}, check=True,
                       capture_output=True, timeout=60)

    run()
    expected = {spec["file"].removeprefix(SECRETS_DIR) for spec in compose["secrets"].values()}
    assert {path.name for path in folder.iterdir()} == expected
    for path in folder.iterdir():
        assert stat.S_IMODE(path.stat().st_mode) == 0o600, path.name
        assert len(path.read_text().strip()) >= 32, path.name
    if os.geteuid() == 0:  # owned by the user of the container that reads it
        assert (folder / "gateway-admin-key").stat().st_uid == 10001
        assert (folder / "prometheus-metrics-key").stat().st_uid == 65534
    metrics = (folder / "gateway-metrics-key").read_text()
    assert (folder / "prometheus-metrics-key").read_text() == metrics
    before = {path.name: path.read_text() for path in folder.iterdir()}
    run()  # never overwrites
    assert {path.name: path.read_text() for path in folder.iterdir()} == before
    admin = folder / "gateway-admin-key"
    inode = admin.stat().st_ino
    run("rotate", "gateway-admin-key")
    # in place: a bind mount keeps pointing at the same file
    assert admin.read_text() != before[admin.name] and admin.stat().st_ino == inode
    assert stat.S_IMODE(admin.stat().st_mode) == 0o600


def test_databases_publish_no_port(compose: dict[str, Any]) -> None:
    for name in ("postgres", "redis"):
        assert "ports" not in services(compose)[name], name


def test_images_are_pinned(compose: dict[str, Any]) -> None:
    for name, service in services(compose).items():
        image = service["image"]
        if "build" in service:  # ours, built from this checkout
            continue
        reference = image.partition("@")[0]
        tag = reference.rsplit("/", 1)[-1].partition(":")[2]
        assert EXACT_VERSION.match(tag), f"{name}: {image} is not an exact version"
        if name in BY_DIGEST:
            assert DIGEST.search(image), f"{name}: {image} is not pinned by digest"


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
    gateway_file = compose["secrets"][secret_targets(services(compose)["gateway"])[
        Path(environment(services(compose)["gateway"])["GATEWAY_METRICS_KEY_FILE"]).name]]
    for service_name, scrape_configs in jobs.items():
        (job,) = [j for j in scrape_configs if j["job_name"] == "gateway"]
        auth = job["authorization"]
        assert auth["type"] == "Bearer" and "credentials" not in auth, service_name
        path = Path(auth["credentials_file"])
        assert path.parent == Path("/run/secrets"), service_name
        source = secret_targets(services(compose)[service_name])[path.name]
        # the collector shares the gateway's file; Prometheus (another user) has its copy
        assert source in ("gateway_metrics_key", "prometheus_metrics_key"), service_name
        assert compose["secrets"][source]["file"].startswith(SECRETS_DIR)
    assert gateway_file["file"].startswith(SECRETS_DIR)
    # the default folder keeps everything but its own .gitignore out of git
    folder = ROOT / SECRETS_DIR.split(":-", 1)[1].split("}", 1)[0]
    patterns = set((folder / ".gitignore").read_text().split())
    assert folder != ROOT and {"*", "!.gitignore"} <= patterns


def test_the_gateway_workers_share_one_metrics_directory(compose: dict[str, Any]) -> None:
    gateway = services(compose)["gateway"]
    command = gateway["command"]
    if int(command[command.index("--workers") + 1]) > 1:
        assert environment(gateway)["GATEWAY_METRICS_DIR"].startswith("/tmp/")


def test_grafana_provisions_the_dashboard(compose: dict[str, Any]) -> None:
    grafana = services(compose)["grafana"]
    provider = load_yaml(ROOT / "deploy/grafana/provisioning/dashboards/gateway.yaml")
    folder = provider["providers"][0]["options"]["path"]
    mounts = dict(v.split(":")[:2] for v in grafana["volumes"])
    assert mounts["./deploy/grafana/gateway-dashboard.json"].startswith(folder + "/")
    datasource = load_yaml(ROOT / "deploy/grafana/provisioning/datasources/prometheus.yaml")
    url = urlsplit(datasource["datasources"][0]["url"])
    assert url.hostname in services(compose)
