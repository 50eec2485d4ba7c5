"""Secrets handed over as files (Docker secrets, Kubernetes Secret volumes): read with clear
errors, and re-read when the file changes, so a rotated secret takes effect without a restart.

A file keeps a secret out of the process environment, which `docker inspect`, /proc/<pid>/environ
and every child process can read.
"""

from __future__ import annotations

import logging
import threading
from pathlib import Path

log = logging.getLogger("gateway.secrets")

# (inode, mtime, size): Kubernetes swaps a Secret volume's files by replacing a symlink, and
# Docker rewrites a bind-mounted file in place; either changes one of these.
Signature = tuple[int, int, int] | None


class SecretFileError(ValueError):
    """A secret file that cannot be used: missing, unreadable, empty or not text."""


def read_secret_file(path: Path) -> str:
    """The secret in `path`, without the line break editors and `echo` leave at its end."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise SecretFileError(f"{path} does not exist") from None
    except PermissionError:
        raise SecretFileError(f"{path} is not readable by this user") from None
    except IsADirectoryError:
        raise SecretFileError(f"{path} is a directory, not a file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise SecretFileError(f"{path} cannot be read ({type(exc).__name__})") from None
    value = text.strip()
    if not value:
        raise SecretFileError(f"{path} is empty")
    return value


def signature(path: Path) -> Signature:
    try:
        stat = path.stat()
    except OSError:
        return None
    return stat.st_ino, stat.st_mtime_ns, stat.st_size


def refuse_both(env_name: str, inline: object, path: Path | None) -> None:
    """A secret given inline and as a file is a mistake (which one wins?): name both."""
    if inline is not None and path is not None:
        raise SecretFileError(
            f"{env_name} and {env_name}_FILE are both set: give the secret one way")


class RotatingSecret:
    """One secret: a fixed inline value, or a file that `refresh` reads again once it changed.

    A changed file that cannot be used (half-written, emptied, unreadable) keeps the last
    good value in force, logged; the gateway never falls back to "no key" mid-flight.
    """

    def __init__(self, name: str, value: str | None, path: Path | None = None) -> None:
        self.name = name
        self._path = path
        self._lock = threading.Lock()  # refresh runs in worker threads (SIGHUP, reloads)
        self._signature = signature(path) if path is not None else None
        self._value = read_secret_file(path) if path is not None else value

    @property
    def value(self) -> str | None:
        return self._value

    def refresh(self, *, force: bool = False) -> bool:
        """Read the file again if it changed (or if forced); True when the value changed."""
        if self._path is None:
            return False
        with self._lock:
            now = signature(self._path)
            if not force and now == self._signature:
                return False
            try:
                value = read_secret_file(self._path)
            except SecretFileError as exc:
                log.error("%s: keeping the current value: %s", self.name, exc)
                return False
            self._signature = now
            changed, self._value = value != self._value, value
        if changed:
            log.info("%s: re-read from %s", self.name, self._path)
        return changed


class GatewaySecrets:
    """The keys the gateway's own endpoints check, as the handlers read them per request."""

    def __init__(self, admin_key: RotatingSecret, metrics_key: RotatingSecret) -> None:
        self._all = (admin_key, metrics_key)
        self._admin_key, self._metrics_key = admin_key, metrics_key

    @property
    def admin_key(self) -> str | None:
        return self._admin_key.value

    @property
    def metrics_key(self) -> str | None:
        return self._metrics_key.value

    def refresh(self, *, force: bool = False) -> None:
        """Re-read the files that changed (all of them if forced, as on SIGHUP)."""
        for secret in self._all:
            secret.refresh(force=force)
