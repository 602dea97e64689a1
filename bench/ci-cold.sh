#!/usr/bin/env bash
# bench/ci-cold.sh [COMMIT]: how long `.ci/run` takes on a new CI machine,
# from a clean clone with every cache empty: no packages beyond a minimal
# Debian 12 with git, no ccache, no clang-tidy results but the repository's
# own record (.ci/tidy-verdicts), no Debian 13 root. The budget is 80 minutes
# (CI stops a run at 90).
#
# The new machine is a Debian 12 root made by debootstrap (minbase, plus git,
# which a CI machine that cloned the repository has, this machine's apt
# sources, so that it installs the same point releases (bookworm-updates and
# bookworm-security: clang-tidy's verdicts are keyed by every header's
# content, linux-libc-dev's and libssl-dev's among them), and this machine's CUDA
# toolkit at /usr/local/cuda, mounted read-only, as CI's machine image has
# one: it turns on the NCCL backend, and so decides what is compiled and
# which clang-tidy verdicts apply) and entered with chroot
# in a private mount and PID namespace, mounted onto itself as / is on a
# machine; it shares this machine's kernel, cores and network. `.ci/run`
# runs there under `time` on a clone of COMMIT (default HEAD), and makes its
# own Debian 13 root inside it. Output, with the time of each line, goes to
# bench/results/ci-cold/ci-cold-<commit>.log. Needs root, debootstrap, about 15 GB
# of disk and network access to deb.debian.org; takes about an hour on 2
# cores. The root is removed at the end.
set -euo pipefail
shopt -s inherit_errexit
repo=$(cd "$(dirname "$0")/.." && pwd)
commit=$(git -C "$repo" rev-parse --short=12 "${1:-HEAD}")
((EUID == 0)) || { echo "ci-cold: needs root (debootstrap, chroot)" >&2; exit 1; }
command -v debootstrap >/dev/null || [[ -x /usr/sbin/debootstrap ]] ||
  { echo "ci-cold: apt-get install debootstrap" >&2; exit 1; }

root=$(mktemp -d /var/tmp/hpctrain-ci-cold.XXXXXX)
trap 'rm -rf --one-file-system "$root"' EXIT
log=$repo/bench/results/ci-cold/ci-cold-$commit.log
echo "ci-cold: debootstrap bookworm into $root (not timed: the machine as CI gets it)"
"$repo/tests/platform/new-machine.sh" "$root/fs" "$commit" git,ca-certificates

if [[ -f /etc/apt/sources.list.d/debian.sources ]]; then
  cp /etc/apt/sources.list.d/debian.sources "$root/fs/etc/apt/sources.list.d/"
  rm -f "$root/fs/etc/apt/sources.list"
fi
if [[ -d /usr/local/cuda/ ]]; then  # a link to /usr/local/cuda-13.0, say: both paths, as here
  cuda=$(realpath /usr/local/cuda)
  mkdir -p "$root/fs$cuda"
  mount --bind -o ro "$cuda" "$root/fs$cuda"
  [[ $cuda == /usr/local/cuda ]] || ln -s "$cuda" "$root/fs/usr/local/cuda"
  trap 'umount "$root/fs$cuda"; rm -rf --one-file-system "$root"' EXIT
fi

echo "ci-cold: .ci/run at $commit"
"$repo/tests/platform/run-in-root.sh" "$root/fs" \
  "cd /root/hpctrain && start=\$(date +%s) && .ci/run && echo \"ci-cold: .ci/run took \$(( \$(date +%s) - start )) s\"" \
  2>&1 | while IFS= read -r line; do printf '%(%T)T %s\n' -1 "$line"; done | tee "$log"
grep -q "^[0-9:]* ci-cold: .ci/run took" "$log" || { echo "ci-cold: .ci/run failed (see $log)"; exit 1; }
