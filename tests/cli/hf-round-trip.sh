#!/usr/bin/env bash
# hf-round-trip.sh HPCTRAIN MODEL_LOGITS REPO DATA: hpctrain's Hugging Face
# export and import (docs/models.md) against hpctrain's own checkpoint:
#  - gpt, llama, llama with tied embeddings and a post-LayerNorm bert (HF's
#    BertForMaskedLM): train, `ckpt export --format
#    hf`, then a new run with model.init_from = the export (jobs/finetune.toml)
#    at learning rate 0 for one step: the same final weights hash, the same
#    validation loss on the same sample, and the same logits bitwise
#    (build/bench/model_logits) as the run exported; `hpctrain eval` and
#    (causal models) `generate` on the export directory itself;
#  - a real fine-tune of the llama export: its evaluations fall below the
#    exported model's;
#  - the import reads a model sharded over two files with an index;
#  - a pre-LayerNorm bert has no HF counterpart and is refused, naming the
#    difference; an HF BERT's token type embeddings are added to the positions;
#  - a directory that is not an export is not written into;
#  - hostile HF directories are refused with one line naming the file and the
#    field or tensor: a tensor whose shape disagrees with config.json, an
#    activation hpctrain does not compute, no tokenizer.model, truncated weights.
set -euo pipefail
hpctrain=$1 model_logits=$2 repo=$3 data=$4
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
run() {  # run LOG ARGS...: a command that must succeed, its output in LOG
  local log=$1
  shift
  "$@" >"$log" 2>&1 || { cat "$log"; fail "$*"; }
}
refused() {  # refused PATTERN ARGS...: one error line matching PATTERN
  local pattern=$1 out
  shift
  if out=$("$@" 2>&1); then echo "$out"; fail "accepted: $*"; fi
  [[ $(grep -c "error" <<<"$out") == 1 ]] && grep -q -- "$pattern" <<<"$out" ||
    { echo "$out"; fail "expected one error line matching: $pattern"; }
  echo "ok: refused: $(grep error <<<"$out")"
}
value() { grep -oP "$1" "$2" | tail -1; }  # value REGEX LOG
hostile() {  # hostile NAME [EXPORT]: a copy of EXPORT (the llama export) to break
  rm -rf "${work:?}/${1:?}" && cp -r "${2:-$work/llama/hf}" "$work/$1" && echo "$work/$1"
}
logits() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["tensors"]["logits"]["file"])' "$1/manifest.json"; }

small=(--set model.n_layer=2 --set model.d_model=64 --set model.n_head=4)
quiet=(--set eval.samples=32 --set eval.final=sample --set eval.test=false --set eval.sample_tokens=0)
declare -A cases=([gpt]="--set model.kind=gpt"
                  [llama]="--set model.kind=llama --set model.n_kv_head=2"
                  [llama_tied]="--set model.kind=llama --set model.n_kv_head=1 --set model.tie_embeddings=true"
                  [bert]="--set model.kind=bert --set model.norm_position=post")
for name in gpt llama llama_tied bert; do
  dir=$work/$name
  # shellcheck disable=SC2086  # the case's --set pairs
  run "$work/$name-base.log" "$hpctrain" train "$repo/jobs/quickstart.toml" --set "data.dir=$data" "${small[@]}" "${quiet[@]}" \
    ${cases[$name]} --set training.steps=6 --set eval.interval=0 --set "job.run_dir=$dir/base"
  run "$work/$name-export.log" "$hpctrain" ckpt export "$dir/base" --format hf --out "$dir/hf"
  files=(config.json model.safetensors tokenizer.model tokenizer_config.json)
  [[ $name == bert ]] || files+=(generation_config.json)
  for f in "${files[@]}"; do
    [[ -f $dir/hf/$f ]] || fail "$name: the export has no $f"
  done
  # The export's own data set: the quickstart's sources, through its tokenizer.
  run "$work/$name-ft0.log" "$hpctrain" train "$repo/jobs/finetune.toml" "${quiet[@]}" --set "model.init_from=$dir/hf" \
    --set "data.dir=$dir/data" --set training.steps=1 --set optimizer.lr=0 --set "job.run_dir=$dir/ft0"
  grep -q "weights from $dir/hf (.* tensors, F32)" "$work/$name-ft0.log" || { cat "$work/$name-ft0.log"; fail "$name: no weights line"; }
  base_hash=$(value 'final weights sha256: \K\S+' "$work/$name-base.log")
  ft0_hash=$(value 'final weights sha256: \K\S+' "$work/$name-ft0.log")
  [[ -n $base_hash && $base_hash == "$ft0_hash" ]] || fail "$name: weights $base_hash exported, $ft0_hash imported"
  base_loss=$(value 'validation loss \K[0-9.]+' "$work/$name-base.log")
  ft0_loss=$(value 'validation loss \K[0-9.]+' "$work/$name-ft0.log")
  [[ -n $base_loss && $base_loss == "$ft0_loss" ]] || fail "$name: validation loss $base_loss exported, $ft0_loss imported"
  run "$work/$name-l1.log" "$model_logits" "$dir/base" "$dir/logits-base"
  run "$work/$name-l2.log" "$model_logits" "$dir/ft0" "$dir/logits-import"
  cmp "$dir/logits-base/$(logits "$dir/logits-base")" "$dir/logits-import/$(logits "$dir/logits-import")" ||
    fail "$name: the imported model's logits differ"
  # eval and generate read the directory itself.
  run "$work/$name-eval.log" "$hpctrain" eval "$dir/hf" --set "data.dir=$data" --sample --set eval.samples=32
  [[ $(value 'validation loss \K[0-9.]+' "$work/$name-eval.log") == "$base_loss" ]] ||
    { cat "$work/$name-eval.log"; fail "$name: hpctrain eval on the export gives another loss"; }
  [[ $name == bert ]] || run "$work/$name-generate.log" "$hpctrain" generate "$dir/hf" --tokens 8
  echo "ok: $name: exported and imported: weights ${base_hash:0:16}, validation loss $base_loss (also \`eval\` on the export), logits bitwise equal"
done

# Fine-tuning from the llama export: the evaluations start at the exported
# model's loss (above, at lr 0) and fall.
run "$work/ft.log" "$hpctrain" train "$repo/jobs/finetune.toml" "${quiet[@]}" --set "model.init_from=$work/llama/hf" \
  --set "data.dir=$work/llama/data" --set training.steps=20 --set eval.interval=10 --set schedule.warmup_steps=2 \
  --set "job.run_dir=$work/llama/ft"
mapfile -t evals < <(grep -oP 'step +[0-9]+ \| eval loss \K[0-9.]+' "$work/ft.log")
start=$(value 'validation loss \K[0-9.]+' "$work/llama-ft0.log")
((${#evals[@]} == 2)) || { cat "$work/ft.log"; fail "expected 2 evaluations"; }
python3 -c 'import sys; a = [float(x) for x in sys.argv[1:]]; sys.exit(0 if a[0] > a[1] > a[2] else 1)' \
  "$start" "${evals[@]}" || fail "fine-tuning did not lower the loss: $start, then ${evals[*]}"
echo "ok: fine-tuned from the export: validation loss $start, then ${evals[*]}"

# A sharded model: the export's tensors over two files and an index.
sharded=$work/sharded
mkdir "$sharded"
cp "$work/llama/hf/config.json" "$work/llama/hf/tokenizer.model" "$sharded/"
python3 - "$work/llama/hf/model.safetensors" "$sharded" <<'PY'
import json, struct, sys
blob = open(sys.argv[1], "rb").read()
n = struct.unpack("<Q", blob[:8])[0]
header = json.loads(blob[8:8 + n])
header.pop("__metadata__", None)
names = sorted(header)
weight_map = {}
for part, chosen in enumerate((names[::2], names[1::2]), 1):
    out, data, offset = {}, b"", 0
    for name in chosen:
        begin, end = header[name]["data_offsets"]
        raw = blob[8 + n + begin:8 + n + end]
        out[name] = {"dtype": "F32", "shape": header[name]["shape"], "data_offsets": [offset, offset + len(raw)]}
        offset += len(raw)
        data += raw
        weight_map[name] = f"model-0000{part}-of-00002.safetensors"
    text = json.dumps(out).encode()
    open(f"{sys.argv[2]}/model-0000{part}-of-00002.safetensors", "wb").write(struct.pack("<Q", len(text)) + text + data)
json.dump({"metadata": {}, "weight_map": weight_map}, open(f"{sys.argv[2]}/model.safetensors.index.json", "w"))
PY
run "$work/sharded.log" "$hpctrain" train "$repo/jobs/finetune.toml" "${quiet[@]}" --set "model.init_from=$sharded" \
  --set "data.dir=$work/llama/data" --set "data.tokenizer=$work/llama/hf/tokenizer.model" --set training.steps=1 \
  --set optimizer.lr=0 --set "job.run_dir=$work/sharded-run"
[[ $(value 'final weights sha256: \K\S+' "$work/sharded.log") == $(value 'final weights sha256: \K\S+' "$work/llama-base.log") ]] ||
  fail "the sharded model imported other weights"
echo "ok: a model sharded over two files and an index imports the same weights"

# A pre-LayerNorm bert: no HF class computes it.
run "$work/bert-pre.log" "$hpctrain" train "$repo/jobs/quickstart.toml" --set "data.dir=$data" "${small[@]}" "${quiet[@]}" \
  --set model.kind=bert --set training.steps=2 --set eval.interval=0 --set "job.run_dir=$work/bert-pre"
refused "model.kind = bert with model.norm_position = pre has no Hugging Face counterpart: .*pre-LayerNorm.*post-LayerNorm" \
  "$hpctrain" ckpt export "$work/bert-pre" --format hf --out "$work/bert-pre-hf"
[[ ! -e $work/bert-pre-hf ]] || fail "the refused export left $work/bert-pre-hf"

# An HF BERT's token types: row 0 (the type hpctrain feeds) is added to the
# position embeddings, so the file below computes what the export with that
# row added to its positions computes. The weights hash then differs from the
# export's (another split between two tables), the validation loss does not.
types=$(hostile bert-types "$work/bert/hf")
python3 - "$types/model.safetensors" <<'PY'
import json, struct, sys
blob = bytearray(open(sys.argv[1], "rb").read())
n = struct.unpack("<Q", blob[:8])[0]
header = json.loads(blob[8:8 + n])
types = header["bert.embeddings.token_type_embeddings.weight"]
begin, end = types["data_offsets"]
d = types["shape"][1]
# Not a constant row: the LayerNorm after the embeddings would remove one.
row = [(i % 7) * 0.1 - 0.3 for i in range(d)]
blob[8 + n + begin:8 + n + end] = struct.pack(f"<{d}f", *row)
positions = header["bert.embeddings.position_embeddings.weight"]
begin = positions["data_offsets"][0]
count = positions["shape"][0] * d
values = struct.unpack_from(f"<{count}f", blob, 8 + n + begin)
struct.pack_into(f"<{count}f", blob, 8 + n + begin, *[v - row[i % d] for i, v in enumerate(values)])
open(sys.argv[1], "wb").write(blob)
PY
run "$work/bert-types.log" "$hpctrain" eval "$types" --set "data.dir=$data" --sample --set eval.samples=32
typed=$(value 'validation loss \K[0-9.]+' "$work/bert-types.log")
exported=$(value 'validation loss \K[0-9.]+' "$work/bert-base.log")
python3 -c 'import sys; sys.exit(0 if abs(float(sys.argv[1]) - float(sys.argv[2])) < 1e-3 else 1)' "$typed" "$exported" ||
  fail "bert: with its token types added to the positions, validation loss $typed; the export's $exported"
echo "ok: bert: token type 0 is added to the position embeddings (validation loss $typed, the export's $exported)"

# Where the export goes: not into a directory of other files; again into its own.
mkdir "$work/other" && echo keep >"$work/other/notes.txt"
refused "holds other files and no earlier hpctrain export" \
  "$hpctrain" ckpt export "$work/llama/base" --format hf --out "$work/other"
[[ $(ls "$work/other") == notes.txt ]] || fail "ckpt export wrote into $work/other"
run "$work/again.log" "$hpctrain" ckpt export "$work/llama/base" --format hf --out "$work/llama/hf"

# Hostile model directories.
try() { "$hpctrain" train "$repo/jobs/finetune.toml" "${quiet[@]}" --set "model.init_from=$1" \
  --set "data.dir=$work/llama/data" --set "data.tokenizer=$work/llama/hf/tokenizer.model" --set training.steps=1 \
  --set "job.run_dir=$work/hostile-run"; }
bad=$(hostile wrong-shape)
sed -i 's/"intermediate_size": 192/"intermediate_size": 128/' "$bad/config.json"
refused "$bad/model.safetensors: tensor model.layers.0.mlp.gate_proj.weight: shape \[192, 64\], and hpctrain's blocks.0.mlp.gate.weight is \[128, 64\]" try "$bad"
bad=$(hostile gelu)
sed -i 's/"hidden_act": "silu"/"hidden_act": "gelu"/' "$bad/config.json"
refused "$bad/config.json: hidden_act = \"gelu\": hpctrain's model uses SiLU" try "$bad"
bad=$(hostile bert-gelu "$work/bert/hf")
sed -i 's/"hidden_act": "gelu_new"/"hidden_act": "gelu"/' "$bad/config.json"
refused "$bad/config.json: hidden_act = \"gelu\": hpctrain's model uses GELU's tanh approximation.*exact (erf) GELU" \
  "$hpctrain" eval "$bad" --set "data.dir=$data"
bad=$(hostile no-tokenizer)
rm "$bad/tokenizer.model"
refused "$bad has no tokenizer.model: hpctrain reads SentencePiece tokenizers" \
  "$hpctrain" train "$repo/jobs/finetune.toml" --set "model.init_from=$bad" --set "job.run_dir=$work/hostile-run"
bad=$(hostile truncated)
truncate -s -100 "$bad/model.safetensors"
refused "$bad/model.safetensors: tensor .*: data_offsets \[[0-9]*, [0-9]*\] run past the data's" try "$bad"
