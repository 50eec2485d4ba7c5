"""Where public hard and everyday prompts go through the running demo: the user's case.

    python benchmarks/demo_routing.py [--reference-model FILE] [--prompts FILE]
                                      [--concurrency 8] [--limit N]

Starts `gateway serve` with the demo policy as shipped (its rules, simulated engines and
APIs, the demo tenant's budget and rate limits, audit to SQLite in a fresh state home), sends
Arena-Hard v2.0's hard prompts and Vicuna-bench's everyday questions (neither trained nor
calibrated on; training/task_types/README.md) with the official openai SDK, and counts the
rule and backend of each reply from the gateway's headers. With `--reference-model`, the
same run starts a second gateway with GATEWAY_COMPLEXITY_MODEL pointing at that file (an
earlier shipped model, e.g. `git show REV:gateway/classify/models/complexity_encoder.json`)
and prints it beside. Shares come with 90 % Wilson intervals. Issue 31's sealed check: hard
prompts to the frontier ≥ 70 %, everyday ≤ 10 %. `--prompts FILE` sends a file of
`{"prompt", "kind"}` rows instead (e.g. evaluation/short_hard_everyday_blind.jsonl).
"""

from __future__ import annotations

import argparse
import asyncio
import math
import os
import re
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

import openai
from services import Service, free_port
from tables import render_text

from gateway.offline.evaluation.public_prompts import hard_and_everyday, written_hard_and_everyday
from gateway.package_data import demo_policy_path

REPO = Path(__file__).resolve().parents[1]
FRONTIER = {"gpt-4o", "claude-sonnet"}
RULES = ("sensitive-stays-home", "long-document", "hard-to-frontier", "cheapest-good-enough")


def wilson(k: int, n: int, z: float = 1.6449) -> tuple[float, float]:
    if n == 0:
        return 0.0, 0.0
    p = k / n
    d = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / d
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / d
    return centre - half, centre + half


def start_demo(home: Path, model: Path | None) -> tuple[Service, int, str]:
    """The demo policy with its ports moved to free ones, served from a fresh state home."""
    text = demo_policy_path().read_text()
    for port in sorted(set(re.findall(r"127\.0\.0\.1:(\d+)", text))):
        text = text.replace(f"127.0.0.1:{port}", f"127.0.0.1:{free_port()}")
    policy = home / "policy.yaml"
    policy.write_text(text)
    env = {k: v for k, v in os.environ.items() if not k.startswith("GATEWAY_")}
    env["GATEWAY_HOME"] = str(home / "state")
    if model is not None:
        env["GATEWAY_COMPLEXITY_MODEL"] = str(model)
    made = subprocess.run([sys.executable, "-m", "gateway", "keys", "create", "--tenant", "demo"],
                          cwd=home, env=env, capture_output=True, text=True, timeout=120,
                          check=True)
    key = made.stdout.strip().splitlines()[-1]
    port = free_port()
    serve = Service("serve", [sys.executable, "-m", "gateway", "serve", "--policy", str(policy),
                              "--port", str(port)], home / "serve.log", env)
    serve.wait_ready(port, "/health")
    return serve, port, key


async def route_all(port: int, key: str, prompts: list[str], concurrency: int,
                    ) -> list[tuple[str, str]]:
    """(rule, backend) per prompt, in order."""
    gate = asyncio.Semaphore(concurrency)
    async with openai.AsyncOpenAI(base_url=f"http://127.0.0.1:{port}/v1", api_key=key,
                                  max_retries=2, timeout=120) as client:
        async def one(text: str) -> tuple[str, str]:
            async with gate:
                raw = await client.chat.completions.with_raw_response.create(
                    model="auto", max_tokens=8, messages=[{"role": "user", "content": text}])
                raw.parse()
                return raw.headers["x-gateway-rule"], raw.headers["x-gateway-backend"]

        return await asyncio.gather(*(one(p) for p in prompts))


def summarise(label: str, hard: list[tuple[str, str]], easy: list[tuple[str, str]],
              ) -> list[list[str]]:
    rows = []
    for kind, routes in (("hard", hard), ("everyday", easy)):
        rules = Counter(rule for rule, _ in routes)
        reached = sum(backend in FRONTIER for _, backend in routes)
        low, high = wilson(reached, len(routes))
        rows.append([label, kind, str(len(routes)), *(str(rules[r]) for r in RULES),
                     f"{reached / len(routes):.3f} [{low:.3f}, {high:.3f}]"])
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reference-model", type=Path, default=None,
                        help="a complexity model file served beside the shipped one")
    parser.add_argument("--prompts", type=Path, default=None,
                        help="hard and everyday prompts as {prompt, kind} rows (default: the"
                        " public Arena-Hard v2.0 and Vicuna-bench sets)")
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--limit", type=int, default=0, help="first N hard prompts only")
    args = parser.parse_args()
    hard, easy = (written_hard_and_everyday(args.prompts) if args.prompts is not None
                  else hard_and_everyday(REPO / "training" / "task_types"))
    if args.limit:
        hard = hard[:args.limit]
    configs: list[tuple[str, Path | None]] = [("shipped model", None)]
    if args.reference_model is not None:
        configs.append((f"reference ({args.reference_model.name})", args.reference_model))
    rows: list[list[str]] = []
    for label, model in configs:
        with tempfile.TemporaryDirectory(prefix="demo-routing-") as folder:
            serve, port, key = start_demo(Path(folder), model)
            with serve:
                routes = asyncio.run(route_all(port, key, [*hard, *easy], args.concurrency))
        rows += summarise(label, routes[:len(hard)], routes[len(hard):])
    print(render_text(["model", "prompts", "n", *RULES, "to the frontier, 90 % CI"], rows))


if __name__ == "__main__":
    main()
