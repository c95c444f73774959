#!/usr/bin/env bash
# Installs every system package bmb needs to build and test, from Debian's
# archive. Idempotent: packages already present are skipped, so a second run
# costs a dpkg query and nothing else. The CUDA toolkit is never installed here;
# scripts/detect-cuda.sh reports whether it is present.
set -euo pipefail

PACKAGES=(
  llvm-19-dev libmlir-19-dev mlir-19-tools llvm-19-tools   # MLIR 19, FileCheck, lit
  antlr4 libantlr4-runtime-dev default-jre-headless        # grammar tool + C++ runtime
  libopenblas-dev libopenmpi-dev openmpi-bin               # runtime: BLAS, MPI
  libgtest-dev libgmock-dev ninja-build cmake g++          # build + unit tests
  clang-19 libclang-rt-19-dev                              # libFuzzer for the front end
  python3 python3-numpy python3-venv                       # test references
)

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#PACKAGES[@]} packages present"
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
echo "install-deps: installing ${missing[*]}"
$SUDO apt-get -o DPkg::Lock::Timeout=600 update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get -o DPkg::Lock::Timeout=600 install -y -qq \
  --no-install-recommends "${missing[@]}" >/dev/null
echo "install-deps: done"
