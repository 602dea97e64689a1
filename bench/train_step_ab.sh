#!/usr/bin/env bash
# bench/train_step_ab.sh OLD NEW [ROUNDS]: two builds of train_step_bench (for
# example the commit before a change, built in its own directory, and this
# one), alternated ROUNDS times (default 3) on the shapes of
# bench/train_vs_pytorch.sh:
#   tiny GPT:          L4  d256 H4  V8192  B8 T256
#   GPT-2-small shape: L12 d768 H12 V50304 B4 T128
# 2 threads, fp32. A run's tokens/s comes from its median step time; the
# ratio NEW/OLD is the median of the rounds' own ratios (a round's two runs
# are back to back, so the machine's drift between rounds cancels). Which
# binary goes first alternates from round to round.
#
#   git worktree add /tmp/old HEAD~1 && cmake -S /tmp/old -B /tmp/old/build -DCMAKE_BUILD_TYPE=RelWithDebInfo \
#     && cmake --build /tmp/old/build --target train_step_bench
#   bench/train_step_ab.sh /tmp/old/build/bench/train_step_bench build/bench/train_step_bench
set -euo pipefail
old=$1 new=$2 rounds=${3:-3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

run_shape() {  # NAME STEPS WARMUP SHAPE-ARGS...
  local name=$1 steps=$2 warmup=$3
  shift 3
  for round in $(seq "$rounds"); do
    local order=(old new)
    ((round % 2 == 0)) && order=(new old)
    for which in "${order[@]}"; do
      local binary=$old
      [[ $which == new ]] && binary=$new
      "$binary" "$@" --threads 2 --steps "$steps" --warmup "$warmup" | grep "^{" >>"$work/$name.$which.jsonl"
    done
  done
}
run_shape tiny 16 2 --layers 4 --d-model 256 --heads 4 --vocab 8192 --batch 8 --seq 256
run_shape gpt2-small 7 2 --layers 12 --d-model 768 --heads 12 --vocab 50304 --batch 4 --seq 128

python3 - "$work" "$rounds" "$old" "$new" <<'PY'
import json, statistics, sys
work, rounds, old, new = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
med = statistics.median
def tokens_per_s(r):
    return r["batch"] * r["seq"] / (r["step_ms_median"] / 1e3)
print(f"OLD {old}\nNEW {new}\n{rounds} alternating rounds per shape, 2 threads, fp32; tokens/s at the median step")
print(f"{'shape':<36} {'OLD tok/s':>10} {'NEW tok/s':>10} {'NEW/OLD':>8}  by round")
for name, label in (("tiny", "tiny GPT L4 d256 V8192 B8 T256"), ("gpt2-small", "GPT-2-small L12 d768 V50304 B4 T128")):
    a = [tokens_per_s(json.loads(l)) for l in open(f"{work}/{name}.old.jsonl")]
    b = [tokens_per_s(json.loads(l)) for l in open(f"{work}/{name}.new.jsonl")]
    ratios = [y / x for x, y in zip(a, b)]
    print(f"{label:<36} {med(a):>10.1f} {med(b):>10.1f} {med(ratios):>8.3f}  " + " ".join(f"{r:.3f}" for r in ratios))
PY
