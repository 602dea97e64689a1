#!/usr/bin/env bash
# ddap-reshard.sh HPCTRAIN EXPERIMENT DATA_DIR [--set k=v ...]: a DDAP
# checkpoint continues at other world sizes, 2 ranks -> stop -> 4 -> stop -> 1.
# DDAP's replicas belong to the ranks that wrote them, so each part must start
# from their merge (docs/checkpoints.md, "Other world sizes"). The reference
# is the checkpoint file read with h5py and merged with numpy by that rule
# (ddap_merge_reference.py); each part logs the hash of the weights it
# resumed with, which must match bit for bit.
# The sample order continues where each part stopped: every step 1..12 is
# logged once, in order, and each part resumes at its batch.
set -euo pipefail
shopt -s inherit_errexit
hpctrain=$1 experiment=$2 data=$3
shift 3
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap '[[ -n ${KEEP:-} ]] || rm -rf "$work"' EXIT
common=(--set "data.dir=$data" --set training.steps=12 --set training.batch_size=8 --set training.micro_batch_size=2
  --set model.n_layer=1 --set model.d_model=32 --set eval.interval=0 --set eval.final=sample --set eval.samples=16
  --set eval.sample_tokens=0 --set eval.test=false --set logging.interval=1 --set checkpoint.interval=0
  --set training.precision=fp32 --set training.threads=1 --set parallel.reducer=ddap --set parallel.merge_every=4
  --set "job.run_dir=$work/run" "$@")
run() {  # run RANKS LOG [--set ...]
  local ranks=$1 log=$2
  shift 2
  mpiexec -n "$ranks" "$hpctrain" train "$experiment" "${common[@]}" "$@" >"$work/$log" 2>&1 ||
    { cat "$work/$log"; echo "FAIL: $log"; exit 1; }
}
run 2 part1.out --set training.stop_after=9
run 4 part2.out --set training.stop_after=11
run 1 part3.out
# resumed_with LOG STEP WRITERS RANKS: the part that resumed the checkpoint of
# STEP (written by WRITERS ranks) at RANKS ranks started from the weights the
# reference computes from that file.
resumed_with() {
  local log=$work/$1 step=$2 writers=$3 ranks=$4 want got
  want=$(/usr/bin/python3 "$here/ddap_merge_reference.py" "$work/run/checkpoints/step-$(printf %08d "$step").h5")
  grep -q "the checkpoint was written by $writers ranks, this run has $ranks" "$log" ||
    { cat "$log"; echo "FAIL: the run at $ranks ranks did not say it resumed a $writers-rank checkpoint"; exit 1; }
  got=$(grep -o 'weights sha256 at resume: [0-9a-f]*' "$log" | cut -d' ' -f5)
  [[ $got == "$want" ]] ||
    { echo "FAIL: $writers ranks -> $ranks at step $step resumed with weights $got, the rule gives $want"; exit 1; }
  echo "ok: step $step, $writers ranks -> $ranks: resumed with the merge of the replicas (sha256 $got = h5py + numpy)"
}
resumed_with part2.out 9 2 4
resumed_with part3.out 11 4 1
# An int8 wire's residuals: no merge falls on steps 10-11, so the 4 ranks'
# checkpoint of step 11 holds what they resumed with.
if [[ " ${common[*]} " == *" parallel.merge_wire=int8 "* ]]; then
  carried=$(/usr/bin/python3 "$here/ddap_merge_reference.py" "$work/run/checkpoints/step-00000009.h5" \
    "$work/run/checkpoints/step-00000011.h5") || { echo "FAIL: $carried"; exit 1; }
  echo "ok: $carried"
fi
grep -h "^reducer" "$work/part1.out" | sed 's/^/  /'
for part in "part2.out 9" "part3.out 11"; do
  read -r log step <<<"$part"
  grep -q "resumed from .*step-0*$step.h5 at step $step (epoch 0, batch $step of it)" "$work/$log" ||
    { cat "$work/$log"; echo "FAIL: $log did not resume at step $step, batch $step"; exit 1; }
done
/usr/bin/python3 - "$work/run/metrics.jsonl" <<'PY'
import json, sys
steps = [r["step"] for r in map(json.loads, open(sys.argv[1])) if r["kind"] == "train"]
assert steps == list(range(1, 13)), steps
print("ok: steps 1..12 logged once each, in order, across 2, 4 and 1 ranks")
PY
