#!/usr/bin/env bash
# checkpoint-resume.sh HPCTRAIN EXPERIMENT DATA_DIR RANKS [--set k=v ...]:
# 2N steps run straight must equal N steps, a stop with a checkpoint, a resume
# and N more: the same final weights hash and the same logged metrics (all but
# the timing fields), record for record.
set -euo pipefail
hpctrain=$1 experiment=$2 data=$3 ranks=$4
shift 4
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
n=6
common=(--set "data.dir=$data" --set training.steps=$((2 * n)) --set training.batch_size=4
  --set training.micro_batch_size=2 --set model.n_layer=1 --set model.d_model=32 --set eval.samples=16 --set eval.final=sample --set eval.test=false
  --set eval.sample_tokens=0 --set logging.interval=1 --set eval.interval=3 --set checkpoint.interval=0 "$@")
run() { mpiexec -n "$ranks" "$hpctrain" train "$experiment" "${common[@]}" "$@"; }

run --set "job.run_dir=$work/straight" >"$work/straight.out" 2>&1 || { cat "$work/straight.out"; exit 1; }
run --set "job.run_dir=$work/split" --set training.stop_after=$n >"$work/first.out" 2>&1 ||
  { cat "$work/first.out"; exit 1; }
grep -q "step $n: training.stop_after = $n; writing a checkpoint and stopping" "$work/first.out" ||
  { cat "$work/first.out"; echo "FAIL: the first half did not stop at step $n"; exit 1; }
run --set "job.run_dir=$work/split" >"$work/second.out" 2>&1 || { cat "$work/second.out"; exit 1; }
grep -q "resumed from .*step-0*$n.h5 at step $n" "$work/second.out" ||
  { cat "$work/second.out"; echo "FAIL: the second half did not resume at step $n"; exit 1; }

a=$(grep -o 'final weights sha256: [0-9a-f]*' "$work/straight.out")
b=$(grep -o 'final weights sha256: [0-9a-f]*' "$work/second.out")
[[ -n $a && $a == "$b" ]] || { echo "FAIL: straight '$a' vs resumed '$b'"; exit 1; }
echo "ok: $((2 * n)) steps straight = $n + resume + $n: $a"

strip() {
  /usr/bin/python3 -c '
import json, sys
for line in open(sys.argv[1]):
    r = json.loads(line)
    for k in ("tokens_per_s", "mfu", "eta_s", "wall_max_s", "train_s"):
        r.pop(k, None)
    print(json.dumps(r))' "$1"
}
strip "$work/straight/metrics.jsonl" >"$work/a"
strip "$work/split/metrics.jsonl" >"$work/b"
diff "$work/a" "$work/b" || { echo "FAIL: the logged metrics differ"; exit 1; }
records=$(wc -l <"$work/a")
# Records there must be: train records after the resume, the last step's among them.
after=$(/usr/bin/python3 -c '
import json, sys
n = int(sys.argv[2])
steps = [r["step"] for r in map(json.loads, open(sys.argv[1])) if r["kind"] == "train" and r["step"] > n]
print(len(steps) if 2 * n in steps else 0)' "$work/straight/metrics.jsonl" "$n")
((after >= 1)) || { echo "FAIL: no train record after step $n up to step $((2 * n))"; exit 1; }
echo "ok: all $records metric records identical (loss, lr, grad_norm, sent bytes, eval loss and perplexity)"
