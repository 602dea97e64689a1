#!/usr/bin/env bash
# gpu-smoke-plan.sh GPU_SMOKE: `gpu-smoke.sh --dry-run` prints every command of
# the GPU plan, in order: the CUDA LibTorch lookup, the build with NCCL, the
# data, doctor over NCCL, bf16 DDP, ZeRO-1 and DDAP on the GPU, the stop and resume,
# and the kill of one rank.
set -euo pipefail
shopt -s inherit_errexit
plan=$("$1" --dry-run)
echo "$plan"
at=0
steps=("torch.utils.cmake_prefix_path" "-DHPCTRAIN_WITH_NCCL=ON" "cmake --build" "prepare" "doctor --nccl"
  "training.device=cuda --set training.precision=bf16" "parallel.zero=1" "parallel.reducer=ddap" "training.stop_after=15"
  "parallel.collective_timeout_s=10" "kill -9")
for want in "${steps[@]}"; do
  line=$(grep -nF -- "$want" <<<"$plan" | head -1 | cut -d: -f1)
  [[ -n $line ]] || { echo "FAIL: the plan has no '$want'"; exit 1; }
  ((line >= at)) || { echo "FAIL: '$want' (line $line) comes before the step it follows (line $at)"; exit 1; }
  at=$line
done
echo "ok: the plan has every step, in order"
