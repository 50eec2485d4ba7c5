"""deploy/k8s: the kustomize base and production overlay, rendered by `kubectl kustomize` and
checked object by object: the kinds, the probes on the gateway's real health routes, the
security context, a shutdown the grace period covers, the policy mounted so it hot-reloads,
every Secret and ConfigMap key a manifest names present, and Redis and Postgres left outside."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
from collections.abc import Iterator
from pathlib import Path, PurePosixPath
from typing import Any
from urllib.parse import urlsplit

import pytest
import yaml

from gateway.api.health import router as health_router
from gateway.policy.loader import parse_policy
from gateway.telemetry.fleet_metrics import GAUGES
from tests.deploy.conftest import ROOT, load_yaml, tool

K8S = ROOT / "deploy" / "k8s"
PRODUCTION = K8S / "overlays" / "production"
Object = dict[str, Any]
BASE_KINDS = {"ServiceAccount": 1, "ConfigMap": 2, "Deployment": 1, "Service": 1,
              "PodDisruptionBudget": 1, "HorizontalPodAutoscaler": 1, "Job": 1}
PRODUCTION_KINDS = {**BASE_KINDS, "Namespace": 1, "Secret": 1, "ServiceMonitor": 1}
IMAGE_USER = 10001  # the Dockerfile's USER
PRE_STOP_S = 10


def render(directory: Path) -> list[Object]:
    result = subprocess.run([tool("kubectl"), "kustomize", str(directory)],
                            capture_output=True, text=True, timeout=120, check=False)
    assert result.returncode == 0, result.stderr
    return [doc for doc in yaml.safe_load_all(result.stdout) if doc]


@pytest.fixture(scope="module")
def base() -> list[Object]:
    return render(K8S / "base")


@pytest.fixture(scope="module")
def production(tmp_path_factory: pytest.TempPathFactory) -> Iterator[list[Object]]:
    """The overlay as an operator renders it: its Secret's files written by the script (and
    the database password by hand), in a copy, since they are git-ignored."""
    tool("kubectl")  # skipped (or failed, in CI) before anything is written
    copy = tmp_path_factory.mktemp("k8s") / "k8s"
    shutil.copytree(K8S, copy, ignore=shutil.ignore_patterns("*-key", "*-password"))
    secrets = copy / "overlays" / "production" / "secrets"
    subprocess.run(["bash", str(ROOT / "scripts" / "k8s-secrets.sh"), str(secrets)],
                   check=True, capture_output=True, timeout=60)
    (secrets / "database-password").write_text("postgres-password\n")
    yield render(copy / "overlays" / "production")


def kinds(objects: list[Object]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for obj in objects:
        counts[obj["kind"]] = counts.get(obj["kind"], 0) + 1
    return counts


def one(objects: list[Object], kind: str, name: str | None = None) -> Object:
    found = [o for o in objects if o["kind"] == kind
             and (name is None or o["metadata"]["name"] == name)]
    assert len(found) == 1, (kind, name, len(found))
    return found[0]


def pod_specs(objects: list[Object]) -> Iterator[tuple[str, Object]]:
    for obj in objects:
        if obj["kind"] in ("Deployment", "Job"):
            yield obj["metadata"]["name"], obj["spec"]["template"]["spec"]


def env_of(objects: list[Object], container: Object) -> dict[str, str]:
    """A container's environment as the kubelet resolves it from ConfigMaps."""
    env: dict[str, str] = {}
    for source in container.get("envFrom", []):
        env.update(one(objects, "ConfigMap", source["configMapRef"]["name"])["data"])
    for var in container.get("env", []):
        ref = var.get("valueFrom", {}).get("configMapKeyRef")
        env[var["name"]] = (one(objects, "ConfigMap", ref["name"])["data"][ref["key"]]
                            if ref else var.get("value", ""))
    return env


def test_the_base_and_the_overlay_have_every_object(
    base: list[Object], production: list[Object],
) -> None:
    assert kinds(base) == BASE_KINDS
    assert kinds(production) == PRODUCTION_KINDS


def test_redis_and_postgres_are_external(production: list[Object]) -> None:
    assert not [o for o in production if o["kind"] in ("StatefulSet", "DaemonSet")]
    settings = one(production, "ConfigMap", "gateway-settings")["data"]
    assert "example.com" in settings["GATEWAY_DATABASE_URL"]  # the overlay's endpoints
    assert settings["GATEWAY_REDIS_URL"].startswith(("redis://", "rediss://"))
    # the password comes from the Secret's file, never in the ConfigMap's URL
    assert urlsplit(settings["GATEWAY_DATABASE_URL"]).password is None


def test_probes_use_the_gateways_health_routes(production: list[Object]) -> None:
    routes = {route.path for route in health_router.routes}  # type: ignore[attr-defined]
    container = one(production, "Deployment")["spec"]["template"]["spec"]["containers"][0]
    ports = {p["name"]: p["containerPort"] for p in container["ports"]}
    expected = {"readinessProbe": "/readyz", "livenessProbe": "/healthz",
                "startupProbe": "/healthz"}
    for probe, path in expected.items():
        get = container[probe]["httpGet"]
        assert get["path"] == path and path in routes, probe
        assert get["port"] in ports, probe
    assert ports["http"] == 8080 and "--port" in container["args"]
    assert container["args"][container["args"].index("--port") + 1] == "8080"


@pytest.mark.parametrize("rendered", ["base", "production"])
def test_every_pod_runs_locked_down(rendered: str, request: pytest.FixtureRequest) -> None:
    objects: list[Object] = request.getfixturevalue(rendered)
    for name, spec in pod_specs(objects):
        pod = spec["securityContext"]
        assert pod["runAsNonRoot"] is True and pod["runAsUser"] == IMAGE_USER, name
        assert pod["seccompProfile"]["type"] == "RuntimeDefault", name
        assert spec["automountServiceAccountToken"] is False, name
        for container in spec["containers"]:
            ctx = container["securityContext"]
            assert ctx["readOnlyRootFilesystem"] is True, name
            assert ctx["allowPrivilegeEscalation"] is False, name
            assert ctx["capabilities"]["drop"] == ["ALL"], name
            resources = container["resources"]
            assert {"cpu", "memory"} <= set(resources["requests"]) & set(resources["limits"])


@pytest.mark.parametrize("rendered", ["base", "production"])
def test_every_written_path_is_a_writable_volume(
    rendered: str, request: pytest.FixtureRequest,
) -> None:
    """The root filesystem is read-only: whatever the gateway writes must be on emptyDir."""
    objects: list[Object] = request.getfixturevalue(rendered)
    spec = one(objects, "Deployment")["spec"]["template"]["spec"]
    (container,) = spec["containers"]
    env = env_of(objects, container)
    empty_dirs = {v["name"] for v in spec["volumes"] if "emptyDir" in v}
    writable = [PurePosixPath(m["mountPath"]) for m in container["volumeMounts"]
                if m["name"] in empty_dirs and not m.get("readOnly")]
    for setting in ("GATEWAY_AUDIT_SPOOL_DIR", "GATEWAY_METRICS_DIR"):
        path = PurePosixPath(env[setting])
        assert any(path == w or w in path.parents for w in writable), setting
    assert any(w == PurePosixPath("/tmp") for w in writable)  # tempfile, multiprocessing


def test_shutdown_fits_in_the_grace_period(production: list[Object]) -> None:
    spec = one(production, "Deployment")["spec"]["template"]["spec"]
    (container,) = spec["containers"]
    command = container["lifecycle"]["preStop"]["exec"]["command"]
    assert command == ["sleep", str(PRE_STOP_S)]
    grace_s = float(env_of(production, container)["GATEWAY_SHUTDOWN_GRACE_S"])
    # preStop, then the gateway's own graceful shutdown, then draining the audit queue
    assert spec["terminationGracePeriodSeconds"] >= PRE_STOP_S + grace_s + 5
    assert spec["terminationGracePeriodSeconds"] <= PRE_STOP_S + grace_s + 30


def test_replicas_spread_across_nodes(production: list[Object]) -> None:
    deployment = one(production, "Deployment")
    spec = deployment["spec"]["template"]["spec"]
    labels = deployment["spec"]["template"]["metadata"]["labels"]
    spread = {c["topologyKey"]: c for c in spec["topologySpreadConstraints"]}
    hostname = spread["kubernetes.io/hostname"]
    assert hostname["whenUnsatisfiable"] == "DoNotSchedule" and hostname["maxSkew"] == 1
    for constraint in spread.values():
        assert constraint["labelSelector"]["matchLabels"].items() <= labels.items()
    assert deployment["spec"]["strategy"]["rollingUpdate"]["maxUnavailable"] == 0


def test_every_selector_and_reference_finds_its_target(production: list[Object]) -> None:
    deployment = one(production, "Deployment")
    labels = deployment["spec"]["template"]["metadata"]["labels"]
    service = one(production, "Service")
    assert service["spec"]["selector"].items() <= labels.items()
    assert one(production, "PodDisruptionBudget")["spec"]["selector"]["matchLabels"].items() <= (
        labels.items())
    target = one(production, "HorizontalPodAutoscaler")["spec"]["scaleTargetRef"]
    assert (target["kind"], target["name"]) == ("Deployment", deployment["metadata"]["name"])
    monitor = one(production, "ServiceMonitor")["spec"]
    assert monitor["selector"]["matchLabels"].items() <= service["metadata"]["labels"].items()
    port_names = {p["name"] for p in service["spec"]["ports"]}
    assert {e["port"] for e in monitor["endpoints"]} <= port_names
    assert {e["path"] for e in monitor["endpoints"]} == {"/metrics"}
    accounts = {o["metadata"]["name"] for o in production if o["kind"] == "ServiceAccount"}
    for name, spec in pod_specs(production):
        assert spec["serviceAccountName"] in accounts, name


def secret_and_config_keys(objects: list[Object]) -> dict[tuple[str, str], set[str]]:
    keys: dict[tuple[str, str], set[str]] = {}
    for obj in objects:
        if obj["kind"] in ("Secret", "ConfigMap"):
            data = {**obj.get("data", {}), **obj.get("stringData", {})}
            keys[(obj["kind"], obj["metadata"]["name"])] = set(data)
    return keys


def references(objects: list[Object]) -> Iterator[tuple[str, str, str, str]]:
    """(where, kind, name, key) for every key of a Secret or ConfigMap a manifest names."""
    for name, spec in pod_specs(objects):
        for volume in spec["volumes"]:
            for kind, field, name_field in (("Secret", "secret", "secretName"),
                                            ("ConfigMap", "configMap", "name")):
                if field in volume:
                    for item in volume[field].get("items", []):
                        yield name, kind, volume[field][name_field], item["key"]
        for container in spec["containers"]:
            for var in container.get("env", []):
                for kind, field in (("Secret", "secretKeyRef"), ("ConfigMap", "configMapKeyRef")):
                    ref = var.get("valueFrom", {}).get(field)
                    if ref:
                        yield name, kind, ref["name"], ref["key"]
    for monitor in (o for o in objects if o["kind"] == "ServiceMonitor"):
        for endpoint in monitor["spec"]["endpoints"]:
            credentials = endpoint["authorization"]["credentials"]
            yield "servicemonitor", "Secret", credentials["name"], credentials["key"]


def test_every_referenced_secret_and_config_key_exists(production: list[Object]) -> None:
    keys = secret_and_config_keys(production)
    found = list(references(production))
    assert len(found) >= 8
    for where, kind, name, key in found:
        assert (kind, name) in keys, f"{where}: no {kind} {name}"
        assert key in keys[(kind, name)], f"{where}: {kind} {name} has no key {key}"
    # and whole-ConfigMap references (envFrom) name ConfigMaps that exist
    for name, spec in pod_specs(production):
        for container in spec["containers"]:
            for source in container.get("envFrom", []):
                assert ("ConfigMap", source["configMapRef"]["name"]) in keys, name


def test_every_secret_file_setting_names_a_mounted_key(production: list[Object]) -> None:
    """GATEWAY_*_FILE settings point into the Secret volume, at a key it projects."""
    for name, spec in pod_specs(production):
        (container,) = spec["containers"]
        env = env_of(production, container)
        volumes = {v["name"]: v for v in spec["volumes"]}
        files = {k: v for k, v in env.items() if k.endswith("_FILE")}
        assert files, name
        for setting, value in files.items():
            path = PurePosixPath(value)
            (mount,) = [m for m in container["volumeMounts"]
                        if PurePosixPath(m["mountPath"]) == path.parent]
            secret = volumes[mount["name"]]["secret"]
            assert path.name in {item["path"] for item in secret["items"]}, (name, setting)
            # group-readable by the pod's fsGroup only
            assert secret["defaultMode"] & 0o007 == 0, name


def test_the_policy_hot_reloads_from_its_configmap(production: list[Object]) -> None:
    spec = one(production, "Deployment")["spec"]["template"]["spec"]
    (container,) = spec["containers"]
    path = PurePosixPath(env_of(production, container)["GATEWAY_POLICY_PATH"])
    (mount,) = [m for m in container["volumeMounts"]
                if PurePosixPath(m["mountPath"]) == path.parent]
    # a subPath mount is never refreshed by the kubelet: the ConfigMap is a directory
    assert "subPath" not in mount
    volume = {v["name"]: v for v in spec["volumes"]}[mount["name"]]["configMap"]
    configmap = one(production, "ConfigMap", volume["name"])
    # a fixed name (no hash suffix): `kubectl apply` edits it in place, no rollout
    assert configmap["metadata"]["name"] == "gateway-policy"
    (item,) = [i for i in volume["items"] if i["path"] == path.name]
    policy = parse_policy(configmap["data"][item["key"]], "deploy/k8s/base/policy.yaml")
    assert policy.backends


def test_secrets_are_generated_from_files_under_a_fixed_name(production: list[Object]) -> None:
    secret = one(production, "Secret")
    assert secret["metadata"]["name"] == "gateway-secrets"  # rotation edits it in place
    assert secret["type"] == "Opaque"
    kustomization = load_yaml(PRODUCTION / "kustomization.yaml")
    (generator,) = kustomization["secretGenerator"]
    for entry in generator["files"]:
        assert "literals" not in generator and entry.split("=", 1)[1].startswith("secrets/")
    patterns = set((PRODUCTION / "secrets" / ".gitignore").read_text().split())
    assert {"*", "!.gitignore"} <= patterns


def test_the_migration_job_runs_the_gateways_image_once(production: list[Object]) -> None:
    job = one(production, "Job")
    spec = job["spec"]["template"]["spec"]
    (container,) = spec["containers"]
    gateway = one(production, "Deployment")["spec"]["template"]["spec"]["containers"][0]
    assert container["args"] == ["migrate"] and container["image"] == gateway["image"]
    assert spec["restartPolicy"] in ("Never", "OnFailure")
    assert job["spec"]["backoffLimit"] <= 5 and job["spec"]["ttlSecondsAfterFinished"] > 0
    migrate_env, gateway_env = env_of(production, container), env_of(production, gateway)
    for setting in ("GATEWAY_DATABASE_URL", "GATEWAY_DATABASE_PASSWORD_FILE"):
        assert migrate_env[setting] == gateway_env[setting]


def test_autoscaling_on_cpu_and_in_flight_requests(
    base: list[Object], production: list[Object],
) -> None:
    def metrics(objects: list[Object]) -> dict[str, Object]:
        hpa = one(objects, "HorizontalPodAutoscaler")["spec"]
        assert 2 <= hpa["minReplicas"] < hpa["maxReplicas"]
        return {m["type"]: m for m in hpa["metrics"]}

    assert metrics(base)["Resource"]["resource"]["name"] == "cpu"
    scaled = metrics(production)
    assert scaled["Resource"]["resource"]["name"] == "cpu"
    custom = scaled["Pods"]["pods"]["metric"]["name"]
    # the adapter rule makes that custom metric from a metric the gateway really exports
    (rule,) = load_yaml(PRODUCTION / "prometheus-adapter-rules.yaml")["rules"]
    assert rule["name"]["as"] == custom
    source = rule["name"]["matches"].strip("^$")
    assert source in {name for name, _ in GAUGES.values()}
    assert one(production, "Deployment")["spec"]["replicas"] == (
        one(production, "HorizontalPodAutoscaler")["spec"]["minReplicas"])


def test_production_objects_live_in_its_namespace(production: list[Object]) -> None:
    namespace = one(production, "Namespace")
    name = namespace["metadata"]["name"]
    assert namespace["metadata"]["labels"]["pod-security.kubernetes.io/enforce"] == (
        "restricted")
    for obj in production:
        if obj["kind"] != "Namespace":
            assert obj["metadata"]["namespace"] == name, obj["kind"]
    image = one(production, "Deployment")["spec"]["template"]["spec"]["containers"][0]["image"]
    assert "/" in image and not image.endswith((":latest", ":local"))


def test_the_k8s_secrets_script_writes_0600_files(tmp_path: Path) -> None:
    folder = tmp_path / "secrets"
    script = ["bash", str(ROOT / "scripts" / "k8s-secrets.sh"), str(folder)]
    result = subprocess.run(script, capture_output=True, text=True, timeout=60, check=True)
    assert "database-password" in result.stderr  # the one it cannot make up
    assert {p.name for p in folder.iterdir()} == {"admin-key", "metrics-key", "key-pepper"}
    for path in folder.iterdir():
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
    pepper = (folder / "key-pepper").read_text()
    subprocess.run([*script, "rotate", "admin-key"], check=True, capture_output=True,
                   timeout=60)
    assert (folder / "key-pepper").read_text() == pepper
    refused = subprocess.run([*script, "rotate", "key-pepper"], capture_output=True,
                             timeout=60, check=False, env=os.environ)
    assert refused.returncode != 0
