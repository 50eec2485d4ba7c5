"""The state home's resolution order: GATEWAY_HOME, then a legacy ./.gateway holding a
database, then the per-user default."""

from __future__ import annotations

from pathlib import Path

import pytest

from gateway.state_home import resolve


@pytest.fixture
def in_empty_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    return tmp_path


def test_the_per_user_default_follows_xdg_data_home(in_empty_dir: Path) -> None:
    home = resolve()
    assert home.path == in_empty_dir / "data" / "gateway"
    assert home.source == "per-user default" and home.notice() is None


def test_without_xdg_data_home_it_is_under_the_users_home(
    in_empty_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("XDG_DATA_HOME")
    monkeypatch.setenv("HOME", str(in_empty_dir / "user"))
    assert resolve().path == in_empty_dir / "user" / ".local" / "share" / "gateway"


def test_an_old_dot_gateway_with_a_database_is_kept_with_a_notice(in_empty_dir: Path) -> None:
    (in_empty_dir / ".gateway").mkdir()
    assert resolve().source == "per-user default"  # an empty folder is not state
    (in_empty_dir / ".gateway" / "gateway.db").write_bytes(b"")
    home = resolve()
    assert home.path == Path(".gateway") and home.legacy
    notice = home.notice()
    assert notice is not None and "\n" not in notice
    assert str(in_empty_dir / "data" / "gateway") in notice and "GATEWAY_HOME" in notice


def test_gateway_home_wins_over_everything(
    in_empty_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (in_empty_dir / ".gateway").mkdir()
    (in_empty_dir / ".gateway" / "gateway.db").write_bytes(b"")
    monkeypatch.setenv("GATEWAY_HOME", "~/gw")
    monkeypatch.setenv("HOME", str(in_empty_dir))
    home = resolve()
    assert home.path == in_empty_dir / "gw" and home.source == "GATEWAY_HOME"


def test_the_embedded_database_lives_in_the_home(in_empty_dir: Path) -> None:
    from gateway.settings import Settings

    settings = Settings()
    assert settings.database_url == (
        f"sqlite+aiosqlite:///{in_empty_dir / 'data' / 'gateway' / 'gateway.db'}")
    assert settings.spool_dir == in_empty_dir / "data" / "gateway" / "audit-spool"
