#!/usr/bin/env bash
# local-run-status.sh HPCTRAIN JOBGEN EXPERIMENT DATA_DIR: the README runs the
# quickstart with mpiexec, outside SLURM, then points `jobgen status` at it.
# Such a run has no jobs.jsonl: status must still show its step, losses and
# checkpoint from hpctrain's own files, given the run directory or the
# experiment; logs and cancel, which need SLURM's jobs, say where the log is.
set -euo pipefail
hpctrain=$1 jobgen=$2 experiment=$3 data=$4
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
run=(--set "data.dir=$data" --set "job.run_dir=$work/run")
"$hpctrain" train "$experiment" "${run[@]}" --set training.steps=4 --set training.batch_size=4 \
  --set model.n_layer=1 --set model.d_model=32 --set eval.samples=8 --set eval.final=sample --set eval.test=false \
  --set eval.sample_tokens=0 --set logging.interval=2 >"$work/out" 2>&1 || { cat "$work/out"; exit 1; }
for given in "$work/run" "$experiment"; do
  "$jobgen" status "$given" "${run[@]}" >"$work/status" 2>&1 || fail "status $given: $(cat "$work/status")"
  cat "$work/status"
  grep -q "^run $work/run: trained outside SLURM" "$work/status" || fail "status $given names no local run"
  grep -Eq "^finished +4/4 +[0-9.]+ +[0-9.]+ +[0-9]+ +step-0*4.h5$" "$work/status" ||
    fail "status $given: no finished row at 4/4 with losses and the checkpoint"
done
for command in logs cancel; do
  if "$jobgen" "$command" "$experiment" "${run[@]}" >"$work/said" 2>&1; then fail "$command of a local run succeeded"; fi
  grep -q "^jobgen: error: $work/run: trained outside SLURM .*its log is $work/run/logs/rank-0.log" "$work/said" ||
    fail "$command: $(cat "$work/said")"
done
echo "ok: jobgen status reads a run trained outside SLURM; logs and cancel name its log"
