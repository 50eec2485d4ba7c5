"""How far over budget a fail_open tenant gets when Redis dies mid-run and comes back empty.

One gateway (SQLite audit, Redis of its own), one simulated engine, one tenant with a daily
budget. It spends half, Redis is SIGKILLed, requests go on for --outage-s seconds (or until
refused), Redis restarts without its data, requests go on until the budget refuses. Prints
what was spent in each phase, from the audit rows, and the overspend.

    python benchmarks/redis_outage_spend.py [--budget-usd 0.05 --outage-s 5]

GATEWAY_BUDGET_FAIL_OPEN_SHARE sets the share (0.1 unless set). To measure another version of
the gateway, run this file with PYTHONPATH pointing at that version's source.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

import openai

sys.path.append(str(Path(__file__).resolve().parents[1]))  # tests/ helpers

from gateway.app import create_app
from gateway.policy.loader import parse_policy
from gateway.settings import Settings
from gateway.sim.config import SimConfig
from gateway.sim.server import create_sim_app
from tests.e2e.conftest import FAST, create_key
from tests.resilience.processes import sims_policy
from tests.resilience.test_redis_outage import RedisServer
from tests.support.audit_mirror import mirror_rows
from tests.support.servers import ServerThread, serve

PROMPT = [{"role": "user", "content": "Tell me a long story about a careful accountant."}]


def call(url: str, key: str) -> int:
    with openai.OpenAI(base_url=f"{url}/v1", api_key=key, max_retries=0, timeout=10) as client:
        try:
            client.chat.completions.create(model="auto", messages=PROMPT,  # type: ignore[arg-type]
                                           max_tokens=200)
        except openai.APIStatusError as exc:
            return exc.status_code
    return 200


def spent(mirror: Path, answered: int, unmetered: bool | None = None) -> int:
    deadline = time.monotonic() + 10
    while True:
        rows = [r for r in mirror_rows(mirror) if r.get("status") == 200]
        if len(rows) >= answered or time.monotonic() > deadline:
            return sum(int(r["cost_micro_usd"]) for r in rows
                       if unmetered is None or r.get("unmetered") is unmetered)
        time.sleep(0.05)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--budget-usd", type=float, default=0.05)
    parser.add_argument("--outage-s", type=float, default=5.0)
    parser.add_argument("--max-after", type=int, default=1500)
    args = parser.parse_args()
    budget = round(args.budget_usd * 1e6)
    tmp = Path(tempfile.mkdtemp(prefix="outage-spend-"))
    redis = RedisServer(tmp)
    redis.start()
    db_url = f"sqlite+aiosqlite:///{tmp}/gw.db"
    key = create_key(db_url, "thrifty")
    sim = ServerThread(create_sim_app(SimConfig(model_name="sim-model", seed=3, **FAST)))
    sim.start()
    mirror = tmp / "audit.jsonl"
    settings = Settings(database_url=db_url, redis_url=redis.url, redis_timeout_s=0.25,
                        audit_log_path=str(mirror), upstream_read_timeout_s=5.0)
    policy = parse_policy(sims_policy({"sim": sim.port}, extra=(
        f"tenants:\n  thrifty:\n    budget: {{daily_usd: {args.budget_usd}}}\n"
        "    on_budget_store_error: fail_open\n")))
    answered = 0
    try:
        with serve(create_app(settings, policy=policy)) as gw:
            while spent(mirror, answered) < budget // 2:
                answered += call(gw.url, key) == 200
            before = spent(mirror, answered)
            redis.kill()
            ends = time.monotonic() + args.outage_s
            outage_served = outage_refused = 0
            while time.monotonic() < ends:
                if call(gw.url, key) == 200:
                    outage_served += 1
                else:
                    outage_refused += 1
                    time.sleep(0.05)
            answered += outage_served
            unmetered = spent(mirror, answered, unmetered=True)
            redis.start()  # no data: what it knew of the day's spend is gone
            after_served = 0
            for _ in range(args.max_after):
                if call(gw.url, key) == 429:
                    break
                after_served += 1
            answered += after_served
            total = spent(mirror, answered)
    finally:
        sim.stop()
        if redis.proc is not None:
            redis.kill()
    share = float(os.environ.get("GATEWAY_BUDGET_FAIL_OPEN_SHARE", "0.1"))
    print(f"budget ${budget / 1e6:.4f}/day, outage {args.outage_s:g} s, share {share}")
    print(f"{'phase':<34}{'requests':>10}{'spent $':>12}")
    print(f"{'before the kill':<34}{'':>10}{before / 1e6:>12.4f}")
    print(f"{'Redis down (served / refused)':<34}{f'{outage_served}/{outage_refused}':>10}"
          f"{unmetered / 1e6:>12.4f}")
    print(f"{'Redis back, empty (until 429)':<34}{after_served:>10}"
          f"{(total - before - unmetered) / 1e6:>12.4f}")
    print(f"{'total audited':<34}{answered:>10}{total / 1e6:>12.4f}")
    over = total - budget
    print(f"overspend ${over / 1e6:.4f} ({100 * over / budget:+.0f} % of the budget); "
          f"the share's bound: ${share * (budget - before) / 1e6:.4f}")


if __name__ == "__main__":
    main()
