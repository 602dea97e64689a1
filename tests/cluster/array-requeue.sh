#!/usr/bin/env bash
# array-requeue.sh HPCTRAIN JOBGEN DATA_DIR: a preempted task of a job array
# requeues itself alone, and `jobgen status` and `jobgen logs` follow it. On a
# cluster from with-cluster.sh, a 2x2 sweep (run length short or long, times
# two logging intervals, which change no weight) becomes a 4-task array. When
# both short tasks have finished, both long tasks are signalled with
# `scancel --signal=USR1 --batch`: each checkpoints, requeues and resumes to
# the hash of an uninterrupted run, while the finished tasks keep their
# state, their restart count (0) and their logs and metrics byte for byte.
#
# One of the two preempted tasks must be the task whose SLURM_JOB_ID equals
# SLURM_ARRAY_JOB_ID (SLURM gives the array's own id to the task it starts
# last, here task 3), the other one not: `scontrol requeue` given the array's
# id acts on every task, the finished ones included, which is what this test
# catches. Both are preempted together so that SLURM's hold on a requeued job
# (AuthInfo's cred_expire, 30 s on the test cluster) is waited out once.
#
# `jobgen status` of the sweep, while the long tasks run and after all have
# ended, must print the rows that SLURM and the run directories imply, and ask
# SLURM as often for these 4 points as for 8 (counted by wrappers on PATH that
# log each call and run the real tool): one sacct call, on a cluster that runs
# accounting (with-cluster.sh --accounting: slurmdbd and MariaDB). `jobgen logs --follow` of a preempted
# task prints its whole log, both runs of it, and exits when the task ends.
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
# SLURM_CPUS_PER_TASK): four tasks share this machine's cores.
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
  printf '\n[sweep]\nmode = "grid"\n[sweep.parameters]\n"training.steps" = [%s, %s]\n' $short $long
  printf '"logging.interval" = [5, 10]\n'; } >"$name.toml"
submitted=$("$jobgen" "$name.toml" --cluster local "${shrink[@]}" --set "job.name=$name" --set "job.run_dir=runs/$name" --submit)
array=${submitted#submitted batch job }
[[ $array =~ ^[0-9]+$ ]] || { echo "FAIL: jobgen --submit printed '$submitted'"; exit 1; }
# A sweep of 8 points whose steps run /bin/true, for jobgen status to count its
# SLURM calls on: real jobs, real run records, real accounting, no training.
{ cat "$here/jobs/quickstart.toml"
  printf '\n[sweep]\nmode = "grid"\n[sweep.parameters]\n"training.steps" = [1, 2, 3, 4, 5, 6, 7, 8]\n'; } >eight.toml
submitted=$("$jobgen" eight.toml --cluster local "${shrink[@]}" --set job.name=eight --set job.run_dir=runs/eight \
  --set slurm.executable=\"/bin/true\" --submit)
eight=${submitted#submitted batch job }

for task in 0 1; do
  state=$(wait_for_state "${array}_$task")
  [[ $state == COMPLETED ]] || { cat "logs/$name-${array}_$task.out"; echo "FAIL: short task $task ended $state"; exit 1; }
done
for task in 2 3; do
  wait_for_step "runs/$name/$task/metrics.jsonl" ||
    { cat "logs/$name-${array}_$task.out"; echo "FAIL: task $task never trained"; exit 1; }
done
ids=()
for task in 2 3; do
  [[ $(field "${array}_$task" JobState) == RUNNING ]] ||
    { scontrol show job "${array}_$task"; echo "FAIL: long task $task is not running; make it longer"; exit 1; }
  ids+=("$(field "${array}_$task" JobId)")
done
holders=0
for id in "${ids[@]}"; do [[ $id != "$array" ]] || holders=$((holders + 1)); done
((holders == 1)) ||
  { echo "FAIL: the long tasks' job ids (${ids[*]}): exactly one should be the array's id ($array)"; exit 1; }

# `jobgen status` of the running sweep. Columns: INDEX JOB STATE RESTARTS STEP
# LOSS EVAL TOK/S ETA CHECKPOINT.
row() { awk -v i="$2" '$1 == i { print $2, $3, $4, $9 }' "$1"; }  # FILE INDEX: job, state, restarts, ETA
"$jobgen" status "runs/$name" | tee status-running.txt
head -1 status-running.txt | grep -q 'SLURM states from sacct$' || { echo "FAIL: status did not ask sacct"; exit 1; }
for task in 0 1; do
  [[ $(row status-running.txt $task) == "${array}_$task COMPLETED 0 -" ]] ||
    { echo "FAIL: status row $task of the running sweep: $(row status-running.txt $task)"; exit 1; }
done
for task in 2 3; do
  [[ $(row status-running.txt $task) =~ ^${array}_$task\ RUNNING\ 0\ [0-9]+m[0-9]{2}s$ ]] ||
    { echo "FAIL: status row $task of the running sweep: $(row status-running.txt $task)"; exit 1; }
done
echo "array $array: tasks 0 and 1 finished; preempting tasks 2 and 3 (job ids ${ids[*]})"
finished=$(sha256sum "logs/$name-${array}"_[01].out "runs/$name"/[01]/metrics.jsonl)

scancel --signal=USR1 --batch "${array}_2" "${array}_3"
"$jobgen" logs "runs/$name" --index 3 --follow >follow.out 2>&1 &
follower=$!
for task in 2 3; do
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
  echo "ok: task $task (job id ${ids[task - 2]}) was requeued alone and ended at the uninterrupted hash"
done

# The finished tasks: untouched. A requeue of the whole array would have run
# them again (Restarts=1, a second run appended to their logs).
for task in 0 1; do
  [[ $(field "${array}_$task" JobState) == COMPLETED && $(field "${array}_$task" Restarts) == 0 ]] ||
    { scontrol show job "${array}_$task"; echo "FAIL: finished task $task was requeued too"; exit 1; }
done
[[ $(sha256sum "logs/$name-${array}"_[01].out "runs/$name"/[01]/metrics.jsonl) == "$finished" ]] ||
  { echo "FAIL: a finished task's log or metrics changed"; exit 1; }
echo "ok: tasks 0 and 1 kept their state, 0 restarts and their files; a preempted task requeues itself alone," \
  "whether or not its job id is the array's id"

# `jobgen logs --follow` ends by itself once the task has ended, having
# printed the task's log file whole (a requeued job keeps its file).
ends_by_itself $follower || { echo "FAIL: jobgen logs --follow did not end with the task"; exit 1; }
wait $follower || { cat follow.out; echo "FAIL: jobgen logs --follow failed"; exit 1; }
log=$PWD/logs/$name-${array}_3.out
{ echo "==> $log (job ${array}_3) <=="; cat "$log"; } | cmp - follow.out ||
  { cat follow.out; echo "FAIL: jobgen logs --follow printed other than a header and $log"; exit 1; }
echo "ok: jobgen logs --follow printed task 3's log through its requeue ($(grep -c '' follow.out) lines) and ended"

# `jobgen status` of the ended sweep; then the SLURM calls it makes, counted,
# for this sweep and for the 8-point one.
"$jobgen" status "runs/$name" | tee status-ended.txt
expect=("${array}_0 COMPLETED 0 -" "${array}_1 COMPLETED 0 -" "${array}_2 COMPLETED 1 -" "${array}_3 COMPLETED 1 -")
for task in 0 1 2 3; do
  [[ $(row status-ended.txt $task) == "${expect[task]}" ]] ||
    { echo "FAIL: status row $task of the ended sweep: $(row status-ended.txt $task)"; exit 1; }
  steps=$((task < 2 ? short : long))
  [[ $(awk -v i=$task '$1 == i { print $5 }' status-ended.txt) == "$steps/$steps" ]] ||
    { echo "FAIL: status row $task does not show step $steps of $steps"; exit 1; }
done
for task in $(seq 0 7); do
  [[ $(wait_for_state "${eight}_$task") == COMPLETED ]] || { echo "FAIL: task $task of the 8-point sweep failed"; exit 1; }
done
points() { /usr/bin/python3 -c 'import json, sys; print(len(json.load(open(sys.argv[1]))))' "$1/sweep-manifest.json"; }
mkdir wrappers
for tool in sacct squeue scontrol; do
  printf '#!/bin/sh\necho %s >>"%s/calls.log"\nexec %s "$@"\n' "$tool" "$PWD" "$(command -v $tool)" >"wrappers/$tool"
  chmod +x "wrappers/$tool"
done
counts=()
for run in "runs/$name" runs/eight; do
  rm -f calls.log
  PATH=$PWD/wrappers:$PATH "$jobgen" status "$run" >status.txt
  [[ $(grep -c '^[0-9]' status.txt) == $(points "$run") ]] ||
    { cat status.txt; echo "FAIL: status of $run does not print a row per point"; exit 1; }
  counts+=("$(for tool in sacct squeue scontrol; do echo -n "$tool $(grep -cx $tool calls.log || true) "; done)")
done
echo "SLURM calls of jobgen status: $(points "runs/$name") points: ${counts[0]}; $(points runs/eight) points: ${counts[1]}"
[[ ${counts[0]} == "${counts[1]}" ]] || { echo "FAIL: more points, more calls"; exit 1; }
[[ ${counts[0]} == "sacct 1 squeue 0 scontrol 0 " ]] || { echo "FAIL: not one sacct call and nothing else"; exit 1; }
echo "ok: jobgen status asks SLURM as often for 4 points as for 8"
