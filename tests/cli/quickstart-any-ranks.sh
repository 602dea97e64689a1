#!/usr/bin/env bash
# quickstart-any-ranks.sh MPIEXEC HPCTRAIN EXPERIMENT DATA_DIR: the README's
# main command runs `mpiexec -n "$(nproc)"`, so the quickstart's geometry
# (batch 16, micro-batches of up to 8) must train at any rank count. Three
# fp32 steps at 1, 2, 3, 4 and 8 ranks (oversubscribed on a small machine):
# 3 ranks split 16 unevenly (6, 5, 5) and 8 into shares of 2, yet the global batch and
# its sample order are the same at every world size, so each step's loss must
# agree with the 1-rank run's (one process, the whole batch) to 1e-5
# relative. With fewer samples than ranks (4 over 8), DDP's last 4 ranks
# stand in with weight 0: the losses must still be the 1-rank run's. DDAP,
# which needs a sample per rank, is refused there with a batch size that works.
set -euo pipefail
mpiexec=$1 hpctrain=$2 experiment=$3 data=$4
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
common=(--set "data.dir=$data" --set training.steps=3 --set logging.interval=1 --set eval.interval=0
        --set eval.samples=16 --set eval.final=sample --set eval.test=false --set eval.sample_tokens=0
        --set training.precision=fp32 --set checkpoint.interval=0 --set checkpoint.keep_best=false)
for n in 1 2 3 4 8; do
  "$mpiexec" -n "$n" "$hpctrain" train "$experiment" "${common[@]}" --set "job.run_dir=$work/$n" \
    >"$work/$n.out" 2>&1 || { cat "$work/$n.out"; echo "FAILED at $n ranks"; exit 1; }
  grep -m1 -o "16 samples x 256 tokens ([^)]*)" "$work/$n.out" | sed "s/^/$n ranks: /"
done
for n in 1 8; do
  "$mpiexec" -n "$n" "$hpctrain" train "$experiment" "${common[@]}" --set training.batch_size=4 \
    --set "job.run_dir=$work/small-$n" >"$work/small-$n.out" 2>&1 || { cat "$work/small-$n.out"; exit 1; }
done
grep -m1 -o "4 samples x 256 tokens ([^)]*)" "$work/small-8.out" | sed "s/^/8 ranks: /"
/usr/bin/python3 - "$work" <<'PY'
import json, sys
work = sys.argv[1]
def losses(n):
    return [r["loss"] for r in map(json.loads, open(f"{work}/{n}/metrics.jsonl")) if r["kind"] == "train"]
one = losses(1)
assert len(one) == 3, one
worst = 0.0
for n, reference in ((2, 1), (3, 1), (4, 1), (8, 1), ("small-8", "small-1")):
    one = losses(reference)
    theirs = losses(n)
    assert len(theirs) == 3, (n, theirs)
    for step, (a, b) in enumerate(zip(one, theirs), 1):
        rel = abs(a - b) / abs(a)
        worst = max(worst, rel)
        assert rel <= 1e-5, f"step {step}: 1 rank {a!r}, {n} ranks {b!r} (relative {rel:.2e})"
print(f"ok: the losses of 3 steps at 2, 3, 4 and 8 ranks (and 4 samples over 8 ranks) agree with 1 rank's; worst relative difference {worst:.2e}")
PY
if "$mpiexec" -n 8 "$hpctrain" train "$experiment" "${common[@]}" --set parallel.reducer=ddap \
  --set training.batch_size=4 --set "job.run_dir=$work/ddap" >"$work/ddap.out" 2>&1; then
  cat "$work/ddap.out"; echo "DDAP with 4 samples over 8 ranks trained"; exit 1
fi
grep -q "training.batch_size 4 leaves 4 of the 8 ranks without a sample.*at least 8" "$work/ddap.out" ||
  { cat "$work/ddap.out"; echo "no clear refusal"; exit 1; }
echo "ok: DDAP with 4 samples over 8 ranks is refused naming a batch size that works"
