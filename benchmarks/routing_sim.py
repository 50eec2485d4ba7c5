"""Runs one simulated vLLM server with any SimConfig field set (the `gateway sim` command exposes
only a few): `python benchmarks/routing_sim.py --port P --config '{"num_gpu_blocks": 256}'`.
"""

from __future__ import annotations

import argparse

import orjson

from gateway.sim.config import SimConfig
from gateway.sim.server import run_sim


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--config", default="{}", help="SimConfig fields as a JSON object")
    args = parser.parse_args()
    if args.host not in ("127.0.0.1", "localhost", "::1"):
        raise SystemExit("the benchmark simulator listens on loopback only")
    run_sim(SimConfig(**orjson.loads(args.config)), args.host, args.port)


if __name__ == "__main__":
    main()
