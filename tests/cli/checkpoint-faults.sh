#!/usr/bin/env bash
# checkpoint-faults.sh HPCTRAIN EXPERIMENT DATA_DIR:
#  - kill -9 while a checkpoint is being written leaves the previous one intact,
#    and auto-resume removes the remains and continues from it;
#  - a truncated checkpoint and one with a flipped bit are named by
#    `hpctrain ckpt verify` and skipped (by name) by auto-resume, and by
#    `hpctrain eval` on the run directory;
#  - resuming with another architecture is refused, listing the differences;
#  - `ckpt export` writes safetensors that load back to the same weights.
set -euo pipefail
hpctrain=$1 experiment=$2 data=$3
work=$(mktemp -d)
pid=
trap '[[ -n $pid ]] && kill -9 "$pid" 2>/dev/null; rm -rf "$work"' EXIT
run=$work/run
ckpts=$run/checkpoints
# A model big enough (about 32 MB of checkpoint) that each write takes a while.
common=(--set "data.dir=$data" --set "job.run_dir=$run" --set training.batch_size=2 --set training.micro_batch_size=2
  --set model.n_layer=2 --set model.d_model=256 --set eval.interval=0 --set eval.samples=8 --set eval.final=sample --set eval.test=false --set eval.sample_tokens=0
  --set checkpoint.interval=2 --set checkpoint.keep=0 --set checkpoint.async=true)

# 1. kill -9 during a write. Start, wait for a first complete checkpoint, then
# for the temporary of a later one, and kill the trainer while it exists.
"$hpctrain" train "$experiment" "${common[@]}" --set training.steps=400 >"$work/killed.out" 2>&1 &
pid=$!
killed_during_write=
for _ in $(seq 1 60000); do
  kill -0 "$pid" 2>/dev/null || break
  complete=$( (compgen -G "$ckpts/step-*.h5" || true) | wc -l)
  if ((complete >= 1)) && compgen -G "$ckpts/step-*.h5.tmp-*" >/dev/null; then
    kill -9 "$pid"
    killed_during_write=yes
    break
  fi
  sleep 0.002
done
wait "$pid" 2>/dev/null || true
pid=
[[ $killed_during_write == yes ]] || { cat "$work/killed.out"; echo "FAIL: never caught a write in progress"; exit 1; }
partial=$(compgen -G "$ckpts/step-*.h5.tmp-*" | head -1)
[[ -n $partial ]] || { echo "FAIL: no partial file left by the killed writer"; exit 1; }
newest=$(ls "$ckpts"/step-*.h5 | sort | tail -1)
"$hpctrain" ckpt verify "$newest" || { echo "FAIL: the previous checkpoint was damaged"; exit 1; }
echo "ok: killed during the write of $(basename "$partial"); $(basename "$newest") intact"
step=$(basename "$newest" .h5)
step=$((10#${step#step-}))
"$hpctrain" train "$experiment" "${common[@]}" --set training.steps=$((step + 2)) >"$work/resumed.out" 2>&1 ||
  { cat "$work/resumed.out"; exit 1; }
grep -q "removed $partial: a checkpoint write that never finished" "$work/resumed.out" ||
  { cat "$work/resumed.out"; echo "FAIL: the partial file was not cleared"; exit 1; }
grep -q "resumed from $newest at step $step " "$work/resumed.out" ||
  { cat "$work/resumed.out"; echo "FAIL: did not resume from $newest"; exit 1; }
echo "ok: auto-resume cleared the partial file and continued from step $step"

# 2. Damaged newer checkpoints: truncated, and one flipped bit in a parameter.
good=$(ls "$ckpts"/step-*.h5 | sort | tail -1)
truncated=$ckpts/step-90000001.h5
flipped=$ckpts/step-90000002.h5
cp "$good" "$truncated"
truncate -s $(($(stat -c %s "$good") / 2)) "$truncated"
cp "$good" "$flipped"
"$(dirname "$0")/flip-dataset-bit.sh" "$flipped" /model/tok_emb.weight
set +e
out=$("$hpctrain" ckpt verify "$run" 2>&1)
rc=$?
set -e
echo "$out"
((rc == 1)) || { echo "FAIL: verify exited $rc with damaged checkpoints"; exit 1; }
grep -q "^BAD  $truncated: .*not a readable HDF5 file" <<<"$out" || { echo "FAIL: truncated file not named"; exit 1; }
grep -q "^BAD  $flipped: .*model/tok_emb.weight fails its checksum" <<<"$out" ||
  { echo "FAIL: flipped bit not named"; exit 1; }
grep -q "^OK   $good " <<<"$out" || { echo "FAIL: the good checkpoint not verified"; exit 1; }
gstep=$(basename "$good" .h5)
gstep=$((10#${gstep#step-}))
"$hpctrain" train "$experiment" "${common[@]}" --set training.steps=$((gstep + 1)) >"$work/skip.out" 2>&1 ||
  { cat "$work/skip.out"; exit 1; }
grep -q "skipping checkpoint $flipped: .*fails its checksum" "$work/skip.out" &&
  grep -q "skipping checkpoint $truncated: .*not a readable HDF5 file" "$work/skip.out" &&
  grep -q "resumed from $good at step $gstep " "$work/skip.out" ||
  { cat "$work/skip.out"; echo "FAIL: auto-resume did not skip the damaged files by name"; exit 1; }
echo "ok: verify names both damaged files; auto-resume skips them and takes $(basename "$good")"
# They lie beyond the step the run resumed from: set aside, not in its way.
grep -q "moved step-90000001.h5, step-90000002.h5 into $ckpts/superseded-from-step-$gstep-" "$work/skip.out" &&
  [[ ! -e $truncated && ! -e $flipped ]] ||
  { grep -i superseded "$work/skip.out"; echo "FAIL: the damaged newer files were not set aside"; exit 1; }
echo "ok: the resumed run set the damaged newer files aside"
# Damaged newer files again, for eval to pass over.
cp "$good" "$truncated"
truncate -s $(($(stat -c %s "$good") / 2)) "$truncated"
cp "$good" "$flipped"
"$(dirname "$0")/flip-dataset-bit.sh" "$flipped" /model/tok_emb.weight
newest_good=$(find "$ckpts" -name 'step-*.h5' ! -name 'step-9000000*' | sort | tail -n 1)
out=$("$hpctrain" eval "$run" --sample --set eval.samples=4 2>&1) || { echo "$out"; exit 1; }
grep -q "skipping checkpoint $flipped: .*fails its checksum" <<<"$out" &&
  grep -q "skipping checkpoint $truncated: .*not a readable HDF5 file" <<<"$out" &&
  grep -q "^checkpoint $newest_good " <<<"$out" ||
  { echo "$out"; echo "FAIL: eval on the run did not pass over the damaged checkpoints by name"; exit 1; }
echo "ok: eval on the run skips both damaged files and evaluates $(basename "$newest_good")"
rm -f "$truncated" "$flipped"

# 3. Another architecture cannot continue this run (the quickstart's Llama
# derives d_ff from d_model, so it differs too).
set +e
out=$("$hpctrain" train "$experiment" "${common[@]}" --set training.steps=400 --set model.d_model=128 \
  --set model.n_layer=3 2>&1)
rc=$?
set -e
((rc != 0)) && grep -Eq "cannot continue this run \(3 differences\): model.n_layer: checkpoint 2 vs run 3; model.d_model: checkpoint 256 vs run 128; model.d_ff: checkpoint 704 vs run 384. To start afresh here, set checkpoint.resume = \"never\"" <<<"$out" ||
  { echo "$out"; echo "FAIL: architecture mismatch not refused clearly (exit $rc)"; exit 1; }
echo "ok: mismatch refused: $(grep -o 'cannot continue.*' <<<"$out")"

# 4. safetensors export round trip, against the HDF5 parameters.
"$hpctrain" ckpt export "$run" --out "$work/model.safetensors"
/usr/bin/python3 - "$work/model.safetensors" "$(ls "$ckpts"/step-*.h5 | sort | tail -1)" "$work" <<'PY'
import json, struct, subprocess, sys
import numpy as np
path, h5, work = sys.argv[1:4]
blob = open(path, "rb").read()
(n,) = struct.unpack("<Q", blob[:8])
header = json.loads(blob[8:8 + n])
meta = header.pop("__metadata__")
assert meta["format"] == "pt", meta
data = blob[8 + n:]
ends = sorted(v["data_offsets"] for v in header.values())
assert ends[0][0] == 0 and all(a[1] == b[0] for a, b in zip(ends, ends[1:])) and ends[-1][1] == len(data), "offsets"
for name, v in header.items():
    assert v["dtype"] == "F32", v
    begin, end = v["data_offsets"]
    t = np.frombuffer(data[begin:end], dtype="<f4").reshape(v["shape"])
    raw = f"{work}/p.bin"
    subprocess.run(["h5dump", "-d", f"/model/{name}", "-b", "LE", "-o", raw, h5], check=True, capture_output=True)
    assert np.array_equal(t, np.fromfile(raw, dtype="<f4").reshape(v["shape"])), name
print(f"ok: safetensors holds {len(header)} tensors, bit-identical to the checkpoint's /model")
PY
