#!/usr/bin/env bash
# prepare-while-waiting.sh HPCTRAIN EXPERIMENT: `mpiexec -n 2 hpctrain` on a
# data set that does not exist yet, so rank 0 prepares it while rank 1 waits.
#  - A preparation that outlasts parallel.collective_timeout_s (1 s here; the
#    preparation takes several) does not end the job: that wait has its own
#    timeout, parallel.prepare_timeout_s.
#  - A preparation that fails ends both ranks at once (not at the timeout),
#    each with rank 0's reason, naming rank 0, and mpiexec with a failure:
#    ten more times, since MPICH 4.2's mpiexec reported status 0 for about a
#    third of such runs when the ranks skipped MPI_Finalize.
set -euo pipefail
hpctrain=$1 experiment=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

# A third of the corpus and a small vocabulary and model: what is tested is the
# wait, not the tokenizer or the training.
small=(--set "data.dir=$work/data" --set 'data.glob="[a-h]*.py"' --set data.vocab_size=2048
  --set training.steps=2 --set model.n_layer=1 --set model.d_model=64 --set model.n_head=2
  --set eval.interval=0 --set eval.final=sample --set eval.samples=16 --set eval.test=false
  --set checkpoint.interval=0 --set parallel.collective_timeout_s=1)

start=$(date +%s)
mpiexec -n 2 "$hpctrain" "$experiment" "${small[@]}" --set "job.run_dir=$work/run" >"$work/ok.log" 2>&1 ||
  fail "training on a data set rank 0 prepared first exited $?: $(tail -n 5 "$work/ok.log")"
took=$(($(date +%s) - start))
grep -q "not prepared yet: preparing it" "$work/ok.log" || fail "rank 0 did not prepare the data set"
grep -q "step *2/2" "$work/ok.log" || fail "no step 2 in: $(tail -n 5 "$work/ok.log")"
echo "ok: a preparation and 2 steps in ${took} s under a 1 s collective timeout"

start=$(date +%s)
rc=0
timeout 100 mpiexec -n 2 "$hpctrain" "$experiment" "${small[@]}" --set "data.dir=$work/data-none" \
  --set "data.sources=[\"$work/no-such-corpus\"]" --set parallel.prepare_timeout_s=600 \
  --set "job.run_dir=$work/run-none" >"$work/bad.log" 2>&1 || rc=$?
took=$(($(date +%s) - start))
((rc != 0 && rc != 124)) || fail "a failed preparation exited $rc after ${took} s: $(tail -n 5 "$work/bad.log")"
# Both ranks end with rank 0's reason, naming rank 0.
reason="^hpctrain: error: rank 0: data.sources: '$work/no-such-corpus' does not exist$"
[[ $(grep -c "$reason" "$work/bad.log") -eq 2 ]] ||
  fail "expected both ranks to end with rank 0's reason, got: $(cat "$work/bad.log")"
echo "ok: a failed preparation ended both ranks in ${took} s"
statuses=()
for _ in {1..10}; do
  rc=0
  timeout 100 mpiexec -n 2 "$hpctrain" "$experiment" "${small[@]}" --set "data.dir=$work/data-none" \
    --set "data.sources=[\"$work/no-such-corpus\"]" --set "job.run_dir=$work/run-none" >/dev/null 2>&1 || rc=$?
  statuses+=("$rc")
done
[[ " ${statuses[*]} " != *" 0 "* && " ${statuses[*]} " != *" 124 "* ]] ||
  fail "mpiexec's statuses for ten failed preparations: ${statuses[*]} (a 0 is a failure reported as success)"
echo "ok: mpiexec's statuses for ten more: ${statuses[*]}"
