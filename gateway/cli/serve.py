"""`gateway serve` (the gateway under uvicorn, plus the demo's simulated backends) and
`gateway sim` (one simulated vLLM server)."""

from __future__ import annotations

import atexit
import importlib
import json
import os
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING

import click

if TYPE_CHECKING:  # loaded when serve runs, so `gateway serve --help` answers at once
    from gateway.policy.loader import PolicySet
    from gateway.settings import Settings

DEMO_TENANT = "demo"
DEMO_ADMIN_KEY_NAME = "admin-key"  # in the state folder, beside the embedded database
WORKER_START_TIMEOUT_S = 60


@click.command()
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", default=8080, show_default=True, type=int)
@click.option("--policy", "policy_path", type=click.Path(path_type=Path), default=None,
              help="policy YAML (default: GATEWAY_POLICY_PATH, else the demo policy shipped "
              "with the package)")
@click.option("--workers", default=1, show_default=True, type=int,
              help="uvicorn worker processes (in-process state is per worker)")
@click.option("--no-sim", is_flag=True,
              help="do not start the simulated backends the policy declares")
def serve(host: str, port: int, policy_path: Path | None, workers: int, no_sim: bool) -> None:
    """Run the gateway. With no configuration: the demo (simulated backends, SQLite)."""
    import uvicorn
    from pydantic import ValidationError

    from gateway.classify.presidio import PresidioUnavailable, presidio_config
    from gateway.cli import running
    from gateway.cli.connection_guard import GuardedHttpToolsProtocol
    from gateway.cli.preflight import check_port, check_services
    from gateway.policy.loader import PolicyError, load_policy
    from gateway.settings import Settings
    from gateway.state_home import resolve as state_home

    if policy_path is not None:
        os.environ["GATEWAY_POLICY_PATH"] = str(policy_path)
    try:
        settings = Settings()
    except ValidationError as exc:  # e.g. a secret given twice, or its file unreadable
        raise click.ClickException(
            "settings: " + "; ".join(str(e["msg"]) for e in exc.errors())) from None
    if not settings.policy_path.is_file():
        source = "--policy" if policy_path is not None else "GATEWAY_POLICY_PATH"
        raise click.ClickException(
            f"no policy file at {settings.policy_path} (from {source}, relative to "
            f"{Path.cwd()}); fix the path, or unset it to run the demo policy")
    try:
        policy = load_policy(settings.policy_path)
    except PolicyError as exc:
        # One problem (an unreadable file, bad YAML) on one line; several, one per line.
        joiner = "\n" if len(exc.problems) > 1 else " "
        raise click.ClickException(f"the policy does not validate:{joiner}{exc}") from None
    if settings.task_model is not None:
        from gateway.classify.task_type import TaskModel, TaskModelError

        try:  # refused here, with its reason, rather than in every worker's start-up
            TaskModel.load(settings.task_model)
        except TaskModelError as exc:
            raise click.ClickException(f"GATEWAY_TASK_MODEL: {exc}") from None
    from gateway.classify.complexity_encoder import EncoderModelError
    from gateway.classify.standard import load_complexity

    try:  # the model and its table, checked once here rather than in every worker
        if settings.complexity_encoder == "minilm":
            from gateway.classify.standard import load_accurate_model

            load_accurate_model(settings.complexity_model)
        else:
            load_complexity(settings.complexity_model, settings.encoder_table)
    except EncoderModelError as exc:
        raise click.ClickException(
            f"{exc} (settings GATEWAY_COMPLEXITY_MODEL / GATEWAY_ENCODER_TABLE /"
            " GATEWAY_COMPLEXITY_ENCODER)") from None
    if settings.presidio:
        try:
            presidio_config(settings.presidio_entities, settings.presidio_min_score,
                            settings.presidio_model)
        except PresidioUnavailable as exc:
            raise click.ClickException(str(exc)) from None
    check_port(host, port)  # before the simulators and the workers start
    for warning in check_services(settings):
        click.echo(warning, err=True)
    simulators_ready: Callable[[], None] | None = None
    if settings.start_simulators and not no_sim and policy.simulators:
        simulators_ready = _start_simulators(policy)
    # While the simulators start: the gateway's own imports (uvicorn's factory below finds
    # them loaded), and the embedded database's migrations and demo tenant.
    if workers == 1:  # (several workers import it each in their own process)
        importlib.import_module("gateway.app")
    demo = settings.is_embedded_db and settings.uses_demo_policy
    admin_key = _demo_admin_key(settings) if demo and settings.admin_key is None else None
    # Only the demo policy may create its tenant: an operator's policy gets no implicit key.
    tenant_key = _ensure_demo_key(settings) if demo else None
    keyless = settings.is_embedded_db and not demo and _no_tenants(settings)
    what = "the demo policy" if settings.uses_demo_policy else f"policy {settings.policy_path}"
    click.echo(f"\ngateway on http://{host}:{port}/v1  ({what}; models: "
               f"{', '.join(policy.public_models())})", err=True)
    if tenant_key:
        click.echo(f"  API key of tenant '{DEMO_TENANT}' (shown once): {tenant_key}", err=True)
    if keyless:
        click.echo("  no tenant has a key yet; make one:  gateway keys create --tenant NAME",
                   err=True)
    if admin_key:
        click.echo(f"  report page: http://{host}:{port}/admin/login  (admin key {admin_key}, "
                   f"kept in {_demo_admin_key_file()})", err=True)
    if demo:
        click.echo("  send a mixed workload through it:  gateway demo traffic\n", err=True)
    if workers > 1:
        # Set after the simulators started: their own metrics stay out of the gateway's.
        _share_metrics(settings.metrics_dir)
        from gateway.assembly.parent_watch import PARENT_ENV

        os.environ[PARENT_ENV] = str(os.getpid())  # the workers die with this process
    if simulators_ready is not None:
        simulators_ready()  # the first scrape then finds every engine
    # uvicorn re-raises the SIGTERM it handled once its graceful shutdown is over; exit 0
    # then, so a supervisor sees a clean stop rather than death by signal.
    signal.signal(signal.SIGTERM, _stopped)
    running.record(state_home().path, host, port,  # for `gateway status`
                   "" if settings.uses_demo_policy else str(settings.policy_path.resolve()))
    uvicorn.run(
        "gateway.app:create_app",
        factory=True,
        host=host,
        port=port,
        workers=workers,
        loop="uvloop",
        http=GuardedHttpToolsProtocol,  # httptools, with bounds on the header block
        log_level=settings.log_level,
        access_log=settings.access_log,
        timeout_graceful_shutdown=settings.shutdown_grace_s,
        # --workers N: on SIGHUP uvicorn starts each replacement worker and retires the old
        # one only once the new one is ready; its default 5 s is shorter than loading the
        # tokenizers and classifier under load, and it then gives up on the restart.
        timeout_worker_healthcheck=WORKER_START_TIMEOUT_S,
    )


def _demo_admin_key_file() -> Path:
    from gateway.state_home import resolve

    return resolve().path / DEMO_ADMIN_KEY_NAME


def _demo_admin_key(settings: Settings) -> str:
    """The demo's admin key, so its report page opens in a browser: made once, kept 0600 in
    the state folder, and handed to the gateway's workers through their environment (a
    production gateway gets GATEWAY_ADMIN_KEY(_FILE) from its operator instead)."""
    path = _demo_admin_key_file()
    if path.is_file():
        key = path.read_text().strip()
    else:
        path.parent.mkdir(parents=True, exist_ok=True)
        key = f"sk-admin-{secrets.token_urlsafe(24)}"
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as out:
            out.write(key + "\n")
    os.environ["GATEWAY_ADMIN_KEY_FILE"] = str(path.resolve())  # the file, not the key
    return key


def _share_metrics(directory: Path | None) -> None:
    """Workers keep their Prometheus values in one directory, so any of them answers a scrape
    with all of them (telemetry/multiprocess.py); emptied now, as a new run starts from 0."""
    from gateway.telemetry.multiprocess import MULTIPROC_ENV, prepare_dir

    if directory is None:
        directory = Path(tempfile.mkdtemp(prefix="gateway-metrics-"))
        atexit.register(shutil.rmtree, directory, ignore_errors=True)
    path = prepare_dir(directory)
    os.environ[MULTIPROC_ENV] = str(path)  # inherited by the workers uvicorn spawns


def _stopped(signum: int, frame: FrameType | None) -> None:
    sys.exit(0)


def _start_simulators(policy: PolicySet) -> Callable[[], None]:
    """Start the policy's simulated backends in one process; returns a wait for them to
    answer /health (the caller overlaps its own start-up with theirs)."""
    launches = list(policy.simulators.values())
    fleet = json.dumps([launch.fleet_entry() for launch in launches])
    proc = subprocess.Popen([sys.executable, "-m", "gateway", "sim", "--fleet", fleet])
    names = {"vllm": "vLLM", "openai": "OpenAI API", "anthropic": "Anthropic API"}
    for launch in launches:
        click.echo(f"simulated {names[launch.api]} {launch.backend!r} ({launch.model}) on "
                   f"{launch.host}:{launch.port}", err=True)

    def stop() -> None:
        proc.terminate()
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()

    atexit.register(stop)

    def wait() -> None:
        deadline = time.monotonic() + 30
        for launch in launches:
            while True:
                if proc.poll() is not None:
                    raise click.ClickException(
                        f"the simulated backends exited at start (code {proc.returncode}); "
                        f"is a port of theirs ({', '.join(str(x.port) for x in launches)}) "
                        "in use already?")
                try:
                    with urllib.request.urlopen(launch.health_url, timeout=1):
                        break
                except OSError:
                    if time.monotonic() > deadline:
                        raise click.ClickException(
                            f"simulated backend {launch.backend!r} did not start: "
                            f"{launch.health_url}") from None
                    time.sleep(0.05)

    return wait


def _ensure_demo_key(settings: Settings) -> str | None:
    """First start of the embedded database: create tenant 'demo' and return its key (shown
    once); None when tenants exist already."""
    from gateway.cli.database import Database, run_with_database

    async def main(db: Database) -> str | None:
        if await db.tenants.list_tenants():
            return None
        key, _ = await db.tenants.create_key(await db.tenants.ensure_tenant(DEMO_TENANT), "demo")
        return key

    return run_with_database(main, settings=settings)


def _no_tenants(settings: Settings) -> bool:
    """Whether the embedded database has no tenant yet (start-up then says how to make one)."""
    from gateway.cli.database import Database, run_with_database

    async def main(db: Database) -> bool:
        return not await db.tenants.list_tenants()

    return run_with_database(main, settings=settings)


@click.command()
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", default=8101, show_default=True, type=int)
@click.option("--api", type=click.Choice(["vllm", "openai", "anthropic"]), default="vllm",
              show_default=True, help="the server to play: a vLLM engine, OpenAI's API or "
              "Anthropic's Messages API")
@click.option("--model", default=None, help="served model name")
@click.option("--owned-by", default=None, help="/v1/models owned_by: say what it is")
@click.option("--max-model-len", type=int, default=None)
@click.option("--num-gpu-blocks", type=int, default=None)
@click.option("--block-size", type=int, default=None)
@click.option("--max-num-seqs", type=int, default=None)
@click.option("--decode-step-base-s", type=float, default=None)
@click.option("--prefill-tokens-per-s", type=float, default=None)
@click.option("--response-delay-s", type=float, default=None,
              help="fixed wait before generation (an API's network and queueing)")
@click.option("--time-scale", type=float, default=None)
@click.option("--quality-tier", type=int, default=None,
              help="start each chat answer with a quality mark for this tier (sim/quality.py)")
@click.option("--judge", is_flag=True, default=None,
              help="answer shadow-judging rubric prompts with the two answers' scores")
@click.option("--fleet", default=None, help="JSON list of {host, port, config}: several sims "
              "in this one process (what `gateway serve` starts for a policy's simulate: "
              "blocks); the other options are then ignored")
def sim(host: str, port: int, model: str | None, fleet: str | None,
        **knobs: float | int | str | None) -> None:
    """Run a simulated vLLM server (OpenAI API, /metrics, /tokenize), or a simulated OpenAI or
    Anthropic API, for demos and benchmarks."""
    from gateway.sim.config import SimConfig
    from gateway.sim.server import run_sim, run_sims

    try:
        if fleet is not None:
            entries = json.loads(fleet)
            run_sims([(SimConfig(**e["config"]), e["host"], int(e["port"])) for e in entries])
            return
        overrides: dict[str, object] = {k: v for k, v in knobs.items() if v is not None}
        if model:
            overrides["model_name"] = model
        config = SimConfig(**overrides)  # type: ignore[arg-type]
    except (ValueError, TypeError, KeyError) as exc:
        raise click.ClickException(f"bad simulator settings: {exc}") from None
    run_sim(config, host, port)
