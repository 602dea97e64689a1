#!/usr/bin/env bash
# train-ranks-equivalence.sh HPCTRAIN EXPERIMENT DATA_DIR: 20 fp32 steps on
# 2 ranks with micro-batch b against 1 rank with batch 2b. The global batch and
# sample order are the same, so every step's loss and gradient norm must agree
# to 1e-6 relative; and every evaluation reads the same validation sequences
# at both world sizes (the periodic sample every 5 steps, the whole split at
# the end), so their token and sequence counts are equal and their losses
# agree to 1e-6 relative too.
set -euo pipefail
hpctrain=$1 experiment=$2 data=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
common=(--set "data.dir=$data" --set training.steps=20 --set training.batch_size=8 --set model.n_layer=2
        --set model.d_model=64 --set eval.interval=5 --set eval.samples=48 --set logging.interval=1
        --set eval.sample_tokens=0 --set eval.test=false --set training.precision=fp32 --set training.threads=1)
"$hpctrain" train "$experiment" "${common[@]}" --set training.micro_batch_size=8 --set "job.run_dir=$work/one" \
  >"$work/one.out" 2>&1 || { cat "$work/one.out"; exit 1; }
mpiexec -n 2 "$hpctrain" train "$experiment" "${common[@]}" --set training.micro_batch_size=4 \
  --set "job.run_dir=$work/two" >"$work/two.out" 2>&1 || { cat "$work/two.out"; exit 1; }
/usr/bin/python3 - "$work" <<'PY'
import json, sys
work = sys.argv[1]
load = lambda run: [json.loads(l) for l in open(f"{work}/{run}/metrics.jsonl")]
one, two = load("one"), load("two")
worst = 0.0
pairs = 0
for a, b in zip(one, two):
    assert a["kind"] == b["kind"] and a["step"] == b["step"], (a, b)
    for key in ("eval_tokens", "eval_sequences", "eval_full"):
        assert a.get(key) == b.get(key), f"step {a['step']} {a['kind']} {key}: 1 rank {a.get(key)}, 2 ranks {b.get(key)}"
    for key in ("loss", "grad_norm", "eval_loss"):
        if key in a:
            rel = abs(a[key] - b[key]) / max(abs(a[key]), 1e-30)
            worst = max(worst, rel)
            pairs += 1
            assert rel <= 1e-6, f"step {a['step']} {key}: 1 rank {a[key]!r}, 2 ranks {b[key]!r} (relative {rel:.2e})"
evals = [a for a in one if a["kind"] in ("eval", "eval_full")]
assert len(one) == len(two) and pairs >= 45 and len(evals) == 5, (len(one), len(two), pairs, len(evals))
assert [a["eval_sequences"] for a in evals[:4]] == [48] * 4 and [a["eval_full"] for a in evals] == [0, 0, 0, 0, 1], evals
assert evals[-1]["kind"] == "eval_full" and evals[-1]["eval_sequences"] > 48, evals[-1]
print(f"ok: {pairs} values over 20 steps agree, 5 evaluations of the same sequences among them; "
      f"worst relative difference {worst:.2e} (bound 1e-6)")
PY
