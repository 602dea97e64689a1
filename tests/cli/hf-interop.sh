#!/usr/bin/env bash
# hf-interop.sh MODE HPCTRAIN MODEL_LOGITS REPO DATA: hpctrain's Hugging Face
# export and import against Hugging Face's own code (tests/reference/hf_check.py),
# for a gpt, a llama and a post-LayerNorm bert model trained a few steps.
#   MODE safetensors: HF's safetensors reads each export with HF's names,
#     shapes and dtypes; HF's save_file writes the tensors again (float32,
#     then bfloat16), and hpctrain imports them: float32 gives the exported
#     weights bit for bit, bfloat16 a model whose validation loss is within
#     0.05 of theirs. Needs python3-safetensors (Debian 13).
#   MODE transformers: transformers' from_pretrained loads each export and
#     gives hpctrain's logits (within 1e-5). Needs transformers.
# Exits 77 (skipped) where the package is missing.
set -euo pipefail
mode=$1 hpctrain=$2 model_logits=$3 repo=$4 data=$5
python=${HPCTRAIN_SYSTEM_PYTHON:-/usr/bin/python3}
check=$repo/tests/reference/hf_check.py
case $mode in
  safetensors) "$python" -c 'import safetensors, torch' 2>/dev/null ||
    { echo "hf-interop: HF's safetensors (python3-safetensors) or torch is not installed: skipped"; exit 77; } ;;
  transformers) "$python" -c 'import transformers, torch' 2>/dev/null ||
    { echo "hf-interop: transformers is not installed: skipped (this end-to-end check has not run here)"; exit 77; } ;;
  *) echo "usage: hf-interop.sh safetensors|transformers HPCTRAIN MODEL_LOGITS REPO DATA" >&2; exit 2 ;;
esac
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
run() {
  local log=$1
  shift
  "$@" >"$log" 2>&1 || { cat "$log"; fail "$*"; }
}
value() { grep -oP "$1" "$2" | tail -1; }
quiet=(--set eval.samples=32 --set eval.final=sample --set eval.test=false --set eval.sample_tokens=0)
import() {  # import DIR NAME: a run from DIR's weights at learning rate 0
  # Every export holds the quickstart data set's tokenizer: one path to it
  # keeps one data set for all the runs.
  run "$work/$2.log" "$hpctrain" train "$repo/jobs/finetune.toml" "${quiet[@]}" --set "model.init_from=$1" \
    --set "data.dir=$work/data" --set "data.tokenizer=$data/tokenizer.model" --set training.steps=1 \
    --set optimizer.lr=0 --set "job.run_dir=$work/$2"
}
declare -A shape=([gpt]="--set model.kind=gpt" [llama]="--set model.kind=llama"
                  [bert]="--set model.kind=bert --set model.norm_position=post")
for kind in gpt llama bert; do
  # shellcheck disable=SC2086  # the kind's --set pairs
  run "$work/$kind-base.log" "$hpctrain" train "$repo/jobs/quickstart.toml" --set "data.dir=$data" "${quiet[@]}" \
    ${shape[$kind]} --set model.n_layer=2 --set model.d_model=64 --set model.n_head=4 --set training.steps=6 \
    --set eval.interval=0 --set "job.run_dir=$work/$kind"
  run "$work/$kind-export.log" "$hpctrain" ckpt export "$work/$kind" --format hf --out "$work/$kind-hf"
  if [[ $mode == safetensors ]]; then
    "$python" "$check" names "$work/$kind-hf" || fail "$kind: HF's safetensors disagrees"
    run "$work/$kind-f32.resave" "$python" "$check" resave "$work/$kind-hf" "$work/$kind-f32" float32
    import "$work/$kind-f32" "$kind-f32-run"
    [[ $(value 'final weights sha256: \K\S+' "$work/$kind-f32-run.log") == $(value 'final weights sha256: \K\S+' "$work/$kind-base.log") ]] ||
      fail "$kind: the weights HF's save_file wrote imported as other weights"
    run "$work/$kind-bf16.resave" "$python" "$check" resave "$work/$kind-hf" "$work/$kind-bf16" bfloat16
    import "$work/$kind-bf16" "$kind-bf16-run"
    grep -q "weights from $work/$kind-bf16 (.* tensors, BF16)" "$work/$kind-bf16-run.log" || fail "$kind: not read as BF16"
    exported=$(value 'validation loss \K[0-9.]+' "$work/$kind-base.log")
    widened=$(value 'validation loss \K[0-9.]+' "$work/$kind-bf16-run.log")
    "$python" -c 'import sys; sys.exit(0 if abs(float(sys.argv[1]) - float(sys.argv[2])) < 0.05 else 1)' "$exported" "$widened" ||
      fail "$kind: validation loss $exported exported, $widened from its bfloat16 copy"
    echo "ok: $kind: HF's save_file in float32 imports bit for bit; in bfloat16 validation loss $widened (exported $exported)"
  else
    run "$work/$kind-logits.log" "$model_logits" "$work/$kind" "$work/$kind-logits"
    "$python" "$check" transformers "$work/$kind-hf" "$work/$kind-logits" || fail "$kind: transformers disagrees"
  fi
done
