#!/usr/bin/env bash
# train-determinism.sh HPCTRAIN EXPERIMENT DATA_DIR RANKS [--set k=v ...]: trains the same
# experiment twice with the same seed and world size; the deterministic metrics
# (loss, lr, grad norm, eval loss) must be bitwise identical, and so must the
# final weights hash printed at the end of each run.
set -euo pipefail
hpctrain=$1 experiment=$2 data=$3 ranks=$4
shift 4
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
tiny=(--set "data.dir=$data" --set training.steps=8 --set training.batch_size=8 --set training.micro_batch_size=4
      --set model.n_layer=2 --set model.d_model=64 --set eval.interval=4 --set eval.samples=16 --set eval.final=sample --set eval.test=false --set logging.interval=1
      --set eval.sample_tokens=0 "$@")
for run in a b; do
  mpiexec -n "$ranks" "$hpctrain" train "$experiment" "${tiny[@]}" --set "job.run_dir=$work/$run" >"$work/$run.out" 2>&1 ||
    { cat "$work/$run.out"; exit 1; }
done
/usr/bin/python3 - "$work" <<'PY'
import json, sys, re
work = sys.argv[1]
def deterministic(run):
    keep = ("kind", "step", "loss", "lr", "grad_norm", "eval_loss", "eval_perplexity", "eval_tokens")
    return [{k: r[k] for k in keep if k in r} for r in map(json.loads, open(f"{work}/{run}/metrics.jsonl"))]
def weights(run):
    return re.search(r"final weights sha256: ([0-9a-f]{64})", open(f"{work}/{run}.out").read()).group(1)
a, b = deterministic("a"), deterministic("b")
assert len(a) > 8, f"only {len(a)} records"
assert a == b, next(f"first difference: {x} vs {y}" for x, y in zip(a, b) if x != y)
assert weights("a") == weights("b"), f"weights differ: {weights('a')} vs {weights('b')}"
print(f"ok: {len(a)} metric records identical; final weights sha256 {weights('a')} in both runs")
PY
