#!/usr/bin/env bash
# array-requeue.sh HPCTRAIN JOBGEN DATA_DIR: a preempted task of a job array
# requeues itself alone. On a cluster from with-cluster.sh, a sweep of three
# run lengths (short, long, long) becomes a 3-task array. When the short task
# has finished, both long tasks are signalled with
# `scancel --signal=USR1 --batch`: each checkpoints, requeues and resumes to
# the hash of an uninterrupted run, while the finished task keeps its state,
# its restart count (0) and its log and metrics byte for byte.
#
# One of the two preempted tasks must be the task whose SLURM_JOB_ID equals
# SLURM_ARRAY_JOB_ID (SLURM gives the array's own id to the task it starts
# last, here task 2), the other one not: `scontrol requeue` given the array's id acts on
# every task, the finished one included, which is what this test catches.
# Both are preempted together so that SLURM's hold on a requeued job (AuthInfo's
# cred_expire, 30 s on the test cluster) is waited out once.
set -euo pipefail
hpctrain=$1 jobgen=$2 data=$3
here=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
short=30 long=200
shrink=(--set "data.dir=$data" --set model.n_layer=1 --set model.d_model=64 --set training.batch_size=4
  --set training.micro_batch_size=4 --set eval.interval=0 --set eval.samples=16 --set eval.final=sample
  --set eval.test=false --set eval.sample_tokens=0 --set checkpoint.interval=0 --set logging.interval=5
  --set "slurm.executable=$hpctrain" --set slurm.time=00:20:00 --set slurm.cpus_per_task=1)
# One compute thread per run, tasks and reference alike (hpctrain reads
# SLURM_CPUS_PER_TASK): three tasks share this machine's cores.
export SLURM_CPUS_PER_TASK=1

# shellcheck source=job-helpers.sh
. "$(dirname "$0")/job-helpers.sh"
wait_for_step() {  # METRICS_FILE: until the run has logged a step
  for _ in $(seq 1 1500); do
    grep -q '"step":' "$1" 2>/dev/null && return 0
    sleep 0.2
  done
  return 1
}

# The uninterrupted run of a long task, one rank, as the array runs it.
mpiexec -n 1 "$hpctrain" train "$here/jobs/quickstart.toml" "${shrink[@]}" --set "training.steps=$long" \
  --set job.run_dir=runs/straight >straight.out 2>&1 </dev/null || { cat straight.out; exit 1; }
want=$(hash_in straight.out)
[[ -n $want ]] || { cat straight.out; echo "FAIL: no hash from the uninterrupted run"; exit 1; }

name=array
{ cat "$here/jobs/quickstart.toml"
  printf '\n[sweep]\nmode = "grid"\n[sweep.parameters]\n"training.steps" = [%s, %s, %s]\n' $short $long $long; } >"$name.toml"
submitted=$("$jobgen" "$name.toml" "${shrink[@]}" --set "job.name=$name" --set "job.run_dir=runs/$name" --submit)
array=${submitted#submitted batch job }
[[ $array =~ ^[0-9]+$ ]] || { echo "FAIL: jobgen --submit printed '$submitted'"; exit 1; }

state=$(wait_for_state "${array}_0")
[[ $state == COMPLETED ]] || { cat "logs/$name-${array}_0.out"; echo "FAIL: the short task ended $state"; exit 1; }
wait_for_step "runs/$name/2/metrics.jsonl" || { cat "logs/$name-${array}_2.out"; echo "FAIL: task 2 never trained"; exit 1; }
ids=()
for task in 1 2; do
  [[ $(field "${array}_$task" JobState) == RUNNING ]] ||
    { scontrol show job "${array}_$task"; echo "FAIL: long task $task is not running; make it longer"; exit 1; }
  ids+=("$(field "${array}_$task" JobId)")
done
holders=0
for id in "${ids[@]}"; do [[ $id != "$array" ]] || holders=$((holders + 1)); done
((holders == 1)) ||
  { echo "FAIL: the long tasks' job ids (${ids[*]}): exactly one should be the array's id ($array)"; exit 1; }
echo "array $array: task 0 finished; preempting tasks 1 and 2 (job ids ${ids[*]})"
finished=$(sha256sum "logs/$name-${array}_0.out" "runs/$name/0/metrics.jsonl")

scancel --signal=USR1 --batch "${array}_1" "${array}_2"
for task in 1 2; do
  state=$(wait_for_state "${array}_$task")
  log=logs/"$name-${array}_$task".out
  cat "$log"
  [[ $state == COMPLETED ]] || { echo "FAIL: preempted task $task ended $state"; exit 1; }
  grep -q "jobgen: checkpoint written; requeueing job ${array}_$task (restart 1 of 3)" "$log" ||
    { echo "FAIL: the log does not show task $task requeueing itself as ${array}_$task"; exit 1; }
  grep -q 'resumed from .*step-' "$log" || { echo "FAIL: the log does not show task $task resuming"; exit 1; }
  got=$(hash_in "$log")
  [[ $got == "$want" ]] || { echo "FAIL: preempted task $task ended at $got, uninterrupted at $want"; exit 1; }
  [[ $(field "${array}_$task" Restarts) == 1 ]] || { echo "FAIL: preempted task $task did not restart once"; exit 1; }
  echo "ok: task $task (job id ${ids[task - 1]}) was requeued alone and ended at the uninterrupted hash"
done

# The finished task: untouched. A requeue of the whole array would have run it
# again (Restarts=1, a second run appended to its log).
[[ $(field "${array}_0" JobState) == COMPLETED && $(field "${array}_0" Restarts) == 0 ]] ||
  { scontrol show job "${array}_0"; echo "FAIL: the finished task was requeued too"; exit 1; }
[[ $(sha256sum "logs/$name-${array}_0.out" "runs/$name/0/metrics.jsonl") == "$finished" ]] ||
  { echo "FAIL: the finished task's log or metrics changed"; exit 1; }
echo "ok: task 0 kept its state, 0 restarts and its files; a preempted task requeues itself alone, whether or not" \
  "its job id is the array's id"
