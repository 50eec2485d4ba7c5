"""The running `gateway serve`'s address, kept in the state home while it runs, so `gateway
status` (from any directory) can say where it is and whether it answers."""

from __future__ import annotations

import atexit
import json
import os
import urllib.request
from dataclasses import dataclass
from pathlib import Path

RECORD_NAME = "serve.json"


@dataclass(frozen=True, slots=True)
class Running:
    url: str
    pid: int
    policy: str = ""  # the policy file it loaded ("" for the demo policy in the package)

    def alive(self) -> bool:
        try:
            os.kill(self.pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:  # someone else's process: it exists
            return True
        return True

    def answers(self, timeout_s: float = 0.2) -> bool:
        # Short on purpose: status must answer at once, and a live gateway answers /healthz
        # in well under a millisecond.
        try:
            with urllib.request.urlopen(f"{self.url}/healthz", timeout=timeout_s) as reply:
                return bool(reply.status == 200)
        except OSError:
            return False


def record(home: Path, host: str, port: int, policy: str = "") -> bool:
    """Written before serving; removed at exit unless a later `serve` replaced it. False
    where the home cannot be written (a read-only root filesystem in Kubernetes): a
    convenience for `gateway status` never stops a gateway from starting."""
    shown = f"[{host}]" if ":" in host else host
    path = home / RECORD_NAME
    pid = os.getpid()
    try:
        home.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps({"url": f"http://{shown}:{port}", "pid": pid,
                                    "policy": policy}) + "\n", encoding="utf-8")
    except OSError:
        return False

    def forget() -> None:
        found = read(home)
        if found is not None and found.pid == pid:
            path.unlink(missing_ok=True)

    atexit.register(forget)
    return True


def read(home: Path) -> Running | None:
    try:
        data = json.loads((home / RECORD_NAME).read_text(encoding="utf-8"))
        return Running(str(data["url"]), int(data["pid"]), str(data.get("policy") or ""))
    except FileNotFoundError:
        return None
    except (OSError, ValueError, KeyError, TypeError):  # half-written or hand-edited
        return None
