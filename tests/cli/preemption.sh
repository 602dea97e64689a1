#!/usr/bin/env bash
# preemption.sh HPCTRAIN EXPERIMENT DATA_DIR: SIGUSR1 to one rank of two,
# mid-run. Both ranks must agree to stop, write a checkpoint no later than one
# step after the step the signal arrived in, and exit with 75 ("requeue me").
# Resuming then ends with the same weights as an uninterrupted run.
set -euo pipefail
hpctrain=$1 experiment=$2 data=$3
work=$(mktemp -d)
launcher=
trap '[[ -n $launcher ]] && kill -9 "$launcher" 2>/dev/null; rm -rf "$work"' EXIT
steps=200
common=(--set "data.dir=$data" --set training.steps=$steps --set training.batch_size=4 --set training.micro_batch_size=2
  --set model.n_layer=1 --set model.d_model=64 --set eval.interval=0 --set eval.samples=16 --set eval.final=sample --set eval.sample_tokens=0
  --set logging.interval=5 --set checkpoint.interval=0 --set checkpoint.signal=USR1)

mpiexec -n 2 "$hpctrain" train "$experiment" "${common[@]}" --set "job.run_dir=$work/straight" >"$work/straight.out" 2>&1 ||
  { cat "$work/straight.out"; exit 1; }

run=$work/preempted
mpiexec -n 2 "$hpctrain" train "$experiment" "${common[@]}" --set "job.run_dir=$run" >"$work/preempted.out" 2>&1 &
launcher=$!
pid=
for _ in $(seq 1 3000); do
  pid=$(grep -o 'rank 1: pid [0-9]*' "$run/logs/rank-1.log" 2>/dev/null | cut -d' ' -f4 || true)
  [[ -n $pid ]] && grep -q '"step":5,' "$run/metrics.jsonl" 2>/dev/null && break
  sleep 0.01
done
[[ -n $pid ]] || { cat "$work/preempted.out"; echo "FAIL: rank 1 never started"; exit 1; }
kill -USR1 "$pid"
set +e
wait "$launcher"
rc=$?
set -e
launcher=
((rc == 75)) || { cat "$work/preempted.out"; echo "FAIL: exit status $rc, expected 75"; exit 1; }
received=$(grep -o 'SIGUSR1 received by the end of step [0-9]*' "$run/logs/rank-1.log" | grep -o '[0-9]*$')
stopped=$(grep -o 'step [0-9]*: SIGUSR1 received (preemption)' "$work/preempted.out" | cut -d' ' -f2 | tr -d :)
[[ -n $received && -n $stopped ]] || { cat "$work/preempted.out"; echo "FAIL: no preemption stop logged"; exit 1; }
((stopped >= received && stopped <= received + 1)) ||
  { echo "FAIL: signal seen at step $received, checkpoint at step $stopped"; exit 1; }
((stopped < steps)) || { echo "FAIL: the run had already finished"; exit 1; }
"$hpctrain" ckpt verify "$run/checkpoints/step-$(printf %08d "$stopped").h5"
echo "ok: signalled during step $received on rank 1; both ranks stopped with a checkpoint at step $stopped, exit 75"

mpiexec -n 2 "$hpctrain" train "$experiment" "${common[@]}" --set "job.run_dir=$run" >"$work/resumed.out" 2>&1 ||
  { cat "$work/resumed.out"; exit 1; }
a=$(grep -o 'final weights sha256: [0-9a-f]*' "$work/straight.out")
b=$(grep -o 'final weights sha256: [0-9a-f]*' "$work/resumed.out")
[[ -n $a && $a == "$b" ]] || { echo "FAIL: uninterrupted '$a' vs preempted and resumed '$b'"; exit 1; }
echo "ok: preempted and resumed run ends as the uninterrupted one: $a"
