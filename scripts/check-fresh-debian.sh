#!/usr/bin/env bash
# Runs the test command on a machine that has nothing installed: a minimal
# Debian 12 (debootstrap --variant=minbase, empty apt lists, no CUDA, no
# pyenv) in a chroot, with a copy of this working tree (build dirs excluded).
# This catches a package that the test command needs but install-deps.sh
# does not install, which a green run on a developer's machine hides.
#
#   sudo scripts/check-fresh-debian.sh [ROOTFS]     # default /tmp/bmb-fresh-debian
#
# Needs root and Debian's archive (installs debootstrap if missing). The rootfs
# is kept for re-runs (delete it to start over); the copy of the tree in it is
# refreshed every time, its build dirs are not (BMB_FRESH_CLEAN=1 removes them).
# Exit status: that of .ci/run inside the chroot.
set -euo pipefail
ROOT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
ROOTFS="${1:-/tmp/bmb-fresh-debian}"

if [ "$(id -u)" -ne 0 ]; then
  echo "check-fresh-debian: needs root (debootstrap, chroot, mount)" >&2
  exit 2
fi
if ! command -v debootstrap >/dev/null 2>&1; then
  DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -q \
    --no-install-recommends debootstrap
fi

if [ ! -x "$ROOTFS/bin/bash" ]; then
  echo "check-fresh-debian: debootstrap bookworm -> $ROOTFS"
  debootstrap --variant=minbase bookworm "$ROOTFS" http://deb.debian.org/debian
  # The same sources as a standard Debian 12 machine, and empty lists, as on
  # a machine whose apt lists were never fetched.
  cat > "$ROOTFS/etc/apt/sources.list.d/debian.sources" <<'EOF'
Types: deb
URIs: http://deb.debian.org/debian
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: http://deb.debian.org/debian-security
Suites: bookworm-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
  rm -f "$ROOTFS/etc/apt/sources.list" "$ROOTFS"/var/lib/apt/lists/*_*
fi
cp /etc/resolv.conf "$ROOTFS/etc/resolv.conf"
# The host's network plumbing, like resolv.conf: extra CA certificates (an
# egress proxy may re-sign TLS) and pip's settings, so that the chroot reaches
# PyPI as this machine does. update-ca-certificates in the chroot (run when
# install-deps.sh installs ca-certificates) folds the extra CAs in.
if [ -d /usr/local/share/ca-certificates ]; then
  mkdir -p "$ROOTFS/usr/local/share/ca-certificates"
  cp -r /usr/local/share/ca-certificates/. "$ROOTFS/usr/local/share/ca-certificates/"
fi
if [ -f /etc/ssl/certs/ca-certificates.crt ]; then
  mkdir -p "$ROOTFS/etc/ssl/certs"
  cp /etc/ssl/certs/ca-certificates.crt "$ROOTFS/etc/ssl/certs/ca-certificates.crt"
fi
if [ -f /etc/pip.conf ]; then cp /etc/pip.conf "$ROOTFS/etc/pip.conf"; fi

# A fresh copy of the working tree (uncommitted files included).
mkdir -p "$ROOTFS/src"
find "$ROOTFS/src" -mindepth 1 -maxdepth 1 ! -name 'build*' -exec rm -rf {} +
if [ "${BMB_FRESH_CLEAN:-0}" = 1 ]; then rm -rf "$ROOTFS"/src/build*; fi
tar -C "$ROOT_DIR" --exclude='./build*' --exclude='./.venv-ref' -cf - . | tar -C "$ROOTFS/src" -xf -

mounted=()
# shellcheck disable=SC2317  # called by the EXIT trap
cleanup() {
  local i
  for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do umount "${mounted[$i]}" || true; done
}
trap cleanup EXIT
for m in proc dev dev/pts; do
  case $m in
    proc) mount -t proc proc "$ROOTFS/proc" ;;
    *) mount --bind "/$m" "$ROOTFS/$m" ;;
  esac
  mounted+=("$ROOTFS/$m")
done

echo "check-fresh-debian: running .ci/run in $ROOTFS/src"
rc=0
chroot "$ROOTFS" /usr/bin/env -i HOME=/root CI=true \
  PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
  bash -c 'cd /src && bash .ci/run < /dev/null' || rc=$?
echo "check-fresh-debian: .ci/run exited with $rc"
exit $rc
