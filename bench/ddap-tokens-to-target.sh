#!/usr/bin/env bash
# bench/ddap-tokens-to-target.sh [--out DIR] [--steps N] [--lr LR] [--model d256] [CONFIG ...]: the
# algorithm's share of DDAP's speed-up, measured apart from any link. Each
# configuration trains the across-nodes benchmark's schedule (400 steps of 16
# x 256 tokens, learning rate 1e-3, bench/across-nodes.sh) on the quickstart's
# data and shape as a GPT (jobs/quickstart.toml's L4 d128 with model.kind =
# "gpt", whole files as documents: a tokenizer trained on 100,000 lines; the across-nodes runs train jobs/quickstart-2node.toml's d256
# on one trained on 400,000, so its token ratios guide their choice but are
# not the same measurement) on 2 ranks of this machine, evaluating the whole validation split every 20
# steps (--lr: another learning rate for every run, DDP's included; --model
# d256: the across-nodes runs' own model and data instead, quickstart-2node's
# d256 on the tokenizer trained on 400,000 lines, each rank's 8 sequences in
# one micro-batch, about 7 minutes a configuration); the report gives the tokens each needs to reach DDP's final
# evaluation loss x 1.01, as a multiple of DDP's (bench/across-nodes-report.py's
# target and interpolation), and the bytes each rank sent per step. Tokens do not depend on the link, so this tells
# on one machine what a DDAP option costs or saves in learning; the time on a
# given link then follows from docs/reducers.md's rule (x sooner = x tokens/s
# / x tokens). The test split is never read.
#
# A CONFIG is NAME=OVERRIDES, e.g. 'sync100=--set parallel.reducer=ddap
# --set parallel.sync_steps=100'; without any, the default set below. "ddp"
# is always run first: it sets the target. About 3 minutes a configuration
# on 2 cores. --ddp-only runs DDP alone (a learning-rate sweep of the
# synchronous baseline: one OUT per --lr). A run already finished in OUT
# (its commit.txt written) is kept, not run again, so a sweep split into
# parts across sessions goes on where the last part stopped. --data DIR: the
# prepared data set there (made if absent), shared by the sweep's OUTs.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
build=${HPCT_BUILD:-$repo/build}
out=$repo/bench/results/ddap-tokens-to-target
steps=400 lr=1e-3 ddp_only= data=
# The model every run here was measured with: the quickstart's shape as a GPT
# on whole files (L4 d128), as it was until the quickstart became a Llama
# whose documents start at top-level definitions; pinned so that runs made
# before and after compare.
experiment=$repo/jobs/quickstart.toml model_settings=(--set model.kind=gpt --set "data.document_starts=[]")
while (($#)); do
  case $1 in
    --model)
      [[ ${2:-} == d256 ]] || { echo "${0##*/}: --model takes d256 (the across-nodes runs' model)" >&2; exit 2; }
      # What bench/across-nodes.sh trains, but for the reducer and the link.
      experiment=$repo/jobs/quickstart-2node.toml
      model_settings=(--set data.tokenizer_max_lines=400000 --set "data.document_starts=[]" --set training.micro_batch_size=8)
      shift 2 ;;
    --out) out=${2:?}; shift 2 ;;
    --steps) steps=${2:?}; shift 2 ;;
    --lr) lr=${2:?}; shift 2 ;;
    --ddp-only) ddp_only=1; shift ;;
    --data) data=${2:?}; shift 2 ;;
    *) break ;;
  esac
done
diloco="--set parallel.reducer=ddap --set parallel.merge=diloco --set parallel.merge_every=16"
configs=("$@")
((${#configs[@]})) || [[ -n $ddp_only ]] || configs=("diloco-H16=$diloco" "diloco-H16-sync50=$diloco --set parallel.sync_steps=50"
  "diloco-H16-sync100=$diloco --set parallel.sync_steps=100")
configs=("ddp=--set parallel.reducer=ddp" "${configs[@]}")
mkdir -p "$out"
data=${data:-$out/data}
"$build/hpctrain" prepare "$experiment" --set "data.dir=$data" "${model_settings[@]}" >"$out/prepare.log" 2>&1 ||
  { cat "$out/prepare.log"; exit 1; }
for config in "${configs[@]}"; do
  name=${config%%=*} settings=${config#*=}
  if [[ -f $out/$name/commit.txt ]]; then
    echo "$name: finished already ($(cat "$out/$name/commit.txt")), kept"
    continue
  fi
  rm -rf "${out:?}/$name"
  echo "$name: $settings"
  # shellcheck disable=SC2086  # the configuration's --set pairs
  mpiexec -n 2 "$build/hpctrain" train "$experiment" --set "data.dir=$data" "${model_settings[@]}" \
    --set "training.steps=$steps" --set "optimizer.lr=$lr" --set eval.interval=20 --set eval.samples=100000 \
    --set eval.test=false --set eval.sample_tokens=0 --set checkpoint.interval=0 --set "job.run_dir=$out/$name" \
    $settings >"$out/$name.log" 2>&1 || { tail -20 "$out/$name.log"; exit 1; }
  git -C "$repo" rev-parse --short HEAD >"$out/$name/commit.txt"
done
/usr/bin/python3 "$repo/bench/ddap_tokens_report.py" "$out" "${configs[@]%%=*}" | tee "$out/report.md"
