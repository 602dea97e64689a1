#!/usr/bin/env bash
# gpu-proof-plan.sh GPU_PROOF: `gpu-proof.sh --dry-run` prints every command of
# the proof for the lent GPU machine, in order, and needs neither a kit, a
# torch nor a GPU to do so: the kit unpacked, the host name, the configure
# against python3's torch and NCCL's wheel with the tests off, the build,
# the smoke on the prebuilt binary (doctor over NCCL, bf16 DDP twice, ZeRO-1,
# DDAP, stop and resume), the throughput against PyTorch eager and
# torch.compile, the logits against PyTorch through safetensors, and the
# Hugging Face exports of a gpt and a llama loaded by transformers.
set -euo pipefail
shopt -s inherit_errexit
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
plan=$("$1" --dry-run --work "$work" --kit "$work/no-kit")
echo "$plan"
at=0
steps=("# found" "packages.tar.xz" "data.tar.xz" "getent hosts" "torch.utils.cmake_prefix_path" "nvidia.nccl"
  "-C $work/kit/hints.cmake" "-DBUILD_TESTING=OFF" "--target hpctrain train_step_bench model_logits"
  "gpu-smoke.sh --prebuilt" "doctor --nccl" "training.device=cuda --set training.precision=bf16" "job.run_dir=$work/smoke/rerun"
  "parallel.zero=1" "parallel.reducer=ddap" "training.stop_after=15" "train_step_bench --layers 12 --d-model 768"
  "--device cuda --precision bf16" "--optimizer foreach --sdpa >>" "--sdpa --compile" "ckpt export $work/smoke/ddp"
  "model_logits $work/smoke/ddp" "compare_logits.py" "model.kind=llama" "model.norm_position=post"
  "--format hf --out $work/smoke/ddp-hf"
  "hf_check.py transformers $work/smoke/ddp-hf" "--format hf --out $work/hf-llama-hf" "--format hf --out $work/hf-bert-hf"
  "hf_check.py transformers $work/hf-bert-hf")
for want in "${steps[@]}"; do
  line=$(grep -nF -- "$want" <<<"$plan" | head -1 | cut -d: -f1 || true)
  [[ -n $line ]] || { echo "FAIL: the plan has no '$want'"; exit 1; }
  ((line >= at)) || { echo "FAIL: '$want' (line $line) comes before the step it follows (line $at)"; exit 1; }
  at=$line
done
[[ ! -e $work/kit/hints.cmake && ! -e $work/build ]] || { echo "FAIL: the dry run unpacked or built something"; exit 1; }
echo "ok: the plan has every step, in order, and ran nothing"
