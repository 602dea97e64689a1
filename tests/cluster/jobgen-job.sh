#!/usr/bin/env bash
# jobgen-job.sh HPCTRAIN JOBGEN EXPERIMENT: on a cluster from with-cluster.sh,
#  1. the rendered training script (2 nodes x 2 tasks) passes the real
#     `sbatch --test-only`;
#  2. so does a 2 x 3 sweep's job array;
#  3. `jobgen --submit` of the doctor script runs `srun hpctrain doctor` on 2
#     nodes: the job completes, and its log (%x-%j, in the log directory that
#     --submit created) shows 2 ranks agreeing on node1;
#  4. `jobgen --prepare --submit` runs `hpctrain prepare` as a one-task job:
#     it completes and leaves the prepared data set.
set -euo pipefail
hpctrain=$1 jobgen=$2 experiment=$3 sweep=$4
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
common=(--set slurm.nodes=2 --set slurm.time=00:10:00 --set "slurm.executable=$hpctrain" --set job.name=jg)

"$jobgen" "$experiment" --cluster local "${common[@]}" --set slurm.ntasks_per_node=2 >train.sbatch
out=$(sbatch --test-only train.sbatch 2>&1) || { echo "$out"; echo "FAIL: sbatch --test-only refused the script"; exit 1; }
echo "ok: sbatch --test-only accepts the training script: $out"

"$jobgen" "$sweep" --cluster local "${common[@]}" >array.sbatch
out=$(sbatch --test-only array.sbatch 2>&1) || { echo "$out"; echo "FAIL: sbatch --test-only refused the array"; exit 1; }
echo "ok: sbatch --test-only accepts the sweep's job array: $out"

"$jobgen" explain "$experiment" --cluster local "${common[@]}" --set slurm.ntasks_per_node=1 | tee explain.out
grep -q -- '--nodes="2" .*<- --set slurm.nodes=2$' explain.out || { echo "FAIL: explain does not trace --nodes"; exit 1; }
# Submits, prints the job id once it has left the queue (state in $state).
submit_and_wait() {
  local submitted
  submitted=$("$jobgen" "$experiment" --cluster local "${common[@]}" "$@" --submit)
  echo "$submitted" >&2
  id=${submitted#submitted batch job }
  [[ $id =~ ^[0-9]+$ ]] || { echo "FAIL: --submit printed '$submitted'" >&2; exit 1; }
  for _ in $(seq 1 1500); do
    state=$(scontrol show job "$id" | grep -o 'JobState=[A-Z_]*' | cut -d= -f2)
    [[ $state == PENDING || $state == RUNNING || $state == CONFIGURING || $state == COMPLETING ]] || break
    sleep 0.2
  done
}
submit_and_wait --set slurm.ntasks_per_node=1 --template doctor
log=logs/jg-$id.out
cat "$log"
[[ $state == COMPLETED ]] || { scontrol show job "$id"; echo "FAIL: job $id ended $state"; exit 1; }
ranks=$(grep -c '^rank=' "$log" || true)
((ranks == 2)) || { echo "FAIL: $ranks rank lines in $log, expected 2"; exit 1; }
grep -q 'head=node1 ' "$log" || { echo "FAIL: no head=node1 in $log"; exit 1; }
nodes=$(grep -o ' host=node[0-9]*' "$log" | sort -u | wc -l)
((nodes == 2)) || { echo "FAIL: ranks on $nodes nodes, expected 2"; exit 1; }
echo "ok: job $id ran srun hpctrain doctor on 2 nodes from the rendered script"

submit_and_wait --set slurm.ntasks_per_node=2 --set data.dir=data/jg --prepare
log=logs/jg-prepare-$id.out
cat "$log"
[[ $state == COMPLETED ]] || { scontrol show job "$id"; echo "FAIL: the preparation job $id ended $state"; exit 1; }
[[ -f data/jg/meta.json ]] || { echo "FAIL: job $id left no data/jg/meta.json"; exit 1; }
grep -q "^data set data/jg (prepared)" "$log" || { echo "FAIL: no 'data set data/jg (prepared)' in $log"; exit 1; }
echo "ok: job $id (jobgen --prepare) prepared the data set on one node"
