"""Secrets as files: how they are read, which way wins (neither: both is an error), and how a
rotated file is picked up, for the settings (GATEWAY_*_FILE) and the policy (api_key_file)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from pydantic import ValidationError
from sqlalchemy.engine import make_url

from gateway.policy.loader import PolicyError, parse_policy
from gateway.secret_files import (
    GatewaySecrets,
    RotatingSecret,
    SecretFileError,
    read_secret_file,
)
from gateway.settings import Settings

SECRETS = ["admin_key", "metrics_key", "key_pepper"]


def write(path: Path, text: str) -> Path:
    path.write_text(text)
    path.chmod(0o600)
    return path


def test_a_secret_file_is_read_without_its_trailing_line_break(tmp_path: Path) -> None:
    assert read_secret_file(write(tmp_path / "k", "s3cret\n")) == "s3cret"
    assert read_secret_file(write(tmp_path / "k", "  s3cret \r\n\n")) == "s3cret"


@pytest.mark.parametrize(("make", "says"), [
    (lambda p: p, "does not exist"),
    (lambda p: write(p, "\n"), "is empty"),
    (lambda p: (p.mkdir(), p)[1], "is a directory"),
    (lambda p: (p.write_bytes(b"\xff\xfe\xfa"), p)[1], "cannot be read"),
])
def test_an_unusable_secret_file_is_named_with_the_reason(tmp_path: Path, make, says) -> None:  # type: ignore[no-untyped-def]
    path = make(tmp_path / "key")
    with pytest.raises(SecretFileError, match=says) as caught:
        read_secret_file(path)
    assert str(path) in str(caught.value)


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads any file")
def test_an_unreadable_secret_file_says_so(tmp_path: Path) -> None:
    path = write(tmp_path / "key", "x")
    path.chmod(0o000)
    with pytest.raises(SecretFileError, match="not readable"):
        read_secret_file(path)


@pytest.mark.parametrize("name", SECRETS)
def test_settings_read_each_secret_from_its_file(tmp_path: Path, name: str) -> None:
    settings = Settings(**{f"{name}_file": write(tmp_path / name, "from-file\n")})
    value = getattr(settings, name)
    assert value is not None and value.get_secret_value() == "from-file"


@pytest.mark.parametrize("name", SECRETS)
def test_a_secret_given_both_ways_is_refused_naming_both(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    env = f"GATEWAY_{name.upper()}"
    monkeypatch.setenv(env, "inline-secret-value")
    monkeypatch.setenv(f"{env}_FILE", str(write(tmp_path / name, "file-secret-value")))
    with pytest.raises(ValidationError) as caught:
        Settings()
    message = str(caught.value)
    assert f"{env} and {env}_FILE are both set" in message
    # the error is logged at start-up: neither value may appear in it
    assert "inline-secret-value" not in message and "file-secret-value" not in message


def test_an_empty_inline_value_is_unset_not_a_second_way(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GATEWAY_ADMIN_KEY", "")  # compose's `${VAR:-}` passes "" through
    monkeypatch.setenv("GATEWAY_ADMIN_KEY_FILE", str(write(tmp_path / "k", "from-file")))
    admin_key = Settings().admin_key
    assert admin_key is not None and admin_key.get_secret_value() == "from-file"


def test_a_missing_secret_file_stops_start_up_naming_the_setting(tmp_path: Path) -> None:
    with pytest.raises(ValidationError, match=r"GATEWAY_METRICS_KEY_FILE: .*does not exist"):
        Settings(metrics_key_file=tmp_path / "absent")


def test_a_rotated_file_is_read_again_only_once_it_changed(tmp_path: Path) -> None:
    path = write(tmp_path / "admin", "old")
    secret = RotatingSecret("GATEWAY_ADMIN_KEY", None, path)
    assert secret.value == "old"
    assert not secret.refresh()  # unchanged file: not read again
    write(path, "new-and-longer")
    assert secret.refresh() and secret.value == "new-and-longer"


def test_a_rotation_caught_half_way_keeps_the_last_good_value(tmp_path: Path) -> None:
    path = write(tmp_path / "admin", "good")
    secret = RotatingSecret("GATEWAY_ADMIN_KEY", None, path)
    write(path, "")  # truncated, not yet written
    assert not secret.refresh() and secret.value == "good"
    path.unlink()
    assert not secret.refresh() and secret.value == "good"
    write(path, "next")
    assert secret.refresh() and secret.value == "next"


def test_forced_refresh_rereads_an_unchanged_looking_file(tmp_path: Path) -> None:
    path = write(tmp_path / "admin", "aaaa")
    secret = RotatingSecret("GATEWAY_ADMIN_KEY", None, path)
    stat = path.stat()
    write(path, "bbbb")  # same size, and the old mtime put back: no visible change
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    secret.refresh(force=True)  # what SIGHUP does
    assert secret.value == "bbbb"


def test_inline_secrets_never_change(tmp_path: Path) -> None:
    secrets = GatewaySecrets(RotatingSecret("A", "inline"), RotatingSecret("M", None))
    secrets.refresh(force=True)
    assert secrets.admin_key == "inline" and secrets.metrics_key is None


def backend_yaml(key_lines: str) -> str:
    # a self-hosted vLLM started with --api-key: a key, and no external-zone rules needed
    return ("version: 1\nbackends:\n  - name: gpt\n    provider: vllm\n"
            "    base_url: http://vllm:8000/v1\n    model: llama\n"
            f"    zone: self_hosted\n    context_window: 8192\n{key_lines}")


def test_a_provider_key_file_is_read_when_the_policy_loads(tmp_path: Path) -> None:
    path = write(tmp_path / "openai", "vllm-key-from-file\n")
    backend = parse_policy(backend_yaml(f"    api_key_file: {path}\n")).backends["gpt"]
    assert backend.api_key == "vllm-key-from-file" and backend.api_key_file == str(path)
    assert "vllm-key-from-file" not in repr(backend)  # compiled backends get logged and printed


def test_a_provider_key_given_both_ways_is_refused_naming_both(tmp_path: Path) -> None:
    path = write(tmp_path / "openai", "vllm-key")
    with pytest.raises(PolicyError, match="api_key_env and api_key_file are both given"):
        parse_policy(backend_yaml(f"    api_key_env: OPENAI_API_KEY\n    api_key_file: {path}\n"))


def test_a_provider_key_file_must_be_an_absolute_path() -> None:
    with pytest.raises(PolicyError, match="api_key_file"):
        parse_policy(backend_yaml("    api_key_file: secrets/openai\n"))


def test_an_unreadable_provider_key_file_names_the_file_line_and_key(tmp_path: Path) -> None:
    absent = tmp_path / "absent"
    with pytest.raises(PolicyError) as caught:
        parse_policy(backend_yaml(f"    api_key_file: {absent}\n"), "policy.yaml")
    (problem,) = caught.value.problems
    assert problem.path == "backends[0].api_key_file" and problem.line == 9
    assert str(absent) in problem.message and "does not exist" in problem.message


def test_the_database_password_file_goes_into_the_url(tmp_path: Path) -> None:
    path = write(tmp_path / "pg", "p@ss/w:rd\n")  # not URL-safe: it must be escaped
    settings = Settings(database_url="postgresql+asyncpg://gateway@postgres:5432/gateway",
                        database_password_file=path)
    url = make_url(settings.database_url)
    assert url.password == "p@ss/w:rd" and url.host == "postgres" and url.username == "gateway"


def test_a_database_password_given_both_ways_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValidationError, match="GATEWAY_DATABASE_URL has a password and "
                                              "GATEWAY_DATABASE_PASSWORD_FILE is set"):
        Settings(database_url="postgresql+asyncpg://gateway:inline@postgres/gateway",
                 database_password_file=write(tmp_path / "pg", "file"))
