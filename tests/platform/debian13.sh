#!/usr/bin/env bash
# tests/platform/debian13.sh [COMMAND]: runs COMMAND (default: the README's
# test command) on a clone of this repository's HEAD inside a Debian 13
# ("trixie") root: LibTorch 2.6, HDF5 1.14, MPICH 4.2, Slurm 24.11, GCC 14,
# where this machine has Debian 12's LibTorch 1.13. The root is made once by
# debootstrap (minbase) under $HPCTRAIN_DEBIAN13 (default
# /var/tmp/hpctrain-debian13) and kept, with its installed packages, apt's
# downloads, ccache and the build tree, so a second run rebuilds only what
# changed. It is entered with chroot in a private mount and PID namespace
# (it shares this machine's kernel, cores and network). Needs root and
# debootstrap; the first run downloads about 1 GB.
#   tests/platform/debian13.sh                   the README's test command
#   tests/platform/debian13.sh 'ctest --preset default -L unit'
#   HPCTRAIN_DEBIAN13_FRESH=1 tests/platform/debian13.sh   a new root, empty caches
set -euo pipefail
shopt -s inherit_errexit
repo=$(cd "$(dirname "$0")/../.." && pwd)
base=${HPCTRAIN_DEBIAN13:-/var/tmp/hpctrain-debian13}
((EUID == 0)) || { echo "debian13: needs root (debootstrap, chroot)" >&2; exit 1; }
command -v debootstrap >/dev/null || [[ -x /usr/sbin/debootstrap ]] ||
  { echo "debian13: needs debootstrap (apt-get install debootstrap)" >&2; exit 1; }
command=${1:-$(awk '/<!-- test-command -->/{found=1; next} found && /^```sh/{getline; print; exit}' "$repo/README.md")}
[[ -n $command ]] || { echo "debian13: no test command in README.md" >&2; exit 1; }

# A root is complete once its marker is written, after debootstrap succeeded;
# anything else under $base is a leftover of an interrupted run, made by this
# script (the marker says so), and replaced.
if [[ -n ${HPCTRAIN_DEBIAN13_FRESH:-} || ! -f $base/fs/.hpctrain-debian13 ]]; then
  if [[ -e $base && ! -f $base/.hpctrain-debian13-base ]]; then
    echo "debian13: $base exists and was not made by this script; set HPCTRAIN_DEBIAN13 to another directory" >&2
    exit 1
  fi
  rm -rf --one-file-system "$base"
  mkdir -p "$base"
  touch "$base/.hpctrain-debian13-base"
  echo "debian13: debootstrap trixie into $base/fs"
  SECONDS=0
  PATH=$PATH:/usr/sbin debootstrap --variant=minbase trixie "$base/fs" http://deb.debian.org/debian \
    >"$base/debootstrap.log" 2>&1 || { tail -20 "$base/debootstrap.log"; exit 1; }
  # The contrib and non-free sections hold the CUDA LibTorch, nvcc and NCCL.
  cat >"$base/fs/etc/apt/sources.list.d/debian.sources" <<'SOURCES'
Types: deb
URIs: http://deb.debian.org/debian
Suites: trixie trixie-updates
Components: main contrib non-free non-free-firmware
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SOURCES
  rm -f "$base/fs/etc/apt/sources.list"
  # Keep apt's downloads: the root is reused, and so are they.
  rm -f "$base/fs/etc/apt/apt.conf.d/docker-clean"
  touch "$base/fs/.hpctrain-debian13"
  echo "debian13: root made in ${SECONDS} s"
fi
# What any installed machine has: name resolution for itself and the network.
cp /etc/resolv.conf /etc/hosts /etc/hostname "$base/fs/etc/"

# This commit, into a clone kept in the root (its build/ survives: a rerun
# builds incrementally).
clone=$base/fs/root/hpctrain
[[ -d $clone/.git ]] || git clone -q "$repo" "$clone"
git -C "$clone" fetch -q "$repo" HEAD
git -C "$clone" checkout -q -f FETCH_HEAD
git -C "$clone" clean -q -fdx -e build/
echo "debian13: $(git -C "$clone" log --oneline -1 | cut -c1-72)"
echo "debian13: $command"

"$repo/tests/platform/run-in-root.sh" "$base/fs" \
  "cd /root/hpctrain && start=\$(date +%s) && { $command; } && echo \"debian13: took \$(( \$(date +%s) - start )) s\""
