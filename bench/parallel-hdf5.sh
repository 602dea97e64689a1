#!/usr/bin/env bash
# bench/parallel-hdf5.sh [ROUNDS]: how sharded checkpoints should reach the
# disk. A file per rank (what checkpoint.sharded writes) against one shared
# file through parallel HDF5 (MPI-IO), with and without HDF5's per-chunk
# Fletcher32, at 1, 2 and 4 ranks, for the bytes of a GPT-2-small DDP
# checkpoint (91.5M parameters x weights and two AdamW moments, fp32:
# 1047 MiB in all), alternated round by round (build/bench/parallel_hdf5_bench
# says what each contender does). Default 3 rounds; ~3 minutes here.
# Needs Debian's libhdf5-mpich-dev (the MPICH build of HDF5; installing it
# points the hdf5.pc alternative at the MPI build, which hpctrain's own build,
# found through h5cc, does not use). Writes bench/results/parallel-hdf5/parallel-hdf5-COMMIT.txt.
set -euo pipefail
shopt -s inherit_errexit
repo=$(cd "$(dirname "$0")/.." && pwd)
rounds=${1:-3}
bench=$repo/build/bench/parallel_hdf5_bench
[[ -x $bench ]] || {
  echo "parallel-hdf5.sh: $bench is not built: apt-get install libhdf5-mpich-dev, then cmake --preset default and build" >&2
  exit 1
}
commit=$(git -C "$repo" rev-parse --short=12 HEAD)
out=$repo/bench/results/parallel-hdf5/parallel-hdf5-$commit.txt
# On the file system hpctrain's runs use (runs/ lies in the repository).
work=$(mktemp -d -p "$repo" .bench-phdf5.XXXX)
trap 'rm -rf "$work"' EXIT
{
  echo "# bench/parallel-hdf5.sh at $commit, $(date -u +%F), $(nproc) cores, $(df -h --output=source,fstype "$work" | tail -1)"
  for ranks in 1 2 4; do
    mpiexec -n "$ranks" "$bench" --dir "$work" --total-mib 1047 --rounds "$rounds"
  done
} | tee "$out"
echo "wrote $out"
