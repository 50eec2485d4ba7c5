"""How fast the command line and the demo start, as a newcomer meets them.

1. `gateway --help`, usage errors and `gateway status` (in an empty state home): wall time of
   the whole process (target < 0.5 s).
2. `gateway serve` with no configuration, in an empty directory: wall time from starting the
   process to the first answered chat completion through it (target < 5 s). Each run is a
   fresh directory, so it includes the first start's work: migrating the embedded SQLite
   file, creating tenant `demo`, starting the four simulated backends.

    python benchmarks/startup.py [--runs 5] [--markdown] [--no-demo]

The demo's simulated backends use fixed ports (8101, 8102, 8201, 8202); nothing else may
listen there during the run.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx
from machine import describe_machine
from tables import render_markdown, render_text

REPO = Path(__file__).resolve().parents[1]
KEY = re.compile(r"API key of tenant 'demo' \(shown once\): (sk-gw-\S+)")


def gateway_command() -> str:
    """The `gateway` beside this interpreter (the virtualenv running the benchmark)."""
    beside = Path(sys.executable).parent / "gateway"
    return str(beside) if beside.exists() else shutil.which("gateway") or "gateway"


# Usage errors answer before a command's own imports (its arguments are parsed first).
USAGE_ERRORS = (("report", "cost", "--bogus"), ("serve", "--bogus"), ("keys", "create"))


def time_command(gateway: str, *args: str) -> float:
    started = time.perf_counter()
    subprocess.run([gateway, *args], check=False, capture_output=True)
    return time.perf_counter() - started


def time_help(gateway: str) -> float:
    return time_command(gateway, "--help")


def time_status(gateway: str, home: Path) -> float:
    """`gateway status` as a user runs it: settings read, the state home looked at."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GATEWAY_")}
    started = time.perf_counter()
    subprocess.run([gateway, "status"], check=True, capture_output=True,
                   env={**env, "GATEWAY_HOME": str(home)})
    return time.perf_counter() - started


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def cpu_seconds(pid: int) -> float:
    """User + system CPU of a process and its children (the simulators), from /proc."""
    ticks = os.sysconf("SC_CLK_TCK")
    total = 0.0
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        total += (int(fields[11]) + int(fields[12])) / ticks  # utime, stime
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    except OSError:
        return total
    return total + sum(cpu_seconds(int(child)) for child in children)


def time_demo(gateway: str) -> tuple[float, float]:
    """Seconds from `gateway serve` to its first answered request (a fresh directory), and
    the CPU seconds the gateway and its simulators spent by then."""
    home = Path(tempfile.mkdtemp(prefix="gateway-startup-"))
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("GATEWAY_")}
    env["GATEWAY_HOME"] = str(home)  # a first start: its own, empty state home
    log_path = home / "serve.log"
    body = {"model": "auto", "max_tokens": 8, "messages": [{"role": "user", "content": "hi"}]}
    with log_path.open("wb") as log:
        started = time.perf_counter()
        proc = subprocess.Popen([gateway, "serve", "--port", str(port)], cwd=home, env=env,
                                stdout=log, stderr=subprocess.STDOUT)
        try:
            with httpx.Client(timeout=2) as client:
                while True:
                    if proc.poll() is not None:
                        raise RuntimeError(f"serve exited:\n{log_path.read_text()}")
                    if time.perf_counter() - started > 60:
                        raise RuntimeError(f"no answer in 60 s:\n{log_path.read_text()}")
                    found = KEY.search(log_path.read_text())
                    if found:
                        try:
                            reply = client.post(
                                f"http://127.0.0.1:{port}/v1/chat/completions", json=body,
                                headers={"authorization": f"Bearer {found.group(1)}"})
                            if reply.status_code == 200:
                                return time.perf_counter() - started, cpu_seconds(proc.pid)
                        except httpx.HTTPError:
                            pass
                    time.sleep(0.02)
        finally:
            proc.send_signal(signal.SIGTERM)
            proc.wait(timeout=30)
            shutil.rmtree(home, ignore_errors=True)


def spread(values: list[float]) -> list[str]:
    return [f"{min(values):.3f}", f"{statistics.median(values):.3f}", f"{max(values):.3f}"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--markdown", action="store_true")
    parser.add_argument("--no-demo", action="store_true",
                        help="only the commands that must answer at once (no simulators)")
    args = parser.parse_args()
    gateway = gateway_command()
    machine = describe_machine(REPO)
    time_help(gateway)  # warm the page cache: every later run reads the same files
    helps = [time_help(gateway) for _ in range(args.runs)]
    demos = [] if args.no_demo else [time_demo(gateway) for _ in range(args.runs)]
    headers = ["what", "min s", "median s", "max s", "target"]
    usage = {cmd: [time_command(gateway, *cmd) for _ in range(args.runs)]
             for cmd in USAGE_ERRORS}
    with tempfile.TemporaryDirectory(prefix="gateway-status-") as home:
        statuses = [time_status(gateway, Path(home)) for _ in range(args.runs)]
    rows = [["gateway --help (wall)", *spread(helps), "< 0.5 s"],
            *[[f"gateway {' '.join(a)} (usage error, wall)", *spread(t), "< 0.5 s"]
              for a, t in usage.items()],
            ["gateway status (wall)", *spread(statuses), "< 0.5 s"]]
    if demos:
        rows += [["gateway serve (demo) to first answer (wall)",
                  *spread([d[0] for d in demos]), "< 5 s"],
                 ["  CPU spent by then: gateway + simulators", *spread([d[1] for d in demos]),
                  ""]]
    render = render_markdown if args.markdown else render_text
    print(f"{machine.date}; {machine.summary()}; {machine.python}; code {machine.revision}; "
          f"load average {machine.load_avg_1m:.2f}; {args.runs} runs each")
    print(render(headers, rows))


if __name__ == "__main__":
    main()
