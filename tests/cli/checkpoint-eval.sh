#!/usr/bin/env bash
# checkpoint-eval.sh HPCTRAIN EXPERIMENT DATA_DIR: a short run writes its final
# checkpoint; then
#  - `hpctrain eval RUN` reproduces the run's final validation loss exactly,
#    over the whole split, and `--split test` the test loss the run printed
#    last;
#  - `hpctrain generate RUN` is deterministic for a seed;
#  - an architecture mismatch is refused, listing the differences;
#  - a truncated checkpoint and one with a flipped bit are refused.
set -euo pipefail
hpctrain=$1 experiment=$2 data=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$hpctrain" train "$experiment" --set "data.dir=$data" --set "job.run_dir=$work/run" --set training.steps=4 \
  --set training.batch_size=4 --set training.micro_batch_size=4 --set model.n_layer=1 --set model.d_model=32 \
  --set eval.samples=16 --set eval.sample_tokens=0 >"$work/train.out" 2>&1 || { cat "$work/train.out"; exit 1; }
trained=$(grep -o 'eval loss [0-9.]*' "$work/train.out" | tail -1 | cut -d' ' -f3)
evaluated=$("$hpctrain" eval "$work/run" | grep -o 'validation loss [0-9.]*' | cut -d' ' -f3)
[[ $trained == "$evaluated" ]] || { echo "FAIL: training ended at eval loss $trained, hpctrain eval says $evaluated"; exit 1; }
echo "ok: hpctrain eval reproduces the final validation loss $evaluated"
last=$(grep -v '^$' "$work/train.out" | tail -2 | head -1)
[[ $last =~ ^test\ loss\ ([0-9.]+)\ nats\ \(perplexity\ [0-9.]+\)\ over\ [0-9]+\ tokens,\ all\ [0-9]+\ sequences\ of\ the\ test\ split\ \(other\ files ]] ||
  { echo "FAIL: the run's last line but one is not the test split's loss: $last"; exit 1; }
grep -v '^$' "$work/train.out" | tail -1 | grep -q "^next: .hpctrain generate $work/run. samples again" ||
  { echo "FAIL: the run does not end saying what to do next: $(tail -1 "$work/train.out")"; exit 1; }
tested=$("$hpctrain" eval "$work/run" --split test | grep -o 'test loss [0-9.]*' | cut -d' ' -f3)
[[ ${BASH_REMATCH[1]} == "$tested" ]] || { echo "FAIL: the run's test loss ${BASH_REMATCH[1]}, hpctrain eval says $tested"; exit 1; }
echo "ok: the run's last line but one (before what to do next) is the test split's loss, $tested, and hpctrain eval --split test reproduces it"
# The output says what a reader needs; details go to the rank's log file only.
if grep -E "heap: |asks for a checkpoint|MB snapshot" "$work/train.out"; then
  echo "FAIL: the run printed the details above"; exit 1
fi
for detail in "heap: " "asks for a checkpoint and exit 75" "MB snapshot; training blocked"; do
  grep -q "$detail" "$work/run/logs/rank-0.log" || { echo "FAIL: logs/rank-0.log lacks '$detail'"; exit 1; }
done
grep -Eq "^validation loss .*; predicting tokens by their frequency alone scores [0-9.]+ nats \(perplexity [0-9.]+\)$" \
  "$work/train.out" || { echo "FAIL: no unigram baseline beside the validation loss"; exit 1; }
echo "ok: details only in logs/rank-0.log; the unigram baseline beside the validation loss"

a=$("$hpctrain" generate "$work/run" --prompt "def " --tokens 20 --seed 5)
b=$("$hpctrain" generate "$work/run" --prompt "def " --tokens 20 --seed 5)
[[ -n $a && $a == "$b" ]] || { echo "FAIL: generation is not deterministic: '$a' vs '$b'"; exit 1; }
echo "ok: generate is deterministic for a seed"

out=$("$hpctrain" eval "$work/run" --set model.d_model=64 2>&1 || true)
grep -Eq "does not fit this model \([0-9]+ differences\): tok_emb.weight: checkpoint [0-9]+x32 vs model [0-9]+x64" <<<"$out" ||
  { echo "FAIL: architecture mismatch not explained: $out"; exit 1; }
echo "ok: mismatch refused: ${out:0:160}..."

ckpt=$(ls "$work"/run/checkpoints/step-*.h5)
cp "$ckpt" "$work/truncated.h5"
truncate -s 2000 "$work/truncated.h5"
out=$("$hpctrain" generate "$work/truncated.h5" 2>&1 || true)
grep -q "truncated.h5: not a readable HDF5 file" <<<"$out" || { echo "FAIL: truncated file: $out"; exit 1; }
echo "ok: truncated checkpoint refused"

# One flipped bit inside tok_emb.weight: Fletcher32 must catch it.
cp "$ckpt" "$work/flipped.h5"
"$(dirname "$0")/flip-dataset-bit.sh" "$work/flipped.h5" /model/tok_emb.weight
out=$("$hpctrain" generate "$work/flipped.h5" 2>&1 || true)
grep -q "tok_emb.weight fails its checksum" <<<"$out" || { echo "FAIL: flipped bit: $out"; exit 1; }
echo "ok: a flipped bit is caught by Fletcher32: $out"
