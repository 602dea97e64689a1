#!/usr/bin/env bash
# token-files.sh HPCTRAIN EXPERIMENT: data another tool tokenized. Python
# writes a training and a validation file the way llm.c's data scripts lay
# them out (256 little-endian int32 of header: magic 20240520, version 1,
# token count; then uint16 tokens of GPT-2's 50257-token vocabulary), a test
# file likewise, and one as nanoGPT's prepare.py writes it (bare uint16). hpctrain
# prepares them without a tokenizer, Python reads the prepared shards back and
# compares every token, a small GPT trains and is evaluated on them, and
# `generate`, which has no tokenizer to use, refuses by saying why.
set -euo pipefail
hpctrain=$1 experiment=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir "$work/tokens"
/usr/bin/python3 - "$work/tokens" <<'PY'
import array, struct, sys
out = sys.argv[1]
def tokens(n, salt):
    # A stream a model can learn: a cycle of 64 ids spread over GPT-2's whole range.
    return [((i + salt) % 64) * 781 for i in range(n)]
def llmc(path, toks):
    with open(path, "wb") as f:
        f.write(struct.pack("<256i", 20240520, 1, len(toks), *([0] * 253)))
        f.write(array.array("H", toks).tobytes())
llmc(f"{out}/demo_train_000001.bin", tokens(6000, 0))
llmc(f"{out}/demo_train_000002.bin", tokens(5000, 11))
llmc(f"{out}/demo_val_000000.bin", tokens(2000, 5))
llmc(f"{out}/demo_test_000000.bin", tokens(1500, 3))
with open(f"{out}/val.u16", "wb") as f:
    array.array("H", tokens(1500, 3)).tofile(f)
PY
common=(--set "data.dir=$work/data" --set "job.run_dir=$work/run" --set "data.sources=[\"$work/tokens\"]"
  --set data.glob=demo_train_*.bin --set "data.validation_sources=[\"$work/tokens/demo_val_000000.bin\"]"
  --set "data.test_sources=[\"$work/tokens/demo_test_000000.bin\"]"
  --set data.format=llmc --set "data.document_starts=[]" --set data.vocab_size=50257 --set data.seq_len=32 --set data.test_fraction=0
  --set model.n_layer=1 --set model.d_model=32 --set model.n_head=2 --set training.steps=20 --set training.batch_size=4
  --set training.micro_batch_size=4 --set eval.interval=0 --set eval.samples=16 --set schedule.warmup_steps=2)
"$hpctrain" prepare "$experiment" "${common[@]}" >"$work/prepare.out" 2>&1 || { cat "$work/prepare.out"; exit 1; }
grep -Eq "tokens +14500 \(train 11000, validation 2000, test 1500\)" "$work/prepare.out" ||
  { cat "$work/prepare.out"; echo "FAIL: token counts"; exit 1; }
grep -q "tokenizer            none" "$work/prepare.out" || { cat "$work/prepare.out"; echo "FAIL: a tokenizer?"; exit 1; }
/usr/bin/python3 - "$work/tokens" "$work/data" <<'PY'
import array, glob, json, sys
tokens, data = sys.argv[1:]
def llmc_tokens(path):
    raw = open(path, "rb").read()
    return array.array("H", raw[1024:])
meta = json.load(open(f"{data}/meta.json"))
assert meta["vocab_size"] == 50257 and meta["token_bytes"] == 2, meta
for split, files in (("train", sorted(glob.glob(f"{tokens}/demo_train_*.bin"))), ("val", [f"{tokens}/demo_val_000000.bin"])):
    want = array.array("H")
    for f in files:
        want.extend(llmc_tokens(f))
    got = array.array("H")
    for shard in meta["splits"][split]["shards"]:
        got.extend(array.array("H", open(f"{data}/{shard['file']}", "rb").read()))
    assert got == want, f"{split}: the prepared tokens differ from the files' ({len(got)} vs {len(want)})"
    print(f"ok: {split}: all {len(got)} tokens as written, in file order")
PY
"$hpctrain" train "$experiment" "${common[@]}" >"$work/train.out" 2>&1 || { cat "$work/train.out"; exit 1; }
grep -q "step     20/20 " "$work/train.out" || { cat "$work/train.out"; echo "FAIL: did not train 20 steps"; exit 1; }
# Learned from the tokens: below the uniform loss over GPT-2's vocabulary, ln 50257 = 10.82.
awk '/eval loss/ { loss = $6 } END { exit !(loss < 9.82) }' "$work/train.out" ||
  { grep "eval loss" "$work/train.out"; echo "FAIL: no lower than a uniform guess"; exit 1; }
! grep -q "hpctrain generate" "$work/train.out" || { echo "FAIL: the log suggests generate"; exit 1; }
grep -q "no sample: token files with no tokenizer" "$work/train.out" ||
  { tail -5 "$work/train.out"; echo "FAIL: the missing sample was not explained"; exit 1; }
"$hpctrain" eval "$work/run" >"$work/eval.out" 2>&1 || { cat "$work/eval.out"; exit 1; }
grep -Eq "validation loss [0-9.]+, perplexity [0-9.]+ over [0-9]+ tokens, all 62 sequences" "$work/eval.out" ||
  { cat "$work/eval.out"; echo "FAIL: eval"; exit 1; }
"$hpctrain" eval "$work/run" --split test >"$work/test.out" 2>&1 || { cat "$work/test.out"; exit 1; }
grep -Eq "test loss [0-9.]+, perplexity [0-9.]+ over [0-9]+ tokens, all 46 sequences" "$work/test.out" ||
  { cat "$work/test.out"; echo "FAIL: eval of the test split"; exit 1; }
echo "ok: trained 20 steps and evaluated: $(grep -o 'validation loss.*' "$work/eval.out"); $(grep -o 'test loss.*' "$work/test.out")"
if "$hpctrain" generate "$work/run" >"$work/generate.out" 2>&1; then echo "FAIL: generate without a tokenizer"; exit 1; fi
grep -q "trained on token files with no tokenizer (data.tokenizer)" "$work/generate.out" ||
  { cat "$work/generate.out"; echo "FAIL: generate's refusal"; exit 1; }
echo "ok: generate refuses: $(cat "$work/generate.out")"

# nanoGPT's bare uint16 given as llm.c's: refused, naming the file.
"$hpctrain" prepare "$experiment" "${common[@]}" --set "data.dir=$work/data2" \
  --set "data.validation_sources=[\"$work/tokens/val.u16\"]" >"$work/mixed.out" 2>&1 &&
  { echo "FAIL: a bare file read as llm.c's"; exit 1; }
grep -q "val.u16: starts with .*, not llm.c's magic number 20240520" "$work/mixed.out" ||
  { cat "$work/mixed.out"; echo "FAIL: the bare file was not named"; exit 1; }
echo "ok: a bare uint16 file given as llm.c's is refused by name"
