#!/usr/bin/env bash
# bench/train_vs_pytorch.sh [STEPS]: training throughput of hpctrain against
# PyTorch eager (bench/reference/bench_pytorch.py, Debian's python3-torch) on the
# same GPT shape, same threads, same machine, in one run. Tiny GPT: L4 d256 H4
# V8192, B8 T256, 2 threads, fp32, AdamW. hpctrain trains on the quickstart data
# set (vocabulary 8192); PyTorch on random tokens (the speed does not depend on
# the values). Reports tokens/s (median step), the ratio, and MFU against the
# fp32 matmul peak each measures.
set -euo pipefail
cd "$(dirname "$0")/.."
steps=${1:-12}
data=build/bench-data/quickstart
build/hpctrain prepare jobs/quickstart.toml --set "data.dir=$data" >/dev/null
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

/usr/bin/python3 bench/reference/bench_pytorch.py --layers 4 --d-model 256 --heads 4 --vocab 8192 --batch 8 --seq 256 \
  --threads 2 --steps "$steps" --warmup 2 >"$work/pytorch.json"
build/hpctrain train jobs/quickstart.toml --set "data.dir=$data" --set "job.run_dir=$work/run" \
  --set training.steps=$((steps + 2)) --set training.batch_size=8 --set training.micro_batch_size=8 \
  --set training.threads=2 --set logging.interval=1 --set eval.interval=0 --set eval.batches=1 \
  --set eval.sample_tokens=0 --set schedule.warmup_steps=1 >"$work/hpctrain.out"

/usr/bin/python3 - "$work" <<'PY'
import json, statistics, sys
work = sys.argv[1]
pt = json.loads(open(f"{work}/pytorch.json").read().strip().splitlines()[-1])
records = [json.loads(l) for l in open(f"{work}/run/metrics.jsonl")]
train = [r for r in records if r["kind"] == "train"][2:]  # the first two steps warm up
ours = statistics.median(r["tokens_per_s"] for r in train)
mfu = statistics.median(r["mfu"] for r in train)
print(f"{'tiny GPT L4 d256 V8192 B8 T256, 2 threads':<44} {'tokens/s':>10} {'MFU':>7}")
print(f"{'PyTorch ' + pt['torch_version'] + ' eager':<44} {pt['tokens_per_s']:>10.0f} {'':>7}")
print(f"{'hpctrain':<44} {ours:>10.0f} {100 * mfu:>6.1f}%")
print(f"{'hpctrain / PyTorch (target >= 1.3)':<44} {ours / pt['tokens_per_s']:>10.2f}")
PY
