#!/usr/bin/env bash
# array-requeue.sh HPCTRAIN JOBGEN DATA_DIR: a preempted task of a job array
# requeues itself alone. On a cluster from with-cluster.sh (2 nodes), a sweep
# of two run lengths becomes a 2-task array, one task per node. When the short
# task has finished, the long one is signalled with `scancel --signal=USR1
# --batch`: it checkpoints, requeues and resumes to the hash of an
# uninterrupted run, while the finished task keeps its state, its restart count
# (0) and its log and metrics byte for byte.
#
# Done twice, with the lengths swapped, so that the preempted task is once a
# task whose SLURM_JOB_ID differs from SLURM_ARRAY_JOB_ID and once the task
# whose SLURM_JOB_ID equals it: `scontrol requeue` given the array's id acts on
# every task, the finished one included, which is what this test catches.
set -euo pipefail
hpctrain=$1 jobgen=$2 data=$3
here=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
short=30 long=400
shrink=(--set "data.dir=$data" --set model.n_layer=1 --set model.d_model=64 --set training.batch_size=4
  --set training.micro_batch_size=4 --set eval.interval=0 --set eval.samples=16 --set eval.final=sample
  --set eval.test=false --set eval.sample_tokens=0 --set checkpoint.interval=0 --set logging.interval=5
  --set "slurm.executable=$hpctrain" --set slurm.time=00:20:00)

hash_in() { grep -o 'final weights sha256: [0-9a-f]*' "$1" | tail -1 | cut -d' ' -f4; }
field() { scontrol show job "$1" 2>/dev/null | grep -o "$2=[^ ]*" | head -1 | cut -d= -f2; }
wait_for_state() {  # JOB -> its state once final
  local state=
  for _ in $(seq 1 1500); do
    state=$(field "$1" JobState)
    case $state in COMPLETED | FAILED | CANCELLED | TIMEOUT | NODE_FAIL | OUT_OF_MEMORY | BOOT_FAIL | DEADLINE) break ;; esac
    sleep 0.2
  done
  echo "$state"
}

# The uninterrupted run of the long task, one rank, as the array runs it.
mpiexec -n 1 "$hpctrain" train "$here/jobs/quickstart.toml" "${shrink[@]}" --set "training.steps=$long" \
  --set job.run_dir=runs/straight >straight.out 2>&1 || { cat straight.out; exit 1; }
want=$(hash_in straight.out)
[[ -n $want ]] || { cat straight.out; echo "FAIL: no hash from the uninterrupted run"; exit 1; }

seen_array_id_task=0 seen_other_task=0
for order in "$short, $long" "$long, $short"; do
  name=array$((seen_array_id_task + seen_other_task))
  { cat "$here/jobs/quickstart.toml"
    printf '\n[sweep]\nmode = "grid"\n[sweep.parameters]\n"training.steps" = [%s]\n' "$order"; } >"$name.toml"
  long_index=$([[ $order == "$long,"* ]] && echo 0 || echo 1)
  short_index=$((1 - long_index))
  submitted=$("$jobgen" "$name.toml" "${shrink[@]}" --set "job.name=$name" --set "job.run_dir=runs/$name" --submit)
  array=${submitted#submitted batch job }
  [[ $array =~ ^[0-9]+$ ]] || { echo "FAIL: jobgen --submit printed '$submitted'"; exit 1; }

  state=$(wait_for_state "${array}_$short_index")
  [[ $state == COMPLETED ]] || { cat logs/"$name-${array}_$short_index".out; echo "FAIL: the short task ended $state"; exit 1; }
  [[ $(field "${array}_$long_index" JobState) == RUNNING ]] ||
    { echo "FAIL: the long task is not running when the short one has finished; make it longer"; exit 1; }
  long_id=$(field "${array}_$long_index" JobId)
  if [[ $long_id == "$array" ]]; then seen_array_id_task=1; else seen_other_task=1; fi
  echo "array $array ($order steps): task $short_index finished; preempting task $long_index, job id $long_id"
  finished=$(sha256sum logs/"$name-${array}_$short_index".out "runs/$name/$short_index/metrics.jsonl")

  scancel --signal=USR1 --batch "${array}_$long_index"
  state=$(wait_for_state "${array}_$long_index")
  log=logs/"$name-${array}_$long_index".out
  cat "$log"
  [[ $state == COMPLETED ]] || { echo "FAIL: the preempted task ended $state"; exit 1; }
  grep -q "jobgen: checkpoint written; requeueing job ${array}_$long_index (restart 1 of 3)" "$log" ||
    { echo "FAIL: the log does not show the task requeueing itself as ${array}_$long_index"; exit 1; }
  grep -q 'resumed from .*step-' "$log" || { echo "FAIL: the log does not show the resume"; exit 1; }
  got=$(hash_in "$log")
  [[ $got == "$want" ]] || { echo "FAIL: the preempted task ended at $got, uninterrupted at $want"; exit 1; }
  [[ $(field "${array}_$long_index" Restarts) == 1 ]] || { echo "FAIL: the preempted task did not restart once"; exit 1; }

  # The finished task: untouched. A requeue of the whole array would have run
  # it again (Restarts=1, a second run appended to its log) before the
  # preempted task could resume.
  [[ $(field "${array}_$short_index" JobState) == COMPLETED && $(field "${array}_$short_index" Restarts) == 0 ]] ||
    { scontrol show job "${array}_$short_index"; echo "FAIL: the finished task was requeued too"; exit 1; }
  [[ $(sha256sum logs/"$name-${array}_$short_index".out "runs/$name/$short_index/metrics.jsonl") == "$finished" ]] ||
    { echo "FAIL: the finished task's log or metrics changed"; exit 1; }
  echo "ok: array $array: only task $long_index (job id $long_id) was requeued; it ended at the uninterrupted hash;" \
    "task $short_index kept its state, 0 restarts and its files"
done
((seen_array_id_task && seen_other_task)) ||
  { echo "FAIL: the preempted task was never (or always) the one whose job id is the array's id"; exit 1; }
echo "ok: a preempted task requeues itself alone, whether or not its job id is the array's id"
