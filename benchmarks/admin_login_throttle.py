"""What a wrong-admin-key attack on the login form gets, and how long the real admin then
waits to sign in: from another address, and from the attacker's own (a shared NAT).

One gateway (SQLite) with an admin key. An attacker on 127.0.0.1 posts wrong keys to
/admin/login, one at a time, --tries of them (and for at least --attack-s seconds); it stops;
the admin posts the right key, honouring Retry-After, from 127.0.0.2 and then from 127.0.0.1,
and the time to the 303 is measured.

    python benchmarks/admin_login_throttle.py [--tries 500 --attack-s 0]

To measure another version of the gateway, run this file with PYTHONPATH pointing at that
version's source.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import httpx

sys.path.append(str(Path(__file__).resolve().parents[1]))  # tests/ helpers

from gateway.app import create_app
from gateway.policy.loader import parse_policy
from gateway.settings import Settings
from tests.support.servers import free_port, serve

ADMIN_KEY = "sk-admin-benchmark-" + "x" * 24


def client(url: str, address: str) -> httpx.Client:
    return httpx.Client(base_url=url, timeout=10,
                        transport=httpx.HTTPTransport(local_address=address))


def sign_in(url: str, address: str) -> tuple[float, int]:
    """(seconds until the right key got a session, tries it took)."""
    started, tries = time.monotonic(), 0
    with client(url, address) as admin:
        while True:
            tries += 1
            reply = admin.post("/admin/login", data={"key": ADMIN_KEY})
            if reply.status_code == 303:
                return time.monotonic() - started, tries
            time.sleep(float(reply.headers.get("retry-after", "1")))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tries", type=int, default=500)
    parser.add_argument("--attack-s", type=float, default=0.0)
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="login-throttle-"))
    settings = Settings(database_url=f"sqlite+aiosqlite:///{tmp}/gw.db", admin_key=ADMIN_KEY)
    policy = parse_policy(  # a backend nobody calls: only the admin surface is exercised
        "version: 1\nbackends:\n  - name: sim\n    provider: vllm\n"
        f"    base_url: http://127.0.0.1:{free_port()}/v1\n    model: m\n"
        "    context_window: 1024\nmodels:\n  auto: [sim]\n")
    counts: dict[int, int] = {}
    with serve(create_app(settings, policy=policy)) as gw:
        started = time.monotonic()
        with client(gw.url, "127.0.0.1") as attacker:
            n = 0
            while n < args.tries or time.monotonic() - started < args.attack_s:
                status = attacker.post("/admin/login", data={"key": f"guess-{n}"}).status_code
                counts[status] = counts.get(status, 0) + 1
                n += 1
        attack_s = time.monotonic() - started
        other_s, other_tries = sign_in(gw.url, "127.0.0.2")
        same_s, same_tries = sign_in(gw.url, "127.0.0.1")
    print(f"attack: {n} wrong keys in {attack_s:.2f} s from one address; "
          f"compared (401): {counts.get(401, 0)}, throttled (429): {counts.get(429, 0)}")
    print(f"{'the admin signs in from':<34}{'seconds':>9}{'tries':>7}")
    print(f"{'another address':<34}{other_s:>9.2f}{other_tries:>7}")
    print(f"{'the attacker address':<34}{same_s:>9.2f}{same_tries:>7}")


if __name__ == "__main__":
    main()
