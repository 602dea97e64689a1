#!/usr/bin/env bash
# bench/comm.sh — hpctrain's MPI communicator against a plain MPI_Allreduce
# (build/bench/comm_bench: the contenders alternated per size in one run, best
# round, ratio = hpctrain busbw / MPI busbw; target >= 0.9 from 64 KiB to 64 MiB):
#   1. 2 ranks on this machine (shared memory);
#   2. 2 simulated nodes of the SLURM test cluster (tests/cluster/slurm-cluster.sh:
#      one network namespace per node), one rank each, MPI over TCP
#      (UCX_TLS=tcp,self, as between real nodes), the link unlimited;
# then DDP's bucket path against MPI_Allreduce of the same buckets
# (build/bench/ddp_bench --part 1; target >= 0.95 from 1 MiB).
#
#   bench/comm.sh [--strategies spin,yield,sleep] [--rounds N] [--max BYTES] [--local-only]
#
# Needs a build (README) and, for part 2, root. About 6 minutes on 2 cores.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
build=${HPCT_BUILD:-$repo/build}
strategies=spin,yield,sleep
rounds=5
max=$((256 << 20))
local_only=false
while (($#)); do
  case $1 in
    --strategies) strategies=${2:?}; shift 2 ;;
    --rounds) rounds=${2:?}; shift 2 ;;
    --max) max=${2:?}; shift 2 ;;
    --local-only) local_only=true; shift ;;
    *) echo "usage: ${0##*/} [--strategies LIST] [--rounds N] [--max BYTES] [--local-only]" >&2; exit 2 ;;
  esac
done
for f in "$build/bench/comm_bench" "$build/bench/ddp_bench"; do
  [[ -x $f ]] || { echo "${0##*/}: $f missing: build first (README)" >&2; exit 1; }
done
bench=("$build/bench/comm_bench" --rounds "$rounds" --max "$max" --strategies "$strategies")

echo "# bench/comm.sh at $(git -C "$repo" describe --always --dirty), $(nproc) cores"
echo "## 1. one machine, 2 ranks"
mpiexec -n 2 "${bench[@]}"

if ! $local_only; then
  ((EUID == 0)) || { echo "${0##*/}: part 2 needs root (the SLURM cluster harness); --local-only skips it" >&2; exit 1; }
  prefix=$(mktemp -d /tmp/hpct-comm.XXXXXX)
  cluster() { "$repo/tests/cluster/slurm-cluster.sh" "$@"; }
  trap 'cluster down --prefix "$prefix" --purge >/dev/null 2>&1 || true' EXIT
  cluster up --prefix "$prefix" --nodes 2 --cpus 2 >/dev/null
  # shellcheck disable=SC1091
  source "$prefix/env"
  echo "## 2. two simulated nodes, one rank each, MPI over TCP"
  srun --mpi=pmi2 -N2 -n2 --ntasks-per-node=1 --cpus-per-task=2 --export=ALL,UCX_TLS=tcp,self "${bench[@]}"
fi

echo "## 3. DDP bucket path against MPI_Allreduce, one machine, 2 ranks"
mpiexec -n 2 "$build/bench/ddp_bench" --part 1
