#!/usr/bin/env bash
# bench/train_vs_pytorch.sh [--compile] [--optimizer loop|foreach] [ROUNDS]:
# hpctrain's training throughput against PyTorch (tests/reference/
# bench_pytorch.py, the python3-torch of the platform it runs on: 1.13 on
# Debian 12, 2.6 on Debian 13) at equal threads (2), fp32, AdamW, on two GPT
# shapes:
#   the quickstart's:  L4  d128 H4  V4096  B8 T256
#   GPT-2-small shape: L12 d768 H12 V50304 B4 T128
# Both sides time the same loop on random tokens (build/bench/train_step_bench
# is hpctrain's step; it also clips gradients, which PyTorch's loop does not).
# PyTorch runs eager with AdamW's per-parameter loop (--optimizer foreach: its
# multi-tensor AdamW, 2.x's default on CPU) and, with --compile, a second time
# through torch.compile (inductor, which compiles C++ kernels with the
# platform's g++; its compilation is in the untimed warm-up steps).
# A run's tokens/s is taken from its median step time, so that a burst of
# load from elsewhere on a shared host moves it less than the mean would.
# The contenders alternate, ROUNDS times (default 3), and each figure is the
# median over rounds. A ratio is the median of the rounds' own ratios: a
# round's runs are back to back, so the machine's drift between rounds
# (easily 10% on a shared host) cancels within each.
# MFU = tokens/s x (6N + 12 L d T) / the fp32 matmul peak measured in the same
# round. Last, the quickstart's shape once more through the real trainer
# (`hpctrain train`, quickstart data) as a check on the step benchmark.
# Targets: hpctrain >= 1.3x PyTorch eager and >= 1.0x torch.compile; MFU >= 50%
# on the GPT-2-small shape.
set -euo pipefail
cd "$(dirname "$0")/.."
compile=() optimizer=loop
while (($#)) && [[ $1 == --* ]]; do
  case $1 in
    --compile) compile=(--compile) ;;
    --optimizer) optimizer=$2; shift ;;
    *) echo "usage: bench/train_vs_pytorch.sh [--compile] [--optimizer loop|foreach] [ROUNDS]" >&2; exit 2 ;;
  esac
  shift
done
rounds=${1:-3}
if ((${#compile[@]})) && ! /usr/bin/python3 -c 'import setuptools.command, sysconfig, os; assert os.path.exists(os.path.join(sysconfig.get_paths()["include"], "Python.h"))' 2>/dev/null; then
  echo "train_vs_pytorch: --compile needs python3-setuptools and python3-dev (inductor builds its kernels as Python extensions)" >&2
  exit 1
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

run_shape() {  # NAME STEPS WARMUP SHAPE-ARGS...
  local name=$1 steps=$2 warmup=$3
  shift 3
  for _ in $(seq "$rounds"); do
    /usr/bin/python3 bench/bench_pytorch.py "$@" --threads 2 --steps "$steps" --warmup "$warmup" \
      --optimizer "$optimizer" >>"$work/$name.pytorch.jsonl"
    if ((${#compile[@]})); then
      /usr/bin/python3 bench/bench_pytorch.py "$@" --threads 2 --steps "$steps" --warmup "$warmup" \
        --optimizer "$optimizer" --compile >>"$work/$name.compiled.jsonl"
    fi
    build/bench/train_step_bench "$@" --threads 2 --steps "$steps" --warmup "$warmup" | grep "^{" >>"$work/$name.hpctrain.jsonl"
  done
}
run_shape quickstart 16 3 --layers 4 --d-model 128 --heads 4 --vocab 4096 --batch 8 --seq 256
run_shape gpt2-small 7 3 --layers 12 --d-model 768 --heads 12 --vocab 50304 --batch 4 --seq 128

data=build/bench-data/quickstart
build/hpctrain prepare jobs/quickstart.toml --set "data.dir=$data" >/dev/null
build/hpctrain train jobs/quickstart.toml --set "data.dir=$data" --set "job.run_dir=$work/run" \
  --set training.steps=14 --set training.batch_size=8 --set training.micro_batch_size=8 \
  --set training.threads=2 --set logging.interval=1 --set eval.interval=0 --set eval.samples=8 --set eval.final=sample \
  --set eval.sample_tokens=0 --set schedule.warmup_steps=1 >"$work/hpctrain.out"

/usr/bin/python3 - "$work" "$rounds" "$optimizer" "$(build/hpctrain --version | head -3 | tr '\n' ' ')" <<'PY'
import json, os, statistics, sys
work, rounds, optimizer, version = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
med = statistics.median
def load(name, who):
    path = f"{work}/{name}.{who}.jsonl"
    if not os.path.exists(path):
        return None
    runs = [json.loads(l) for l in open(path)]
    for r in runs:  # tokens/s and achieved FLOP/s at the median step
        r["tokens_per_s"] = r["batch"] * r["seq"] / (r["step_ms_median"] / 1e3)
        r["achieved_gflops"] = r["tokens_per_s"] * r["flops_per_token"] / 1e9
    return runs
pt0 = load("quickstart", "pytorch")[0]
print(f"{version.strip()}; PyTorch {pt0['torch_version']}, AdamW {optimizer}")
print(f"{rounds} alternating rounds per shape, 2 threads, fp32; tokens/s at the median step; medians over rounds "
      "(ratios: of the rounds' ratios); MFU against the fp32 matmul peak measured in the same round")
print(f"{'shape':<37} {'contender':<18} {'tok/s':>9} {'MFU':>6} {'hpctrain/it':>11}")
ok = True
for name, label in (("quickstart", "quickstart L4 d128 V4096 B8 T256"), ("gpt2-small", "GPT-2-small L12 d768 V50304 B4 T128")):
    ours = load(name, "hpctrain")
    rows = [("PyTorch eager", load(name, "pytorch"), 1.3), ("torch.compile", load(name, "compiled"), 1.0)]
    mfu = lambda runs: med(r["achieved_gflops"] / o["sgemm_peak_gflops"] for r, o in zip(runs, ours))
    for who, runs, target in rows:
        if runs is None:
            continue
        ratio = med(o["tokens_per_s"] / r["tokens_per_s"] for r, o in zip(runs, ours))
        by_round = " ".join(f"{o['tokens_per_s'] / r['tokens_per_s']:.2f}" for r, o in zip(runs, ours))
        verdict = "PASS" if ratio >= target else "FAIL"
        ok &= ratio >= target
        print(f"{label:<37} {who:<18} {med(r['tokens_per_s'] for r in runs):>9.1f} {100 * mfu(runs):>5.1f}% "
              f"{ratio:>11.2f}  (target >= {target}: {verdict}; by round {by_round})")
    print(f"{label:<37} {'hpctrain':<18} {med(o['tokens_per_s'] for o in ours):>9.1f} {100 * mfu(ours):>5.1f}%")
    if name == "gpt2-small":
        print(f"GPT-2-small MFU {100 * mfu(ours):.1f}% (target >= 50%) {'PASS' if mfu(ours) >= 0.5 else 'FAIL'}"
              f" (peak: fp32 2048^3 matmul, median {med(o['sgemm_peak_gflops'] for o in ours):.1f} GFLOP/s)")
print(f"every ratio at its target: {'PASS' if ok else 'FAIL'}")
records = [json.loads(l) for l in open(f"{work}/run/metrics.jsonl")]
train = [r for r in records if r["kind"] == "train"][2:]  # the first two steps warm up
print(f"check: hpctrain train, the quickstart's shape on its data: {med(r['tokens_per_s'] for r in train):.0f} tok/s, "
      f"MFU {100 * med(r['mfu'] for r in train):.1f}%")
PY
