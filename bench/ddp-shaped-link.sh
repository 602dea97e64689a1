#!/usr/bin/env bash
# bench/ddp-shaped-link.sh — overlapped DDP against DDP with buckets reduced
# after backward, when communication is a large share of the step: 2 ranks
# on this machine talking MPI over TCP (UCX_TLS=tcp,self, as between nodes:
# otherwise ranks on one machine use shared memory) through a loopback limited with tbf, in a private network
# namespace so nothing else on the machine is shaped.
#
#   bench/ddp-shaped-link.sh [--rate RATE] [--iterations N] [--bucket-cap-mb C]
#
# Prints the link as MPI sees it (`hpctrain doctor`'s 16 MiB allreduce busbw;
# both directions share the one loopback, so each gets about half of RATE),
# then ddp_bench's part 2 on the quickstart GPT: the step with no
# communication, with buckets after backward and overlapped, modes
# interleaved, medians. Target (issue 5): overlapped at least 10% faster than
# after backward (ratio <= 0.91) when communication is >= 20% of the step.
# Needs root (a network namespace) and a build (README); about 1 minute.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
build=${HPCT_BUILD:-$repo/build}
rate=1gbit
iterations=12
# Buckets of at most 2 MiB, so backward has several to overlap: with the
# trainer's default cap (25 MiB) this 21 MB model has a 1 MiB bucket and one
# that is ready only when backward ends.
bucket_cap_mb=2
while (($#)); do
  case $1 in
    --rate) rate=${2:?}; shift 2 ;;
    --iterations) iterations=${2:?}; shift 2 ;;
    --bucket-cap-mb) bucket_cap_mb=${2:?}; shift 2 ;;
    --in-namespace) in_namespace=true; shift ;;
    *) echo "usage: ${0##*/} [--rate RATE] [--iterations N] [--bucket-cap-mb C]" >&2; exit 2 ;;
  esac
done

if [[ ${in_namespace:-false} != true ]]; then
  ((EUID == 0)) || { echo "${0##*/}: needs root (a private network namespace)" >&2; exit 1; }
  for f in "$build/hpctrain" "$build/bench/ddp_bench"; do
    [[ -x $f ]] || { echo "${0##*/}: $f missing: build first (README)" >&2; exit 1; }
  done
  exec unshare --net "$0" --in-namespace --rate "$rate" --iterations "$iterations" --bucket-cap-mb "$bucket_cap_mb"
fi

ip link set lo up
tc qdisc add dev lo root tbf rate "$rate" burst 256kb latency 50ms
export UCX_TLS=tcp,self
echo "# ddp-shaped-link: loopback limited to $rate (tbf), MPI over TCP, $(git -C "$repo" describe --always --dirty)"
mpiexec -n 2 "$build/hpctrain" doctor --min-bytes 16777216 --max-bytes 16777216 2>&1 | grep -iE "busbw|^ *16777216" || true
mpiexec -n 2 "$build/bench/ddp_bench" --part 2 --iterations "$iterations" --bucket-cap-mb "$bucket_cap_mb"
