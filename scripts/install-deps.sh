#!/usr/bin/env bash
# Installs every system package bmb needs to build and test, from Debian's
# archive (Debian 12). Idempotent: when every package is present, a run costs a
# dpkg query and nothing else. Runs as root, or through sudo (non-interactive
# `sudo -n` when there is no terminal). Waits up to 10 minutes for another apt
# to release its locks. Installs no recommended packages.
#
# The CUDA toolkit is never installed here; scripts/detect-cuda.sh reports
# whether it is present.
set -euo pipefail

PACKAGES=(
  llvm-19-dev libmlir-19-dev mlir-19-tools llvm-19-tools   # MLIR 19, FileCheck, lit
  antlr4 libantlr4-runtime-dev uuid-dev default-jre-headless  # grammar tool + C++ runtime (links -luuid)
  libopenblas-dev libopenblas-openmp-dev libopenmpi-dev openmpi-bin  # runtime: BLAS (OpenMP build), MPI
  libgtest-dev libgmock-dev ninja-build cmake g++ ccache   # build + unit tests
  clang-19 libclang-rt-19-dev                              # libFuzzer for the front end
  python3 python3-numpy python3-venv python3-psutil python3-torch        # lit timeouts, references
  fortunes                                                 # the demo's training corpus (text)
)
LOCK_TIMEOUT=600

missing_packages() {
  local p
  for p in "${PACKAGES[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
      echo "$p"
    fi
  done
}

mapfile -t missing < <(missing_packages)
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#PACKAGES[@]} packages present"
  exit 0
fi
echo "install-deps: missing: ${missing[*]}"

# How to become root. sudo resets the environment, so DEBIAN_FRONTEND goes
# through `env`.
AS_ROOT=()
if [ "$(id -u)" -ne 0 ]; then
  if ! command -v sudo >/dev/null 2>&1; then
    echo "install-deps: error: not root and no sudo; as root run:" >&2
    echo "  apt-get update && apt-get install --no-install-recommends ${missing[*]}" >&2
    exit 1
  fi
  if [ -t 0 ]; then AS_ROOT=(sudo); else AS_ROOT=(sudo -n); fi
fi
APT=("${AS_ROOT[@]}" env DEBIAN_FRONTEND=noninteractive apt-get
     -o "DPkg::Lock::Timeout=$LOCK_TIMEOUT" -o Dpkg::Use-Pty=0)

# apt-get update takes the lists lock, which DPkg::Lock::Timeout does not cover
# on every apt version: retry until the timeout (this also rides out a
# transient network error).
apt_update() {
  local waited=0
  until "${APT[@]}" update -qq; do
    if [ $waited -ge $LOCK_TIMEOUT ]; then
      echo "install-deps: error: apt-get update kept failing for ${LOCK_TIMEOUT}s" >&2
      return 1
    fi
    echo "install-deps: apt-get update failed; retrying in 10 s"
    sleep 10
    waited=$((waited + 10))
  done
}

apt_install() {
  "${APT[@]}" install -y -q --no-install-recommends "${missing[@]}" \
    >"$LOG" 2>&1 || { tail -n 40 "$LOG" >&2; return 1; }
}

LOG="$(mktemp -t bmb-install-deps.XXXXXX)"
trap 'rm -f "$LOG"' EXIT
start=$(date +%s)
# The package lists may be empty (fresh machine) or stale: update first.
apt_update
if ! apt_install; then
  echo "install-deps: install failed; updating the lists again and retrying once"
  apt_update
  apt_install
fi

mapfile -t missing < <(missing_packages)
if [ ${#missing[@]} -ne 0 ]; then
  echo "install-deps: error: still missing after install: ${missing[*]}" >&2
  exit 1
fi
echo "install-deps: done in $(( $(date +%s) - start )) s"
