#!/usr/bin/env bash
# preemption.sh HPCTRAIN EXPERIMENT DATA_DIR [USR1|TERM]: a signal mid-run,
# after an interval checkpoint, to one rank of two. SIGUSR1 is
# checkpoint.signal, the early warning of `sbatch --signal`; SIGTERM is what
# SLURM's slurmstepd sends on preemption, at the time limit and on `scancel`.
# SLURM sends it to every task, but not at the same instant: with an
# evaluation due every step, a rank that skipped the evaluation because of its
# own SIGTERM while the other evaluated would leave both waiting in different
# collectives. Both ranks must agree to stop, write a checkpoint (newer than the
# last interval one) no later than one step after the step the signal arrived
# in, log how long after the signal it was on disk, and exit with 75 ("requeue
# me"). Resuming then ends with the same weights as an uninterrupted run.
set -euo pipefail
hpctrain=$1 experiment=$2 data=$3 signal=${4:-USR1}
work=$(mktemp -d)
launcher=
trap '[[ -n $launcher ]] && kill -9 "$launcher" 2>/dev/null; rm -rf "$work"' EXIT
steps=200
common=(--set "data.dir=$data" --set "training.steps=$steps" --set training.batch_size=4 --set training.micro_batch_size=2
  --set model.n_layer=1 --set model.d_model=64 --set eval.interval=0 --set eval.samples=16 --set eval.final=sample --set eval.test=false --set eval.sample_tokens=0
  --set logging.interval=5 --set checkpoint.interval=20 --set checkpoint.signal=USR1)
if [[ $signal == TERM ]]; then
  steps=60  # evaluations every step make a step slower: fewer steps still outlast the signal
  common=("${common[@]/training.steps=200/training.steps=$steps}" --set eval.interval=1 --set eval.samples=2)
fi

mpiexec -n 2 "$hpctrain" train "$experiment" "${common[@]}" --set "job.run_dir=$work/straight" >"$work/straight.out" 2>&1 ||
  { cat "$work/straight.out"; exit 1; }

run=$work/preempted
mpiexec -n 2 "$hpctrain" train "$experiment" "${common[@]}" --set "job.run_dir=$run" >"$work/preempted.out" 2>&1 &
launcher=$!
pids=()
for _ in $(seq 1 3000); do
  if grep -q '"step":25,' "$run/metrics.jsonl" 2>/dev/null; then
    for rank in 0 1; do pids+=("$(grep -o "rank $rank: pid [0-9]*" "$run/logs/rank-$rank.log" | cut -d' ' -f4)"); done
    break
  fi
  sleep 0.01
done
((${#pids[@]} == 2)) || { cat "$work/preempted.out"; echo "FAIL: the ranks never reached step 25"; exit 1; }
kill "-$signal" "${pids[1]}"
set +e
wait "$launcher"
rc=$?
set -e
launcher=
((rc == 75)) || { cat "$work/preempted.out"; echo "FAIL: exit status $rc, expected 75"; exit 1; }
received=$(grep -o "SIG$signal received by the end of step [0-9]*" "$run/logs/rank-1.log" | grep -o '[0-9]*$')
stopped=$(grep -o "step [0-9]*: SIG$signal received (" "$work/preempted.out" | cut -d' ' -f2 | tr -d :)
[[ -n $received && -n $stopped ]] || { cat "$work/preempted.out"; echo "FAIL: no preemption stop logged"; exit 1; }
((stopped >= received && stopped <= received + 1)) ||
  { echo "FAIL: signal seen at step $received, checkpoint at step $stopped"; exit 1; }
((stopped < steps)) || { echo "FAIL: the run had already finished"; exit 1; }
newest=$(find "$run/checkpoints" -name 'step-*.h5' | sort | tail -1)
[[ $newest == "$run/checkpoints/step-$(printf %08d "$stopped").h5" && $stopped -gt 20 ]] ||
  { ls "$run/checkpoints"; echo "FAIL: the newest checkpoint is not the signal's"; exit 1; }
"$hpctrain" ckpt verify "$newest"
if [[ $signal == TERM ]]; then
  # SIGTERM skips the evaluation due at the stop step (the checkpoint goes
  # first), on every rank alike: rank 0, which had no signal, must not have run it.
  grep -q "\"kind\":\"eval\",\"step\":$((stopped - 1))," "$run/metrics.jsonl" ||
    { echo "FAIL: no evaluation at step $((stopped - 1)): evaluations are not every step"; exit 1; }
  ! grep -q "\"kind\":\"eval\",\"step\":$stopped," "$run/metrics.jsonl" ||
    { echo "FAIL: rank 0 evaluated at step $stopped, which rank 1 (SIGTERM) skipped: evaluation is collective"; exit 1; }
fi
# Logged by each rank that got the signal.
took=$(grep -ho "checkpoint of step $stopped on disk [0-9.]* s after SIG$signal" "$run"/logs/rank-1.log) ||
  { cat "$work/preempted.out"; echo "FAIL: no line saying how long after the signal the checkpoint was on disk"; exit 1; }
echo "ok: SIG$signal during step $received; both ranks stopped with a checkpoint at step $stopped (the last interval" \
  "one: step 20), exit 75; $took"

mpiexec -n 2 "$hpctrain" train "$experiment" "${common[@]}" --set "job.run_dir=$run" >"$work/resumed.out" 2>&1 ||
  { cat "$work/resumed.out"; exit 1; }
a=$(grep -o 'final weights sha256: [0-9a-f]*' "$work/straight.out")
b=$(grep -o 'final weights sha256: [0-9a-f]*' "$work/resumed.out")
[[ -n $a && $a == "$b" ]] || { echo "FAIL: uninterrupted '$a' vs preempted and resumed '$b'"; exit 1; }
echo "ok: preempted and resumed run ends as the uninterrupted one: $a"
