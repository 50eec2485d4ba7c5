"""Shared fixtures. Services come from the environment that `.ci/run` prepares:
GATEWAY_TEST_POSTGRES_URL, GATEWAY_TEST_REDIS_URL, GATEWAY_TEST_VLLM_URL. Without them the
tests that need them are skipped, unless GATEWAY_TEST_REQUIRE_SERVICES=1 (CI) makes a missing
service a failure: CI must never pass by skipping."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

REQUIRE = os.environ.get("GATEWAY_TEST_REQUIRE_SERVICES") == "1"


def service_url(name: str) -> str:
    url = os.environ.get(name)
    if not url:
        if REQUIRE:
            pytest.fail(f"{name} is not set but GATEWAY_TEST_REQUIRE_SERVICES=1")
        pytest.skip(f"{name} not set")
    return url


@pytest.fixture(scope="session", autouse=True)
def session_state_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """The same for fixtures wider than a test (a module's gateway): set up before them."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("XDG_DATA_HOME", str(tmp_path_factory.mktemp("xdg-session")))
        yield


@pytest.fixture(autouse=True)
def own_state_home(tmp_path_factory: pytest.TempPathFactory,
                   monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test gets its own per-user state home (gateway/state_home.py), as it had its own
    ./.gateway when that was the default: tests never share, or touch the user's, state.
    In the environment, so the gateway processes a test starts inherit it."""
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path_factory.mktemp("xdg-data")))
    monkeypatch.delenv("GATEWAY_HOME", raising=False)


@pytest.fixture(scope="session")
def postgres_url() -> str:
    return service_url("GATEWAY_TEST_POSTGRES_URL")


@pytest.fixture(scope="session")
def redis_url() -> str:
    return service_url("GATEWAY_TEST_REDIS_URL")


@pytest.fixture(scope="session")
def vllm_url() -> str:
    return service_url("GATEWAY_TEST_VLLM_URL")


@pytest.fixture(scope="session")
def vllm_small_url() -> str:
    """A second real vLLM with a 4 MiB KV cache and 4 batch slots (scripts/test.sh)."""
    return service_url("GATEWAY_TEST_VLLM_SMALL_URL")
