"""Where the gateway keeps its local state (the embedded database, the demo's admin key, the
audit spool), resolved by one documented order so every command finds what `serve` wrote.

Order: `gateway --home DIR` (which sets GATEWAY_HOME), then GATEWAY_HOME, then `./.gateway`
if an earlier version left a database there, then the per-user default
($XDG_DATA_HOME/gateway, else ~/.local/share/gateway). GATEWAY_DATABASE_URL, when set, names
the database itself wherever the home is.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

HOME_ENV = "GATEWAY_HOME"
LEGACY_DIR = Path(".gateway")  # the default before there was a per-user one
DATABASE_FILE = "gateway.db"


@dataclass(frozen=True, slots=True)
class StateHome:
    path: Path
    source: str  # what chose it, as a user would name it: "GATEWAY_HOME", "per-user default"

    @property
    def legacy(self) -> bool:
        return self.source == "./.gateway"

    @property
    def database_file(self) -> Path:
        return self.path / DATABASE_FILE

    def notice(self) -> str | None:
        """One line for a user still on the old per-directory state, or None."""
        if not self.legacy:
            return None
        return (f"note: using the state in {self.path.resolve()} (this directory's .gateway); "
                f"new installs keep it in {user_default()}: move it there, or set {HOME_ENV}")


def user_default() -> Path:
    data = os.environ.get("XDG_DATA_HOME")
    base = Path(data) if data and Path(data).is_absolute() else Path.home() / ".local" / "share"
    return base / "gateway"


def resolve() -> StateHome:
    """The state home by the order above; reads the environment and one file's existence."""
    given = os.environ.get(HOME_ENV)
    if given:
        return StateHome(Path(given).expanduser(), HOME_ENV)
    if (LEGACY_DIR / DATABASE_FILE).is_file():
        return StateHome(LEGACY_DIR, "./.gateway")
    return StateHome(user_default(), "per-user default")
