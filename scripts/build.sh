#!/usr/bin/env bash
# Configures (when needed) and builds bmb with Ninja into build/ (Release).
#
#   scripts/build.sh              # everything
#   scripts/build.sh bmbc         # one target; any argument goes to ninja
#   scripts/build.sh -k 0         # keep going past failures
#
# Environment: BMB_BUILD_DIR (default build/, relative to the checkout),
# BMB_JOBS (default: cores, capped at one per 2 GiB of free memory),
# BMB_BUILD_TYPE (default Release), BMB_CCACHE=0 (don't use ccache),
# BMB_CMAKE_ARGS (extra cmake arguments; when set, cmake is re-run).
# Works from any directory.
set -euo pipefail
# shellcheck source=scripts/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

bmb_configure
echo "build: ninja -C $BMB_BUILD_DIR -j$BMB_JOBS $*"
exec ninja -C "$BMB_BUILD_DIR" -j"$BMB_JOBS" "$@"
