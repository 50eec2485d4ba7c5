#!/usr/bin/env bash
# Writes the files the Kubernetes production overlay turns into the gateway-secrets Secret
# (deploy/k8s/overlays/production/kustomization.yaml): mode 0600, in a git-ignored folder.
#
#   bash scripts/k8s-secrets.sh [DIR]                 # create the missing random keys
#   bash scripts/k8s-secrets.sh [DIR] rotate admin-key|metrics-key
#
# DIR defaults to deploy/k8s/overlays/production/secrets. The database password is your
# managed Postgres': write it yourself, e.g.
#   (umask 077; printf '%s' "$PASSWORD" > DIR/database-password)
# After a rotation, `kubectl apply -k deploy/k8s/overlays/production` updates the Secret in
# place; the kubelet refreshes the mounted files within about a minute and the gateway re-reads
# them (no restart). The key pepper is never rotated: it is part of every stored key hash.
set -euo pipefail
DIR=${1:-$(cd "$(dirname "$0")/.." && pwd)/deploy/k8s/overlays/production/secrets}
umask 077
mkdir -p "$DIR"

random_value() { od -An -N32 -tx1 /dev/urandom | tr -d ' \n'; }
put() { printf '%s\n' "$2" > "$DIR/$1"; chmod 0600 "$DIR/$1"; }

case "${2:-}" in
  "")
    for name in admin-key metrics-key key-pepper; do
      if [ ! -s "$DIR/$name" ]; then
        put "$name" "$(random_value)"
        echo "wrote $DIR/$name" >&2
      fi
    done
    if [ ! -s "$DIR/database-password" ]; then
      echo "still missing: $DIR/database-password (your Postgres password; see the top of $0)" >&2
    fi ;;
  rotate)
    case "${3:-}" in
      admin-key|metrics-key) put "$3" "$(random_value)"; echo "rotated $DIR/$3" >&2 ;;
      *) echo "rotate admin-key or metrics-key (see the top of $0)" >&2; exit 2 ;;
    esac ;;
  *) echo "usage: $0 [DIR] [rotate NAME]" >&2; exit 2 ;;
esac
