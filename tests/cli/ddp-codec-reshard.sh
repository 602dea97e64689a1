#!/usr/bin/env bash
# ddp-codec-reshard.sh HPCTRAIN EXPERIMENT DATA_DIR [--set k=v ...]: DDP with
# a quantized parallel.gradient_wire continues at other world sizes. Each
# rank's error-feedback residual is its own, so a checkpoint of 2 ranks holds
# 2 and one of 3 holds 3 (read here with h5py); at another world size the new
# ranks share the old residuals' sum (reduce/ddp_residuals.h), which the log
# says. 4 steps on 2 ranks, 4 on 3, 4 on 2 again, against 12 on 2 straight:
# quantization rounds each rank's share, so the parts cannot equal the
# straight run bit for bit, but every step's loss stays within 1% of it.
set -euo pipefail
hpctrain=$1 experiment=$2 data=$3
shift 3
work=$(mktemp -d)
trap '[[ -n ${KEEP:-} ]] || rm -rf "$work"' EXIT
common=(--set "data.dir=$data" --set training.steps=12 --set training.batch_size=12 --set training.micro_batch_size=2
  --set model.n_layer=1 --set model.d_model=32 --set eval.interval=0 --set eval.final=sample --set eval.samples=16
  --set eval.sample_tokens=0 --set eval.test=false --set logging.interval=1 --set checkpoint.interval=0
  --set checkpoint.keep=10 --set training.threads=1 "$@")
run() {  # run RANKS LOG [--set ...]
  local ranks=$1 log=$2
  shift 2
  mpiexec -n "$ranks" "$hpctrain" train "$experiment" "${common[@]}" "$@" >"$work/$log" 2>&1 ||
    { cat "$work/$log"; echo "FAIL: $log"; exit 1; }
}
run 2 straight.out --set "job.run_dir=$work/straight"
run 2 part1.out --set "job.run_dir=$work/split" --set training.stop_after=4
run 3 part2.out --set "job.run_dir=$work/split" --set training.stop_after=8
run 2 part3.out --set "job.run_dir=$work/split"
grep -h "^reducer" "$work/part1.out" | sed 's/^/  /'
for part in "part2.out 4 2 3" "part3.out 8 3 2"; do
  read -r log step from to <<<"$part"
  grep -q "resumed from .*step-0*$step.h5 at step $step" "$work/$log" ||
    { cat "$work/$log"; echo "FAIL: $log did not resume at step $step"; exit 1; }
  grep -q "the checkpoint was written by $from ranks, this run has $to: the ranks' gradient residuals (error feedback) summed and shared" "$work/$log" ||
    { cat "$work/$log"; echo "FAIL: $log does not say how the residuals of $from ranks continue on $to"; exit 1; }
done
/usr/bin/python3 - "$work" <<'PY'
import json, sys
import h5py
import numpy as np
work = sys.argv[1]
for step, ranks in ((4, 2), (8, 3)):
    path = f"{work}/split/checkpoints/step-{step:08d}.h5"
    names = []
    files = [path]
    with h5py.File(path, "r") as f:
        if "shards" in f.attrs:  # an index: the residuals are in its shards, one line each
            table = f.attrs["shard_files"].decode()
            files += [path[:-len(".h5")] + ".shards/" + line.split()[0] for line in table.splitlines()]
    total = 0.0
    for file in files:
        with h5py.File(file, "r") as f:
            if "ddp_residual" in f:
                for name in f["ddp_residual"]:
                    names.append(name)
                    values = f["ddp_residual"][name][()]
                    assert np.isfinite(values).all() and values.dtype == np.float32, (file, name)
                    total += float(np.abs(values).sum())
    expected = [f"rank-{r:05d}" for r in range(ranks)]
    assert sorted(names) == expected, f"{path}: residuals {sorted(names)}, expected {expected}"
    assert total > 0, f"{path}: every residual is zero"
load = lambda run: [r for r in map(json.loads, open(f"{work}/{run}/metrics.jsonl")) if r["kind"] == "train"]
straight, split = load("straight"), load("split")
assert [r["step"] for r in split] == list(range(1, 13)), [r["step"] for r in split]
worst = max(abs(a["loss"] - b["loss"]) / abs(a["loss"]) for a, b in zip(straight, split))
assert worst <= 0.01, f"the resharded run's loss is {worst:.2%} from the straight run's"
print(f"ok: 4 steps on 2 ranks + 4 on 3 + 4 on 2 (2 then 3 residuals checkpointed) against 12 on 2: "
      f"worst relative difference of the losses {worst:.2e} (bound 1e-2)")
PY
