"""`gateway serve` (the gateway under uvicorn, plus the demo's simulated backends) and
`gateway sim` (one simulated vLLM server)."""

from __future__ import annotations

import asyncio
import atexit
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from types import FrameType
from urllib.parse import urlparse

import click
import uvicorn
from pydantic import ValidationError

from gateway.api.connection_guard import GuardedHttpToolsProtocol
from gateway.classify.presidio import PresidioUnavailable, presidio_config
from gateway.policy.loader import PolicyError, PolicySet, load_policy
from gateway.settings import Settings
from gateway.telemetry.multiprocess import MULTIPROC_ENV, prepare_dir

DEMO_TENANT = "demo"
WORKER_START_TIMEOUT_S = 60


@click.command()
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", default=8080, show_default=True, type=int)
@click.option("--policy", "policy_path", type=click.Path(path_type=Path), default=None,
              help="policy YAML (default: GATEWAY_POLICY_PATH or policies/default.yaml)")
@click.option("--workers", default=1, show_default=True, type=int,
              help="uvicorn worker processes (in-process state is per worker)")
@click.option("--no-sim", is_flag=True,
              help="do not start the simulated backends the policy declares")
def serve(host: str, port: int, policy_path: Path | None, workers: int, no_sim: bool) -> None:
    """Run the gateway."""
    if policy_path is not None:
        os.environ["GATEWAY_POLICY_PATH"] = str(policy_path)
    try:
        settings = Settings()
    except ValidationError as exc:  # e.g. a secret given twice, or its file unreadable
        raise click.ClickException(
            "settings: " + "; ".join(str(e["msg"]) for e in exc.errors())) from None
    if not settings.policy_path.exists():
        raise click.ClickException(
            f"no policy file at {settings.policy_path} (from {Path.cwd()}): run from the "
            "repository root for the demo policy, or pass --policy / set GATEWAY_POLICY_PATH")
    try:
        policy = load_policy(settings.policy_path)
    except PolicyError as exc:
        raise click.ClickException(f"the policy does not validate:\n{exc}") from None
    if settings.presidio:
        try:
            presidio_config(settings.presidio_entities, settings.presidio_min_score,
                            settings.presidio_model)
        except PresidioUnavailable as exc:
            raise click.ClickException(str(exc)) from None
    if settings.start_simulators and not no_sim and policy.simulators:
        _start_simulators(policy)
    if settings.is_embedded_db:
        _ensure_demo_key(settings)
    if workers > 1:
        # Set after the simulators started: their own metrics stay out of the gateway's.
        _share_metrics(settings.metrics_dir)
    click.echo(f"gateway on http://{host}:{port}/v1  (policy {settings.policy_path}; "
               f"models: {', '.join(policy.public_models())})", err=True)
    # uvicorn re-raises the SIGTERM it handled once its graceful shutdown is over; exit 0
    # then, so a supervisor sees a clean stop rather than death by signal.
    signal.signal(signal.SIGTERM, _stopped)
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


def _share_metrics(directory: Path | None) -> None:
    """Workers keep their Prometheus values in one directory, so any of them answers a scrape
    with all of them (telemetry/multiprocess.py); emptied now, as a new run starts from 0."""
    if directory is None:
        directory = Path(tempfile.mkdtemp(prefix="gateway-metrics-"))
        atexit.register(shutil.rmtree, directory, ignore_errors=True)
    path = prepare_dir(directory)
    os.environ[MULTIPROC_ENV] = str(path)  # inherited by the workers uvicorn spawns


def _stopped(signum: int, frame: FrameType | None) -> None:
    sys.exit(0)


def _start_simulators(policy: PolicySet) -> None:
    procs: list[subprocess.Popen[bytes]] = []
    urls = []
    for name, spec in policy.simulators.items():
        backend = policy.backends[name]
        url = urlparse(backend.base_url)
        args = [sys.executable, "-m", "gateway", "sim", "--host", url.hostname or "127.0.0.1",
                "--port", str(url.port or 80), "--model", backend.model,
                "--max-model-len", str(spec.max_model_len or backend.context_window)]
        for flag, value in (("--num-gpu-blocks", spec.num_gpu_blocks),
                            ("--max-num-seqs", spec.max_num_seqs),
                            ("--decode-step-base-s", spec.decode_step_base_s),
                            ("--prefill-tokens-per-s", spec.prefill_tokens_per_s)):
            if value is not None:
                args += [flag, str(value)]
        procs.append(subprocess.Popen(args))
        urls.append(f"{url.scheme}://{url.netloc}/health")
        click.echo(f"started simulated vLLM {name!r} ({backend.model}) at {backend.base_url}",
                   err=True)

    def stop() -> None:
        for proc in procs:
            proc.terminate()
        for proc in procs:
            try:
                proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                proc.kill()

    atexit.register(stop)
    deadline = time.monotonic() + 15
    for health in urls:
        while True:
            try:
                with urllib.request.urlopen(health, timeout=1):
                    break
            except OSError:
                if time.monotonic() > deadline:
                    raise click.ClickException(
                        f"simulated backend did not start: {health}"
                    ) from None
                time.sleep(0.1)


def _ensure_demo_key(settings: Settings) -> None:
    """First start of the embedded demo: create tenant 'demo' and show its key once."""
    from gateway.db.engine import create_engine
    from gateway.db.migrate import upgrade
    from gateway.tenancy.repository import TenantRepository

    async def main() -> str | None:
        engine = create_engine(settings.database_url)
        try:
            await upgrade(engine)
            pepper = (
                settings.key_pepper.get_secret_value().encode() if settings.key_pepper else None
            )
            repo = TenantRepository(engine, pepper)
            if await repo.list_tenants():
                return None
            key, _ = await repo.create_key(await repo.ensure_tenant(DEMO_TENANT), "demo")
            return key
        finally:
            await engine.dispose()

    key = asyncio.run(main())
    if key:
        click.echo(f"\nCreated tenant '{DEMO_TENANT}' with API key (shown once):\n\n    {key}\n",
                   err=True)


@click.command()
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", default=8101, show_default=True, type=int)
@click.option("--model", default=None, help="served model name")
@click.option("--max-model-len", type=int, default=None)
@click.option("--num-gpu-blocks", type=int, default=None)
@click.option("--block-size", type=int, default=None)
@click.option("--max-num-seqs", type=int, default=None)
@click.option("--decode-step-base-s", type=float, default=None)
@click.option("--prefill-tokens-per-s", type=float, default=None)
@click.option("--time-scale", type=float, default=None)
def sim(host: str, port: int, model: str | None, **knobs: float | int | None) -> None:
    """Run a simulated vLLM server (OpenAI API, /metrics, /tokenize) for demos and benchmarks."""
    from gateway.sim.config import SimConfig
    from gateway.sim.server import run_sim

    overrides: dict[str, object] = {k: v for k, v in knobs.items() if v is not None}
    if model:
        overrides["model_name"] = model
    run_sim(SimConfig(**overrides), host, port)  # type: ignore[arg-type]
