#!/usr/bin/env bash
# default-profile.sh JOBGEN EXPERIMENT: with no --cluster, jobgen renders
# nothing site-specific (profile `default`): no partition, account, QoS or
# constraint, so sbatch applies the cluster's own defaults. The test cluster's
# `debug` partition comes only from naming it, --cluster local.
set -euo pipefail
jobgen=$1 experiment=$2
fail() { echo "FAIL: $*"; exit 1; }
plain=$("$jobgen" "$experiment")
grep -q "^#   cluster profile: default (.*/env/clusters/default.toml)$" <<<"$plain" ||
  fail "no --cluster: $(grep 'cluster profile' <<<"$plain")"
if grep -E "^#SBATCH --(partition|account|qos|constraint)" <<<"$plain"; then fail "no --cluster asks for the above"; fi
grep -q "^srun --mpi='pmi2' " <<<"$plain" || fail "no --cluster: srun's MPI plugin: $(grep '^srun' <<<"$plain")"
local=$("$jobgen" "$experiment" --cluster local)
grep -q '^#SBATCH --partition="debug"  # profile local' <<<"$local" ||
  fail "--cluster local: $(grep -- '--partition' <<<"$local")"
gpu=$("$jobgen" "$experiment" --cluster example-gpu --set slurm.ntasks_per_node=4)
grep -q '^#SBATCH --partition="gpu"' <<<"$gpu" || fail "--cluster example-gpu: $(grep -- '--partition' <<<"$gpu")"
grep -q "^#   cluster profile: example-gpu (.*/example-gpu.toml <- .*/env/clusters/default.toml)$" <<<"$gpu" ||
  fail "example-gpu does not start from default: $(grep 'cluster profile' <<<"$gpu")"
echo "ok: no --cluster renders no partition, account, QoS or constraint; --cluster local and example-gpu name theirs"
