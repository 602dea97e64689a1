#!/usr/bin/env bash
# bench/first-run.sh [COMMIT]: how long a new user waits, on a fresh Debian 12
# machine, from the README's main command to the quickstart's last line.
#
# The fresh machine is a Debian 12 root made by debootstrap (minbase, nothing
# else installed, an empty ccache) and entered with chroot in a private mount
# and PID namespace; it shares this machine's kernel, cores and network. A
# clone of COMMIT (default HEAD) goes into it, and the main command, taken
# verbatim from README.md, runs there under `time`; its output goes to
# bench/results/first-run/first-run-<commit>.log with the phases' times at the end.
# Needs root, debootstrap and network access to deb.debian.org; takes about
# 20 minutes on 2 cores, half of it the quickstart's training.
set -euo pipefail
shopt -s inherit_errexit
repo=$(cd "$(dirname "$0")/.." && pwd)
commit=$(git -C "$repo" rev-parse --short=12 "${1:-HEAD}")
((EUID == 0)) || { echo "first-run: needs root (debootstrap, chroot)" >&2; exit 1; }
command -v debootstrap >/dev/null || { echo "first-run: apt-get install debootstrap" >&2; exit 1; }
main=$(awk '/<!-- main-command -->/{found=1; next} found && /^```sh/{getline; print; exit}' \
  <(git -C "$repo" show "$commit:README.md"))
[[ -n $main ]] || { echo "first-run: no main command in README.md at $commit" >&2; exit 1; }

root=$(mktemp -d /var/tmp/hpctrain-first-run.XXXXXX)
trap 'rm -rf --one-file-system "$root"' EXIT
log=$repo/bench/results/first-run/first-run-$commit.log
echo "first-run: debootstrap bookworm into $root"
"$repo/tests/platform/new-machine.sh" "$root/fs" "$commit"

echo "first-run: $main"
"$repo/tests/platform/run-in-root.sh" "$root/fs" \
  "cd /root/hpctrain && start=\$(date +%s) && { $main; } && echo \"first-run: main command took \$(( \$(date +%s) - start )) s\"" \
  2>&1 | while IFS= read -r line; do printf '%(%T)T %s\n' -1 "$line"; done | tee "$log"
grep -q "^[0-9:]* first-run: main command took" "$log" || { echo "first-run: the main command failed (see $log)"; exit 1; }
