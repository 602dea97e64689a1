#!/usr/bin/env bash
# tests/platform/new-machine.sh FS COMMIT [PACKAGE,...]: a new Debian 12
# machine in the empty directory FS, as a user or a CI runner gets one:
# debootstrap's minimal bookworm (plus PACKAGES), name resolution for itself
# and the network, and a clone of this repository at COMMIT in /root/hpctrain.
# Enter it with tests/platform/run-in-root.sh. Used by bench/first-run.sh and
# bench/ci-cold.sh. Needs root and debootstrap; the log goes to FS.debootstrap.log.
set -euo pipefail
(($# == 2 || $# == 3)) || { echo "usage: new-machine.sh FS COMMIT [PACKAGE,...]" >&2; exit 2; }
fs=$1 commit=$2 include=${3:+--include=$3}
repo=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck disable=SC2086 # $include is one word or none
PATH=$PATH:/usr/sbin debootstrap --variant=minbase $include bookworm "$fs" http://deb.debian.org/debian \
  >"$fs.debootstrap.log" 2>&1 || { tail -20 "$fs.debootstrap.log"; exit 1; }
cp /etc/resolv.conf /etc/hosts /etc/hostname "$fs/etc/"
git clone -q "$repo" "$fs/root/hpctrain"
git -C "$fs/root/hpctrain" checkout -q "$commit"
