#!/usr/bin/env bash
# Reports whether the CUDA target can be built here: nvcc, cuBLAS and NCCL
# (paths and versions), plus whether a GPU driver is present (needed only to
# run CUDA programs, not to build them). Always exits 0; the last line is
#   cuda target: available
# or
#   cuda target: unavailable (<reason>)
# CMake makes the same decision on its own when it configures (top-level
# CMakeLists.txt, BMB_HAVE_CUDA); this script is for people and CI logs.
set -uo pipefail

# Candidate toolkit roots: $CUDA_HOME, $CUDA_PATH, the dir of nvcc on PATH,
# /usr/local/cuda, then Debian's nvidia-cuda-toolkit layout (/usr).
roots=()
[ -n "${CUDA_HOME:-}" ] && roots+=("$CUDA_HOME")
[ -n "${CUDA_PATH:-}" ] && roots+=("$CUDA_PATH")
if nvcc_on_path=$(command -v nvcc 2>/dev/null); then
  roots+=("$(cd "$(dirname "$(readlink -f "$nvcc_on_path")")/.." && pwd)")
fi
roots+=(/usr/local/cuda /usr)

nvcc="" root=""
for r in "${roots[@]}"; do
  if [ -x "$r/bin/nvcc" ]; then nvcc="$r/bin/nvcc"; root="$r"; break; fi
done

# first_file NAME DIR...: the first DIR/NAME that exists.
first_file() {
  local name=$1 d
  shift
  for d in "$@"; do
    [ -e "$d/$name" ] && { echo "$d/$name"; return 0; }
  done
  return 1
}
# header_version FILE MACRO...: joins the values of #define MACRO lines with dots.
header_version() {
  local file=$1 m v out=""
  shift
  for m in "$@"; do
    v=$(awk -v m="$m" '$1 == "#define" && $2 == m { print $3; exit }' "$file" 2>/dev/null)
    out="${out:+$out.}${v:-?}"
  done
  echo "$out"
}

libdirs=() incdirs=()
if [ -n "$root" ]; then
  libdirs+=("$root/lib64" "$root/lib" "$root/targets/x86_64-linux/lib")
  incdirs+=("$root/include" "$root/targets/x86_64-linux/include")
fi
libdirs+=(/usr/lib/x86_64-linux-gnu /usr/local/lib /usr/lib)
incdirs+=(/usr/include /usr/local/include)

reasons=()

if [ -n "$nvcc" ]; then
  ver=$("$nvcc" --version 2>/dev/null | sed -n 's/.*release \([0-9.]*\), V\([0-9.]*\).*/\2/p')
  echo "nvcc:    $nvcc (${ver:-unknown version})"
else
  echo "nvcc:    not found (looked in \$CUDA_HOME, \$CUDA_PATH, PATH, /usr/local/cuda, /usr)"
  reasons+=("no nvcc")
fi

# check_lib LABEL LIB HEADER MACRO...: reports LIB and HEADER with the
# version the header's MACROs spell, or what is missing.
check_lib() {
  local label=$1 lib_name=$2 h_name=$3 lib h
  shift 3
  lib=$(first_file "$lib_name" "${libdirs[@]}")
  h=$(first_file "$h_name" "${incdirs[@]}")
  if [ -n "$lib" ] && [ -n "$h" ]; then
    printf '%-9s%s (%s)\n' "$label:" "$lib" "$(header_version "$h" "$@")"
  else
    printf '%-9snot found (%s: %s, %s: %s)\n' "$label:" "$lib_name" "${lib:-missing}" \
      "$h_name" "${h:-missing}"
    reasons+=("no $label")
  fi
}
check_lib cuBLAS libcublas.so cublas_api.h CUBLAS_VER_MAJOR CUBLAS_VER_MINOR CUBLAS_VER_PATCH
check_lib NCCL libnccl.so nccl.h NCCL_MAJOR NCCL_MINOR NCCL_PATCH

# The driver only matters for running CUDA programs, not for the target.
# Captured first: under pipefail, grep -q's early exit would fail the pipe.
ldcache=$(ldconfig -p 2>/dev/null)
if grep -q 'libcuda\.so\.1 ' <<<"$ldcache"; then
  gpus=""
  if command -v nvidia-smi >/dev/null 2>&1; then
    gpus=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | paste -sd, -)
  fi
  echo "driver:  libcuda.so.1 present${gpus:+; GPUs: $gpus}"
else
  echo "driver:  none (CUDA programs build but report 'no driver' when run)"
fi

if [ ${#reasons[@]} -eq 0 ]; then
  echo "cuda target: available"
else
  reason=$(printf '%s, ' "${reasons[@]}")
  echo "cuda target: unavailable (${reason%, })"
fi
exit 0
