#!/usr/bin/env bash
# resume-schedule-change.sh HPCTRAIN EXPERIMENT DATA_DIR: the learning-rate
# schedule is a function of the step and of training.steps, [schedule] and
# optimizer.lr. A resume that keeps them continues the curve silently; one
# that lengthens the run (training.steps 8 -> 16) makes the rate jump back up
# at the next step, and the log says so, with both rates.
set -euo pipefail
hpctrain=$1 experiment=$2 data=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
common=(--set "data.dir=$data" --set "job.run_dir=$work/run" --set training.batch_size=2 --set training.micro_batch_size=2
  --set model.n_layer=1 --set model.d_model=32 --set eval.interval=0 --set eval.samples=8 --set eval.final=sample
  --set eval.test=false --set eval.sample_tokens=0 --set schedule.warmup_steps=2 --set schedule.decay='"cosine"')
"$hpctrain" train "$experiment" "${common[@]}" --set training.steps=8 --set training.stop_after=4 >"$work/a.out" 2>&1 ||
  { cat "$work/a.out"; exit 1; }
"$hpctrain" train "$experiment" "${common[@]}" --set training.steps=8 --set training.stop_after=6 >"$work/b.out" 2>&1 ||
  { cat "$work/b.out"; exit 1; }
grep -q "resumed from .* at step 4 " "$work/b.out" || { cat "$work/b.out"; echo "FAIL: no resume at step 4"; exit 1; }
! grep -q "learning-rate schedule differs" "$work/b.out" || { echo "FAIL: a warning for an unchanged schedule"; exit 1; }
echo "ok: the same schedule resumes without a word"
"$hpctrain" train "$experiment" "${common[@]}" --set training.steps=16 >"$work/c.out" 2>&1 || { cat "$work/c.out"; exit 1; }
grep -Eq "warning: the learning-rate schedule differs from the checkpoint's \(training.steps 8 -> 16, optimizer.lr .*\): step 7 takes lr [0-9.e-]+, where the checkpoint's schedule gives [0-9.e-]+" \
  "$work/c.out" || { grep -i "schedule\|resumed" "$work/c.out"; echo "FAIL: the jump was not said"; exit 1; }
echo "ok: $(grep -o 'step 7 takes lr .*gives [0-9.e-]*' "$work/c.out")"
