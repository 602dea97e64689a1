#!/usr/bin/env bash
# tests/platform/run-in-root.sh ROOT COMMAND: runs COMMAND with bash in the
# directory tree ROOT (a root made by debootstrap) as if it were a machine of
# its own: under chroot, in a private mount and PID namespace, with ROOT
# mounted onto itself as / is on a machine (tests that unshare a mount
# namespace change its propagation, which needs a mount point; recursively,
# so that what is mounted inside ROOT stays visible), its own
# /proc, /tmp, /dev/shm and /run, and this machine's /sys, /dev, kernel,
# cores and network. A clean environment: HOME=/root, LANG=C.UTF-8, the
# usual PATH. Needs root. Used by debian13.sh, bench/first-run.sh and
# bench/ci-cold.sh.
set -euo pipefail
(($# == 2)) || { echo "usage: run-in-root.sh ROOT COMMAND" >&2; exit 2; }
((EUID == 0)) || { echo "run-in-root: needs root (unshare, chroot)" >&2; exit 1; }
# shellcheck disable=SC2016 # expanded by the inner shell
exec unshare --mount --pid --fork --propagation private bash -c '
  set -euo pipefail
  fs=$1 command=$2
  mount --rbind "$fs" "$fs"
  mount -t proc proc "$fs/proc"
  mount --rbind /sys "$fs/sys"
  mount --rbind /dev "$fs/dev"
  mount -t tmpfs -o mode=1777 tmpfs "$fs/dev/shm"
  mount -t tmpfs -o mode=1777 tmpfs "$fs/tmp"
  mkdir -p "$fs/run"
  mount -t tmpfs tmpfs "$fs/run"
  exec chroot "$fs" /usr/bin/env -i HOME=/root TERM=dumb LANG=C.UTF-8 \
    PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin bash -c "$command"
' run-in-root "$1" "$2"
