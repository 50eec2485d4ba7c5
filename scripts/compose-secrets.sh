#!/usr/bin/env bash
# Writes the docker-compose stack's secrets as files: random values, mode 0600, owned by the
# user of the container that reads each one (Compose bind-mounts them into /run/secrets/ as
# they are, so the owner must be that user). Run it as root (sudo) for the ownership; without
# root the files stay yours, which suits rootless Docker and Docker Desktop.
#
#   sudo bash scripts/compose-secrets.sh                  # create what is missing; never overwrites
#   sudo bash scripts/compose-secrets.sh rotate NAME      # a new value, written in place
#
# NAME: gateway-admin-key or gateway-metrics-key (with Prometheus' copy). A file is rewritten in
# place, not replaced, because a bind mount follows the file it was given: the running gateway
# then sees the new value within GATEWAY_POLICY_POLL_INTERVAL_S (or at once after
# `docker compose kill -s HUP gateway`). Not rotatable here: the key pepper (part of every
# stored key hash) and the Postgres password (Postgres reads it only when it first initialises
# its data; change it with ALTER ROLE, then rewrite the file).
set -euo pipefail
DIR=${GATEWAY_SECRETS_DIR:-$(cd "$(dirname "$0")/.." && pwd)/deploy/secrets}
GATEWAY_UID=10001   # the gateway image's user (Dockerfile); the collector runs as 10001 too
PROMETHEUS_UID=65534  # prom/prometheus runs as nobody

# file → owning uid
declare -A OWNER=(
  [postgres-password]=$GATEWAY_UID  # Postgres' entrypoint reads it as root, then drops rights
  [gateway-admin-key]=$GATEWAY_UID
  [gateway-key-pepper]=$GATEWAY_UID
  [gateway-metrics-key]=$GATEWAY_UID
  [prometheus-metrics-key]=$PROMETHEUS_UID
)

umask 077
mkdir -p "$DIR"

random_value() { od -An -N32 -tx1 /dev/urandom | tr -d ' \n'; }

# Writes in place (same inode: running containers see it), then sets mode and owner.
put() {
  local name=$1 value=$2 file="$DIR/$1"
  printf '%s\n' "$value" > "$file"
  chmod 0600 "$file"
  if [ "$(id -u)" -eq 0 ]; then
    chown "${OWNER[$name]}:${OWNER[$name]}" "$file"
  fi
}

create_missing() {
  local name
  for name in postgres-password gateway-admin-key gateway-key-pepper gateway-metrics-key; do
    if [ ! -s "$DIR/$name" ]; then
      put "$name" "$(random_value)"
      echo "wrote $DIR/$name" >&2
    fi
  done
  # Prometheus' copy: the same key, owned by the user Prometheus runs as.
  if [ ! -s "$DIR/prometheus-metrics-key" ] \
      || ! cmp -s "$DIR/gateway-metrics-key" "$DIR/prometheus-metrics-key"; then
    put prometheus-metrics-key "$(cat "$DIR/gateway-metrics-key")"
    echo "wrote $DIR/prometheus-metrics-key" >&2
  fi
}

rotate() {
  local value
  value=$(random_value)
  case "$1" in
    gateway-admin-key) put gateway-admin-key "$value" ;;
    gateway-metrics-key)
      put gateway-metrics-key "$value"
      put prometheus-metrics-key "$value" ;;
    *) echo "cannot rotate '$1' here (see the top of $0)" >&2; exit 2 ;;
  esac
  echo "rotated $DIR/$1" >&2
}

case "${1:-}" in
  "") create_missing ;;
  rotate) rotate "${2:?rotate what? gateway-admin-key or gateway-metrics-key}" ;;
  *) echo "usage: $0 [rotate NAME]" >&2; exit 2 ;;
esac
