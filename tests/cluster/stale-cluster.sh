#!/usr/bin/env bash
# stale-cluster.sh — run inside with-cluster.sh (cluster A, live): a second
# cluster B comes up beside A on a subnet of its own; B's daemons are then
# killed with SIGKILL, as the end of a session kills a test mid-run, which
# leaves B's bridge, veths, namespace and route behind. The next `up` (C)
# must tear B down through B's own undo log, leave A running, and come up.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cluster=$here/slurm-cluster.sh
work=$(mktemp -d /tmp/hpct-stale-test.XXXXXX)
chmod 0755 "$work"  # munged (user munge) must traverse it
b=$work/b c=$work/c
cleanup() {
  "$cluster" down --prefix "$c" --purge >/dev/null 2>&1 || true
  "$cluster" down --prefix "$b" --purge >/dev/null 2>&1 || true
  rm -rf -- "$work"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
a_subnet() { . "$HPCT_CLUSTER_PREFIX/state/cluster.vars" && echo "$SUBNET"; }
vars() { (. "$1/state/cluster.vars" && echo "${!2}"); }

a=$(a_subnet)
"$cluster" up --prefix "$b" --nodes 1 --cpus 1 >/dev/null 2>&1 || fail "B did not come up beside A"
b_subnet=$(vars "$b" SUBNET) b_bridge=$(vars "$b" BRIDGE) b_ns=$(vars "$b" NS_PREFIX)1
[[ $b_subnet != "$a" ]] || fail "B took A's subnet $a"
echo "A on $a.0/24, B on $b_subnet.0/24 ($b_bridge)"

# Kill every daemon of B at once, as a session's end does; nothing runs its
# teardown. Then let its undo log look as old as a killed run's.
while read -r kind pid _ label; do
  [[ $kind == pid ]] && kill -KILL "$pid" 2>/dev/null && echo "killed B's $label ($pid)"
done <"$b/state/undo"
sleep 0.5
ip link show "$b_bridge" >/dev/null 2>&1 || fail "B's bridge vanished by itself: the test shows nothing"
touch -d '-10 minutes' "$b/state/undo"

up_log=$("$cluster" up --prefix "$c" --nodes 1 --cpus 1 2>&1 >/dev/null) || {
  echo "$up_log" >&2
  fail "C did not come up"
}
grep -F "reclaiming a stale cluster" <<<"$up_log" | grep -qF "$b" || {
  echo "$up_log" >&2
  fail "C's up did not say it reclaimed B"
}
ip link show "$b_bridge" >/dev/null 2>&1 && fail "B's bridge $b_bridge is still there"
[[ -e /run/netns/$b_ns ]] && fail "B's namespace $b_ns is still there"
[[ -f $b/state/undo.done ]] || fail "B's undo log was not retired"
c_subnet=$(vars "$c" SUBNET)
[[ $c_subnet == "$b_subnet" ]] || fail "C took $c_subnet, not B's freed $b_subnet"
# A, live all along, is untouched: its nodes still answer.
sinfo -h -N -o '%N %T' | grep -q ' idle$' || fail "A no longer answers: $(sinfo -h -N 2>&1)"
srun -N1 -n1 true || fail "A cannot run a step any more"
SLURM_CONF=$c/etc/slurm.conf srun -N1 -n1 true || fail "C cannot run a step"
echo "PASS: B reclaimed through its undo log, C on $c_subnet.0/24, A still running"
