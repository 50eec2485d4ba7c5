#!/usr/bin/env bash
# Stop the vLLM server that serve.sh started on PORT, and wait until all of its processes
# (API server, VLLM::EngineCore, VLLM::Worker) are gone.
#
#   bash scripts/vllm-cpu/stop.sh 8811
#
# SIGTERM goes to the API server, which shuts its engine and worker down (about 3 s). Any
# process of the server's group still alive after STOP_TIMEOUT seconds (default 30) gets
# SIGKILL. Stopping a server that is not running is not an error.
set -euo pipefail

PORT=${1:-}
[[ "$PORT" =~ ^[0-9]+$ ]] || { echo "usage: $0 PORT" >&2; exit 2; }
GATEWAY_VLLM_HOME=${GATEWAY_VLLM_HOME:-$HOME/.cache/gateway/vllm-cpu}
PID_FILE=$GATEWAY_VLLM_HOME/server-$PORT.pid
STOP_TIMEOUT=${STOP_TIMEOUT:-30}

say() { printf '[vllm-cpu stop:%s] %s\n' "$PORT" "$*" >&2; }
now() { printf '%s' "${EPOCHREALTIME/,/.}"; }

# running PID: the process exists and is not a zombie waiting for a parent to reap it.
running() {
  local state
  state=$(awk '{ sub(/^.*\) /, ""); print $1 }' "/proc/$1/stat" 2>/dev/null) || return 1
  [ -n "$state" ] && [ "$state" != Z ]
}

# The server and everything it spawned: serve.sh starts it with setsid, so they share its
# process group even after the leader has died; descendants are added in case one of them
# moved to a group of its own.
server_pids() {
  local leader=$1
  ps -e -o pid=,ppid=,pgid= | awk -v L="$leader" '
    { pid[NR] = $1; ppid[NR] = $2; pgid[NR] = $3 }
    END {
      keep[L] = 1
      for (i = 1; i <= NR; i++) if (pgid[i] == L) keep[pid[i]] = 1
      do {
        grew = 0
        for (i = 1; i <= NR; i++)
          if ((ppid[i] in keep) && !(pid[i] in keep)) { keep[pid[i]] = 1; grew = 1 }
      } while (grew)
      for (p in keep) print p
    }'
}

if [ ! -f "$PID_FILE" ]; then
  say "no pid file $PID_FILE; nothing to stop"
  exit 0
fi
leader=$(cat "$PID_FILE")
[[ "$leader" =~ ^[0-9]+$ ]] || { say "garbage in $PID_FILE; removing it"; rm -f "$PID_FILE"; exit 0; }

mapfile -t pids < <(server_pids "$leader")
alive=()
for p in "${pids[@]}"; do running "$p" && alive+=("$p"); done
if [ ${#alive[@]} -eq 0 ]; then
  say "server (pid $leader) is not running"
  rm -f "$PID_FILE"
  exit 0
fi
if running "$leader" && ! tr '\0' ' ' < "/proc/$leader/cmdline" 2>/dev/null | grep -qi vllm; then
  say "pid $leader is not a vLLM process (stale pid file); leaving it alone"
  rm -f "$PID_FILE"
  exit 0
fi

start=$(now)
say "stopping pid $leader and ${#alive[@]} process(es) in total: ${alive[*]}"
kill -TERM "$leader" 2>/dev/null || true

# Re-list the group on every pass: a server stopped while still starting may spawn its
# engine after the first listing, and an engine orphaned by its API server keeps the group id.
still_running() {
  local p
  left=()
  for p in "${alive[@]}" $(server_pids "$leader"); do
    running "$p" && [[ " ${left[*]} " != *" $p "* ]] && left+=("$p")
  done
  [ ${#left[@]} -gt 0 ]
}
deadline=$(( $(date +%s) + STOP_TIMEOUT ))
orphans_termed=
while still_running; do
  if ! running "$leader" && [ -z "$orphans_termed" ]; then
    kill -TERM "${left[@]}" 2>/dev/null || true   # leader gone: tell the rest directly
    orphans_termed=1
  fi
  if [ "$(date +%s)" -ge "$deadline" ]; then
    say "still running after ${STOP_TIMEOUT}s: ${left[*]}; sending SIGKILL"
    kill -KILL "${left[@]}" 2>/dev/null || true
    sleep 1
    if still_running; then
      say "ERROR: could not stop ${left[*]}"
      exit 1
    fi
    break
  fi
  sleep 0.2
done
rm -f "$PID_FILE"
say "stopped in $(awk -v a="$start" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }')s"
