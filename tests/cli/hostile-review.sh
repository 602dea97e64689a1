#!/usr/bin/env bash
# hostile-review.sh CLASS HPCTRAIN REPO DATA: the second hostile review's
# classes (docs/security.md), each through the real binary, each a test of its
# own (CLASS):
#   export     an HF export that fails half-way (a rename refused by the file
#              system, injected with strace) leaves the earlier export whole;
#              two exports at once leave one of them whole, never a mix;
#   charsmap   a tokenizer.model whose normalizer carries a crafted
#              precompiled_charsmap is refused in one line (SentencePiece
#              0.1.97 reads far outside its buffer with it: SIGSEGV), and
#              one on which the library throws is refused naming the file;
#   shard      a shard cut short while the run trains ends the run with an
#              error naming the shard, not SIGBUS;
#   nonfinite  NaN weights in an HF directory are refused naming the tensor;
#              a fine-tune whose loss is not finite stops naming the step and
#              writes no checkpoint; an evaluation over no sequence exits 1;
#              a split with no whole sequence is refused when it is prepared;
#   sizes      shapes are compared before they are read or built: a tied
#              tensor of the wrong shape, a config.json far larger than the
#              machine, doctor --max-bytes 2^40, plan with a huge model;
#   outputs    hpctrain's own export of a GPT trained at fewer than 256
#              positions is read by eval and generate; a Hugging Face
#              directory with one broken member names it; a checkpoint
#              copied under a later step's name is skipped, not resumed from;
#   words      terminal control bytes from a tokenizer or the environment are
#              shown escaped; numbers as written; --out DIR/; a bad TMPDIR and
#              doctor --timeout 1e300 refused in words.
set -euo pipefail
class=$1 hpctrain=$2 repo=$3 data=$4
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $class: $*"; exit 1; }
run() {  # run LOG ARGS...: a command that must succeed, its output in LOG
  local log=$1
  shift
  "$@" >"$log" 2>&1 || { cat "$log"; fail "$*"; }
}
refused() {  # refused PATTERN ARGS...: exit 1 with one error line matching PATTERN
  local pattern=$1 out rc=0
  shift
  out=$("$@" 2>&1) || rc=$?
  ((rc == 1)) || { echo "$out"; fail "exit $rc (expected 1): $*"; }
  [[ $(grep -c "error" <<<"$out") == 1 ]] && grep -q -- "$pattern" <<<"$out" ||
    { echo "$out"; fail "expected one error line matching: $pattern"; }
  echo "ok: refused: $(grep error <<<"$out")"
}
llama=(--set model.kind=llama --set model.n_kv_head=1)
small=(--set model.n_layer=1 --set model.d_model=32 --set model.n_head=2
  --set eval.samples=16 --set eval.final=sample --set eval.test=false --set eval.sample_tokens=0 --set eval.interval=0
  --set "data.dir=$data")
trained() {  # trained NAME STEPS [ARGS...]: a small run (a llama unless ARGS say) and its HF export, $work/NAME/{run,hf}
  local name=$1 steps=$2
  shift 2
  (($#)) || set -- "${llama[@]}"
  run "$work/$name.log" "$hpctrain" train "$repo/jobs/quickstart.toml" "${small[@]}" --set "training.steps=$steps" \
    --set "job.run_dir=$work/$name/run" "$@"
  run "$work/$name-export.log" "$hpctrain" ckpt export "$work/$name/run" --format hf --out "$work/$name/hf"
}
# norm_weights FILE INDEX VALUES: model.norm.weight's F32 values from INDEX
# set to the Python expression VALUES (`count` is the tensor's length).
norm_weights() {
  python3 - "$@" <<'PY'
import json, struct, sys
path, index, values = sys.argv[1], int(sys.argv[2]), sys.argv[3]
blob = bytearray(open(path, "rb").read())
n = struct.unpack("<Q", blob[:8])[0]
start, end = json.loads(blob[8:8 + n])["model.norm.weight"]["data_offsets"]
count = (end - start) // 4
new = eval(f"[{values}]")
struct.pack_into(f"<{len(new)}f", blob, 8 + n + start + 4 * index, *new)
open(path, "wb").write(blob)
PY
}
# The step an export's config.json names, and the step its weights file names: one export has one.
export_steps() {
  python3 - "$1" <<'PY'
import json, struct, sys
d = sys.argv[1]
config = json.load(open(f"{d}/config.json"))["hpctrain_export"]["step"]
blob = open(f"{d}/model.safetensors", "rb").read()
n = struct.unpack("<Q", blob[:8])[0]
weights = json.loads(blob[8:8 + n])["__metadata__"]["hpctrain_step"]
print(f"{config} {weights}")
PY
}

case $class in
export)
  trained a 6
  trained b 4
  out=$work/out
  run "$work/x1.log" "$hpctrain" ckpt export "$work/a/run" --format hf --out "$out/"  # a trailing '/' names the directory
  [[ $(export_steps "$out") == "6 6" ]] || fail "the first export: steps $(export_steps "$out")"
  # The re-export's second rename fails (ENOSPC, as on a full disk): the
  # directory must still hold the first export whole, and nothing be left beside it.
  rc=0
  strace -f -qq -o /dev/null -e trace=rename,renameat,renameat2 -e inject=rename,renameat,renameat2:error=ENOSPC:when=2 \
    "$hpctrain" ckpt export "$work/b/run" --format hf --out "$out" >"$work/x2.log" 2>&1 || rc=$?
  ((rc != 0)) || { cat "$work/x2.log"; fail "the re-export with a failing rename exited 0"; }
  [[ $(export_steps "$out") == "6 6" ]] ||
    fail "after a re-export failed half-way, config.json and the weights say steps $(export_steps "$out"): $(cat "$work/x2.log")"
  leftovers=$(find "$work" -maxdepth 1 -name '.out.*' ! -name .out.lock)
  [[ -z $leftovers ]] || fail "the failed export left $leftovers"
  echo "ok: a re-export that failed half-way ($(grep -m1 error "$work/x2.log")) left the earlier export whole"
  run "$work/x3.log" "$hpctrain" ckpt export "$work/b/run" --format hf --out "$out"
  [[ $(export_steps "$out") == "4 4" ]] || fail "the re-export: steps $(export_steps "$out")"
  # Two exports at once, four times: each exits 0 and the directory holds one of them whole.
  for i in 1 2 3 4; do
    "$hpctrain" ckpt export "$work/a/run" --format hf --out "$work/race$i" >"$work/ra$i.log" 2>&1 &
    pa=$!
    "$hpctrain" ckpt export "$work/b/run" --format hf --out "$work/race$i" >"$work/rb$i.log" 2>&1 &
    pb=$!
    wait $pa || { cat "$work/ra$i.log"; fail "race $i: export a failed"; }
    wait $pb || { cat "$work/rb$i.log"; fail "race $i: export b failed"; }
    steps=$(export_steps "$work/race$i")
    [[ $steps == "6 6" || $steps == "4 4" ]] || fail "race $i: two exports at once left config.json and weights of steps $steps"
  done
  echo "ok: two exports at once, four times: each directory holds one export whole"
  ;;

charsmap)
  trained m 2
  hf=$work/m/hf
  python3 "$repo/tests/cli/sentencepiece_model_edit.py" charsmap "$hf/tokenizer.model"
  refused "$hf/tokenizer.model: its normalizer_spec carries a precompiled_charsmap of 1030 bytes" \
    "$hpctrain" generate "$hf" --tokens 4
  # A model the fuzz harness found, on which the library's trie builder throws
  # (an empty key): refused naming the file, where it was a bare library message.
  empty=$work/empty
  cp -r "$hf" "$empty"
  cp "$repo/tests/fuzz/corpus/tokenizer_model/found-empty-piece-darts-exception" "$empty/tokenizer.model"
  refused "$empty/tokenizer.model: not a SentencePiece model: .*zero-length key" "$hpctrain" generate "$empty" --tokens 4
  refused "tokenizer.model: its normalizer_spec carries a precompiled_charsmap" \
    "$hpctrain" train "$repo/jobs/finetune.toml" --set "model.init_from=$hf" --set "data.dir=$work/ft-data" \
    --set "job.run_dir=$work/ft" --set training.steps=1
  ;;

shard)
  # A shard cut short while a run trains (what `cp` over it does first): the
  # error names the shard, and the run checkpoints the last step it trained
  # whole and stops; with the shard back, the same command resumes there.
  # On one rank, then on two (each rank then learns of the other's failure).
  for ranks in 1 2; do
    cp -r "$data" "$work/data$ranks"
    shard=$(find "$work/data$ranks" -name 'train*' -type f | sort | head -1)
    [[ -n $shard ]] || fail "no training shard in $data"
    launch=("$hpctrain")
    ((ranks == 1)) || launch=("${MPIEXEC:-mpiexec}" -n "$ranks" "$hpctrain")
    args=(train "$repo/jobs/quickstart.toml" "${small[@]}" "${llama[@]}" --set "data.dir=$work/data$ranks"
      --set training.steps=100000 --set "job.run_dir=$work/run$ranks" --set logging.interval=1 --set eval.interval=100000)
    "${launch[@]}" "${args[@]}" >"$work/train$ranks.log" 2>&1 &
    pid=$!
    for _ in $(seq 300); do
      grep -q "step .*loss" "$work/train$ranks.log" && break
      sleep 0.1
    done
    grep -q "step .*loss" "$work/train$ranks.log" || { kill $pid; cat "$work/train$ranks.log"; fail "the run did not start"; }
    cp "$shard" "$work/whole-shard"
    truncate -s 1000 "$shard"
    rc=0
    wait $pid || rc=$?
    log=$work/train$ranks.log
    ((rc != 0 && rc != 135 && rc != 138)) || { tail -5 "$log"; fail "$ranks rank(s): the run ended with status $rc (138 or 135: SIGBUS)"; }
    ((ranks > 1 || rc == 1)) || { tail -5 "$log"; fail "the run ended with status $rc, not 1"; }
    grep -Eq "error: (ranks? [0-9, -]+: )?$shard: ends before byte [0-9]* of the [0-9]* it held when the run opened it" "$log" ||
      { tail -5 "$log"; fail "$ranks rank(s): the error does not name the shard"; }
    stopped=$(grep -o 'step [0-9]*: a rank cannot read its samples of a coming step' "$log" | grep -o '[0-9]*' | head -1 || true)
    [[ -n $stopped ]] || { tail -5 "$log"; fail "$ranks rank(s): no 'writing a checkpoint and stopping' at a step"; }
    grep -q "the run stopped after step $stopped with its checkpoint written" "$log" || { tail -3 "$log"; fail "the error does not say how to resume"; }
    ckpt=$work/run$ranks/checkpoints/step-$(printf '%08d' "$stopped").h5
    [[ -f $ckpt ]] || { ls "$work/run$ranks/checkpoints"; fail "$ranks rank(s): no checkpoint of step $stopped"; }
    echo "ok: $ranks rank(s): a shard cut short at step $stopped: $(grep -m1 -o 'error: .*ends before byte [0-9]*' "$log"); checkpoint $(basename "$ckpt") written, exit $rc"
    # The shard back: the same command resumes from that checkpoint.
    cp "$work/whole-shard" "$shard"
    run "$work/resume$ranks.log" "${launch[@]}" "${args[@]}" --set training.stop_after=$((stopped + 2))
    grep -q "resumed from $ckpt at step $stopped " "$work/resume$ranks.log" || { tail -5 "$work/resume$ranks.log"; fail "no resume from step $stopped"; }
    echo "ok: $ranks rank(s): with the shard back, the run resumes at step $stopped"
  done
  ;;

nonfinite)
  trained m 2
  bad=$work/nan
  cp -r "$work/m/hf" "$bad"
  # A NaN and an infinity in the final norm's weights (F32), from index 1.
  norm_weights "$bad/model.safetensors" 1 'float("nan"), float("inf")'
  refused "$bad/model.safetensors: tensor model.norm.weight holds 2 non-finite values (NaN or infinity), the first nan at flat index 1" \
    "$hpctrain" eval "$bad" --set "data.dir=$data" --sample
  # Finite but huge: the forward pass overflows, and the loss is not finite
  # from the first step. The run stops there and writes no checkpoint.
  huge=$work/huge
  cp -r "$work/m/hf" "$huge"
  norm_weights "$huge/model.safetensors" 0 '*([3e38] * count)'
  rc=0
  "$hpctrain" train "$repo/jobs/finetune.toml" --set "model.init_from=$huge" --set "data.dir=$work/ft-data" \
    --set "job.run_dir=$work/ft" --set training.steps=5 --set eval.interval=1 --set checkpoint.interval=1 \
    --set eval.samples=16 --set eval.sample_tokens=0 >"$work/ft.log" 2>&1 || rc=$?
  ((rc == 1)) || { tail -5 "$work/ft.log"; fail "a fine-tune with a loss that is not finite exited $rc"; }
  grep -Eq "error: step 1: the training loss is (-?nan|inf)" "$work/ft.log" ||
    { tail -5 "$work/ft.log"; fail "the error does not name the step"; }
  written=$(find "$work/ft" -name '*.h5' | wc -l)
  ((written == 0)) || fail "the diverged run wrote $written checkpoint(s): $(find "$work/ft" -name '*.h5')"
  echo "ok: $(grep -m1 -o 'step 1: the training loss is [^:]*' "$work/ft.log"), no checkpoint written"
  # On two ranks every rank stops at the same step, and mpiexec reports the failure.
  rc=0
  "${MPIEXEC:-mpiexec}" -n 2 "$hpctrain" train "$repo/jobs/finetune.toml" --set "model.init_from=$huge" --set "data.dir=$work/ft-data" \
    --set "job.run_dir=$work/ft2" --set training.steps=5 --set eval.interval=1 --set checkpoint.interval=1 \
    --set eval.samples=16 --set eval.sample_tokens=0 >"$work/ft2.log" 2>&1 || rc=$?
  ((rc != 0)) || { tail -5 "$work/ft2.log"; fail "on 2 ranks, a loss that is not finite exited 0"; }
  grep -Eq "error: .*step 1: the training loss is (-?nan|inf)" "$work/ft2.log" || { tail -5 "$work/ft2.log"; fail "2 ranks: no step named"; }
  [[ -z $(find "$work/ft2" -name '*.h5') ]] || fail "2 ranks: the diverged run wrote a checkpoint"
  echo "ok: on 2 ranks the run stops at step 1 with status $rc and writes no checkpoint"
  # An evaluation over no sequence: a data set whose validation split is
  # empty by choice (validation_fraction 0) scores nothing, and says so.
  run "$work/prep0.log" "$hpctrain" prepare "$repo/jobs/quickstart.toml" --set "data.dir=$work/noval" \
    --set data.validation_fraction=0 --set "data.tokenizer=$data/tokenizer.model"
  refused "the validation split holds no whole sequence of data.seq_len 256: nothing was scored" \
    "$hpctrain" eval "$work/m/run" --set "data.dir=$work/noval"
  # A split asked for but too small to hold one sequence: refused when prepared.
  mkdir -p "$work/tiny"
  for i in $(seq 40); do printf 'def f%s(x):\n    return x + %s\n' "$i" "$i" >"$work/tiny/m$i.py"; done
  refused "the validation split (data.validation_fraction = 0.05) holds .* tokens in .*, not one whole sequence of data.seq_len + 1 = 65 tokens" \
    "$hpctrain" prepare "$repo/jobs/quickstart.toml" --set "data.dir=$work/tiny-data" --set "data.sources=[\"$work/tiny\"]" \
    --set data.validation_fraction=0.05 --set data.test_fraction=0 --set data.seq_len=64 \
    --set "data.tokenizer=$data/tokenizer.model" \
    --set "data.exclude=[]" --set "data.document_starts=[]"
  ;;

sizes)
  trained m 2
  # A config.json of a 13B shape beside a 0.3 MB weights file.
  big=$work/big
  cp -r "$work/m/hf" "$big"
  sed -i -e 's/"hidden_size": 32/"hidden_size": 5120/' -e 's/"num_hidden_layers": 1/"num_hidden_layers": 40/' \
    -e 's/"intermediate_size": [0-9]*/"intermediate_size": 13824/' -e 's/"num_attention_heads": 2/"num_attention_heads": 40/' \
    -e 's/"num_key_value_heads": 1/"num_key_value_heads": 40/' -e 's/"head_dim": 16/"head_dim": 128/' "$big/config.json"
  start=$(date +%s)
  refused "$big/model.safetensors: tensor model.embed_tokens.weight: shape \[[0-9]*, 32\], and hpctrain's tok_emb.weight is \[[0-9]*, 5120\]" \
    "$hpctrain" eval "$big" --set "data.dir=$data"
  (($(date +%s) - start < 20)) || fail "the refusal took $(($(date +%s) - start)) s"
  # A shape this machine could build (0.8 GB of weights) beside the same
  # 0.3 MB file: refused from the file's headers before the model is built,
  # as the memory the command took shows (the model alone is 800 MB).
  mid=$work/mid
  cp -r "$work/m/hf" "$mid"
  sed -i -e 's/"hidden_size": 32/"hidden_size": 1024/' -e 's/"num_hidden_layers": 1/"num_hidden_layers": 16/' \
    -e 's/"intermediate_size": [0-9]*/"intermediate_size": 2816/' -e 's/"num_attention_heads": 2/"num_attention_heads": 16/' \
    -e 's/"num_key_value_heads": 1/"num_key_value_heads": 16/' -e 's/"head_dim": 16/"head_dim": 64/' "$mid/config.json"
  peak=$(python3 -c '
import resource, subprocess, sys
subprocess.run(sys.argv[2:], stdout=open(sys.argv[1], "w"), stderr=subprocess.STDOUT)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024)' "$mid.log" "$hpctrain" eval "$mid" --set "data.dir=$data")
  grep -q "error: $mid/model.safetensors: tensor model.embed_tokens.weight: shape \[[0-9]*, 32\]" "$mid.log" ||
    { cat "$mid.log"; fail "a 0.8 GB shape beside a 0.3 MB file was not refused by its tensors' shapes"; }
  ((peak < 500)) || fail "the refusal of a 0.8 GB shape took $peak MB: the model was built before the file was read"
  echo "ok: a 0.8 GB config.json beside a 0.3 MB file refused from the headers, the command's peak memory $peak MB"
  # The memory guard, for a model's own experiment (no file to compare with).
  refused "model: llama with d_model 5120, n_layer 40, n_head 40, d_ff 13824, .* has about 1.27e.10 parameters, .* GB of float32 weights alone, more than this machine's" \
    "$hpctrain" train "$repo/jobs/quickstart.toml" "${llama[@]}" --set model.d_model=5120 --set model.n_layer=40 \
    --set model.n_head=40 --set model.n_kv_head=40 --set model.d_ff=13824 --set "data.dir=$data" --set "job.run_dir=$work/big-run"
  refused "model: gpt with d_model 16384, n_layer 96" \
    "$hpctrain" plan "$repo/jobs/quickstart.toml" --set model.kind=gpt --set model.d_model=16384 --set model.n_layer=96 \
    --set model.n_head=128 --set "data.dir=$data"
  refused "doctor --max-bytes 1099511627776: more than a quarter of this machine's" \
    "$hpctrain" doctor --max-bytes 1099511627776
  # GPT-2's tied lm_head of another shape: refused from its header, before it is read.
  trained g 2 --set model.kind=gpt
  python3 - "$work/g/hf/model.safetensors" <<'PY'
import json, struct, sys
path = sys.argv[1]
blob = open(path, "rb").read()
n = struct.unpack("<Q", blob[:8])[0]
header = json.loads(blob[8:8 + n])
data = blob[8 + n:]
wte = header["transformer.wte.weight"]
rows, d = wte["shape"]
extra = struct.pack("<f", 0.5) * ((rows + 7) * d)
header["lm_head.weight"] = {"dtype": "F32", "shape": [rows + 7, d], "data_offsets": [len(data), len(data) + len(extra)]}
text = json.dumps(header).encode()
text += b" " * (-len(text) % 8)
open(path, "wb").write(struct.pack("<Q", len(text)) + text + data + extra)
PY
  refused "tensor lm_head.weight: shape \[[0-9]*, 32\], and .*config.json ties it to hpctrain's tok_emb.weight of \[[0-9]*, 32\]" \
    "$hpctrain" eval "$work/g/hf" --set "data.dir=$data" --sample
  ;;

words)
  trained m 2
  hf=$work/m/hf
  # Every piece of the tokenizer begins with ESC [ 2 J (clear the screen) and a CSI.
  python3 "$repo/tests/cli/sentencepiece_model_edit.py" escape "$hf/tokenizer.model"
  run "$work/gen.log" "$hpctrain" generate "$hf" --tokens 12 --seed 3
  if grep -q $'\x1b' "$work/gen.log" || grep -q $'\xc2\x9b' "$work/gen.log"; then fail "generate printed ESC or CSI raw"; fi
  grep -q '\\x1b\[2J' "$work/gen.log" || { cat "$work/gen.log"; fail "generate shows no escaped ESC"; }
  echo "ok: generate shows a hostile tokenizer's control bytes escaped: $(head -c 80 "$work/gen.log" | tr '\n' ' ')"
  HPCTRAIN_OPENBLAS_CHOSE=$'\e]0;owned\a\e[2J' OPENBLAS_CORETYPE=Haswell "$hpctrain" doctor >"$work/doctor.log" 2>&1 || true
  if grep -q $'\x1b' "$work/doctor.log"; then fail "doctor printed HPCTRAIN_OPENBLAS_CHOSE raw"; fi
  echo "ok: doctor shows HPCTRAIN_OPENBLAS_CHOSE escaped"
  wide=$work/wide
  cp -r "$hf" "$wide"
  sed -i 's/"num_hidden_layers": 1/"num_hidden_layers": 9223372036854775808/' "$wide/config.json"
  refused "num_hidden_layers = 9223372036854775808 is outside" "$hpctrain" eval "$wide" --set "data.dir=$data"
  refused "TMPDIR=$work/no-such-dir is not one" env TMPDIR="$work/no-such-dir" \
    "$hpctrain" plan "$repo/jobs/quickstart.toml" --set "data.dir=$data" "${small[@]}" "${llama[@]}"
  out=$("$hpctrain" doctor --timeout 1e300 2>&1) && fail "doctor --timeout 1e300 exited 0: $out"
  grep -q "timeout" <<<"$out" || fail "doctor --timeout 1e300: $out"
  echo "ok: doctor --timeout 1e300 refused: $(head -1 <<<"$out")"
  ;;
outputs)
  # hpctrain's own export of a GPT trained at 64 positions: eval and generate
  # read it at its own length (generate has no --set to say so).
  trained g 2 --set model.kind=gpt --set data.seq_len=64
  run "$work/eval.log" "$hpctrain" eval "$work/g/hf" --set "data.dir=$data" --sample
  grep -q "validation loss [0-9.]*, perplexity" "$work/eval.log" || { cat "$work/eval.log"; fail "eval of a 64-position export"; }
  run "$work/gen.log" "$hpctrain" generate "$work/g/hf" --tokens 8
  echo "ok: eval and generate read hpctrain's export of a 64-position GPT"
  # One broken member of a Hugging Face directory is named, not "no checkpoint".
  broken=$work/broken
  cp -r "$work/g/hf" "$broken"
  rm "$broken/model.safetensors" && mkdir "$broken/model.safetensors"
  refused "$broken/model.safetensors: a directory, not a regular file (the model's weights)" \
    "$hpctrain" eval "$broken" --set "data.dir=$data"
  rm -r "$broken/model.safetensors" && ln -s "$work/nowhere" "$broken/model.safetensors"
  refused "$broken/model.safetensors: a symbolic link, not a regular file" "$hpctrain" generate "$broken"
  # A checkpoint copied under a later step's name is skipped, named, and the
  # run resumes from the newest checkpoint that holds its own step.
  trained r 4 "${llama[@]}" --set checkpoint.interval=2 --set checkpoint.keep=5
  ckpts=$work/r/run/checkpoints
  cp "$ckpts/step-00000002.h5" "$ckpts/step-00000008.h5"
  run "$work/resume.log" "$hpctrain" train "$repo/jobs/quickstart.toml" "${small[@]}" "${llama[@]}" \
    --set training.steps=6 --set checkpoint.interval=2 --set checkpoint.keep=5 --set "job.run_dir=$work/r/run"
  grep -q "step-00000008.h5.*named for step 8 but holds step 2" "$work/resume.log" ||
    { cat "$work/resume.log"; fail "the copy under a later name is not named"; }
  grep -q "resumed from $ckpts/step-00000004.h5 at step 4" "$work/resume.log" ||
    { cat "$work/resume.log"; fail "the run did not resume from step 4"; }
  echo "ok: a checkpoint copied under a later step's name is skipped; the run resumed from step 4 and finished"
  # A fine-tune whose model.init_from directory is gone (a requeued job whose
  # base model was on node-local scratch) resumes from its own checkpoint;
  # eval reads the run; a new run naming the gone directory is refused.
  cp -r "$work/g/hf" "$work/scratch-base"
  ft=(train "$repo/jobs/finetune.toml" --set "model.init_from=$work/scratch-base" --set "data.dir=$work/ft-data"
    --set data.seq_len=64 --set training.steps=6 --set checkpoint.interval=2 --set eval.interval=0 --set eval.samples=16
    --set eval.final=sample --set eval.test=false --set eval.sample_tokens=0)
  run "$work/ft1.log" "$hpctrain" "${ft[@]}" --set "job.run_dir=$work/ft" --set training.stop_after=2
  rm -r "$work/scratch-base"
  run "$work/ft2.log" "$hpctrain" "${ft[@]}" --set "job.run_dir=$work/ft"
  grep -q "resumed from $work/ft/checkpoints/step-00000002.h5 at step 2" "$work/ft2.log" ||
    { cat "$work/ft2.log"; fail "the fine-tune did not resume once its base model was gone"; }
  run "$work/ft-eval.log" "$hpctrain" eval "$work/ft" --set "data.dir=$work/ft-data"
  echo "ok: a fine-tune resumed at step 2 and finished after its model.init_from directory was removed; eval read it"
  refused "$work/scratch-base" "$hpctrain" "${ft[@]}" --set "job.run_dir=$work/ft-new"
  ;;
*) fail "unknown class" ;;
esac
