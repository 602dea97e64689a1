#!/usr/bin/env bash
# train-ranks-equivalence.sh HPCTRAIN EXPERIMENT DATA_DIR: 20 fp32 steps on
# 2 ranks with micro-batch b against 1 rank with batch 2b. The global batch and
# sample order are the same, so every step's loss and gradient norm, and the
# final validation loss, must agree to 1e-6 relative.
set -euo pipefail
hpctrain=$1 experiment=$2 data=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
common=(--set "data.dir=$data" --set training.steps=20 --set training.batch_size=8 --set model.n_layer=2
        --set model.d_model=64 --set eval.interval=0 --set eval.batches=2 --set logging.interval=1
        --set eval.sample_tokens=0 --set training.precision=fp32 --set training.threads=1)
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
    for key in ("loss", "grad_norm", "eval_loss"):
        if key in a:
            rel = abs(a[key] - b[key]) / max(abs(a[key]), 1e-30)
            worst = max(worst, rel)
            pairs += 1
            assert rel <= 1e-6, f"step {a['step']} {key}: 1 rank {a[key]!r}, 2 ranks {b[key]!r} (relative {rel:.2e})"
assert len(one) == len(two) and pairs >= 40
print(f"ok: {pairs} values over 20 steps agree; worst relative difference {worst:.2e} (bound 1e-6)")
PY
