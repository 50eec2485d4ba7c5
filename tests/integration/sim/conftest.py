"""Runs a sim under a real uvicorn server on 127.0.0.1 (free port, background thread)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager

import httpx
import pytest
import uvicorn
from prometheus_client.parser import text_string_to_metric_families

from gateway.sim import SimConfig, create_sim_app

API_CONFIG = SimConfig(model_name="sim-test", time_scale=0.02, seed=7)


@contextmanager
def serve_sim(config: SimConfig) -> Iterator[str]:
    """Yield the base URL (no /v1) of a sim serving `config` until the block exits."""
    server = uvicorn.Server(
        uvicorn.Config(
            create_sim_app(config),
            host="127.0.0.1",
            port=0,
            loop="uvloop",
            http="httptools",
            ws="none",
            lifespan="on",
            log_level="warning",
            access_log=False,
        )
    )
    thread = threading.Thread(target=server.run, name=f"sim-{config.model_name}", daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("sim server did not start")
        time.sleep(0.01)
    port = server.servers[0].sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)


@pytest.fixture(scope="module")
def sim_url() -> Iterator[str]:
    with serve_sim(API_CONFIG) as url:
        yield url


def scrape(base_url: str) -> dict[str, float]:
    """/metrics as {sample name: value} for the unlabelled-by-reason series, and
    'name{label=value}' keys for series with an extra label."""
    text = httpx.get(f"{base_url}/metrics", timeout=5).text
    values: dict[str, float] = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            extra = {k: v for k, v in sample.labels.items() if k not in ("engine", "model_name")}
            key = sample.name
            if extra:
                key += "{" + ",".join(f"{k}={v}" for k, v in sorted(extra.items())) + "}"
            values[key] = sample.value
    return values


@pytest.fixture(scope="session")
def sim_server() -> Callable[[SimConfig], AbstractContextManager[str]]:
    return serve_sim


@pytest.fixture(scope="session")
def metrics_of() -> Callable[[str], dict[str, float]]:
    return scrape
