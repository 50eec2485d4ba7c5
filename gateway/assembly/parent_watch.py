"""A worker of `gateway serve --workers N` dies with the process that started it: killed
outright (SIGKILL, OOM), that parent cannot stop its workers, which would otherwise serve on,
unsupervised, holding memory and the port."""

from __future__ import annotations

import ctypes
import logging
import os
import signal
import sys
import threading
import time

PARENT_ENV = "GATEWAY_SERVE_PARENT_PID"  # set by serve for the workers it starts
PR_SET_PDEATHSIG = 1
WATCH_INTERVAL_S = 1.0

log = logging.getLogger(__name__)


def follow_parent() -> None:
    """In a worker: SIGTERM (a graceful stop: requests finish, the audit drains) when the
    parent dies. Linux delivers it at once (PR_SET_PDEATHSIG); a thread watching the parent
    pid covers other systems and a parent that died before the signal was asked for."""
    text = os.environ.get(PARENT_ENV, "")
    if not text.isdigit() or int(text) == os.getpid():
        return  # not a worker (one process serves on its own)
    parent = int(text)
    if sys.platform.startswith("linux"):
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0) != 0:
            log.warning("prctl(PR_SET_PDEATHSIG) failed (errno %d); watching the parent "
                        "instead", ctypes.get_errno())
    threading.Thread(target=_watch, args=(parent,), name="parent-watch", daemon=True).start()


def die_with_parent() -> None:
    """A process pool's initializer: the pool's processes (token counting, Presidio) go when
    the process that made the pool goes, however it went."""
    parent = os.getppid()
    if sys.platform.startswith("linux"):
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
    threading.Thread(target=_watch, args=(parent,), name="parent-watch", daemon=True).start()


def _watch(parent: int) -> None:
    while os.getppid() == parent:
        time.sleep(WATCH_INTERVAL_S)
    log.warning("parent process %d is gone; process %d stops", parent, os.getpid())
    os.kill(os.getpid(), signal.SIGTERM)
