#!/usr/bin/env bash
# sharded-checkpoints.sh HPCTRAIN EXPERIMENT DATA_DIR: checkpoint.sharded
# under DDP on 2 ranks.
#  - rank 1 is killed (SIGKILL) once its shard of step 8 is on disk, before
#    the index: step 8 is no checkpoint (no index), `ckpt verify` passes the
#    run with step 4 alone, and auto-resume removes step 8's shards, continues
#    from step 4 and ends at the final weights of an uninterrupted run that
#    wrote one-file checkpoints (the same seed and world size: bit for bit);
#  - a copy of a checkpoint missing one shard, and one with a byte of a shard
#    changed, are named BAD by `ckpt verify` with the shard and the reason;
#  - `ckpt inspect` shows the shards, and `ckpt export` of the sharded
#    checkpoint writes the same tensors (names, shapes, bytes) as the
#    one-file checkpoint of the same step.
set -euo pipefail
shopt -s inherit_errexit
hpctrain=$1 experiment=$2 data=$3
work=$(mktemp -d)
trap '[[ -n ${KEEP:-} ]] || rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
common=(--set "data.dir=$data" --set training.steps=12 --set training.batch_size=8 --set training.micro_batch_size=2
  --set model.n_layer=1 --set model.d_model=32 --set eval.interval=0 --set eval.final=sample --set eval.samples=16
  --set eval.sample_tokens=0 --set eval.test=false --set logging.interval=4 --set checkpoint.interval=4
  --set checkpoint.keep=0 --set training.precision=fp32 --set training.threads=1)
hash_in() { grep -o 'final weights sha256: [0-9a-f]*' "$1" | tail -1 | cut -d' ' -f4; }

mpiexec -n 2 "$hpctrain" train "$experiment" "${common[@]}" --set "job.run_dir=$work/whole" >"$work/whole.out" 2>&1 ||
  { cat "$work/whole.out"; fail "the one-file run"; }

run=$work/sharded
ckpts=$run/checkpoints
if HPCTRAIN_TEST_KILL_AFTER_SHARD=1:8 mpiexec -n 2 "$hpctrain" train "$experiment" "${common[@]}" \
  --set checkpoint.sharded=true --set "job.run_dir=$run" >"$work/killed.out" 2>&1; then
  cat "$work/killed.out"
  fail "the run whose rank 1 was killed succeeded"
fi
[[ -f $ckpts/step-00000004.h5 && -f $ckpts/step-00000004.shards/rank-00001.h5 ]] ||
  { ls -R "$ckpts"; fail "step 4 is not a sharded checkpoint"; }
[[ -f $ckpts/step-00000008.shards/rank-00001.h5 && ! -e $ckpts/step-00000008.h5 ]] ||
  { ls -R "$ckpts"; fail "rank 1's shard of step 8 is not on disk, or step 8 has an index"; }
"$hpctrain" ckpt verify "$run" >"$work/verify-killed.out" || { cat "$work/verify-killed.out"; fail "ckpt verify $run"; }
[[ $(grep -c '^OK' "$work/verify-killed.out") == 1 ]] && grep -q "^OK   $ckpts/step-00000004.h5 (format 8" "$work/verify-killed.out" ||
  { cat "$work/verify-killed.out"; fail "ckpt verify does not list step 4 alone"; }
echo "ok: rank 1 killed after its shard of step 8; step 8 has no index, and the run verifies with step 4"

mpiexec -n 2 "$hpctrain" train "$experiment" "${common[@]}" --set checkpoint.sharded=true \
  --set "job.run_dir=$run" >"$work/resumed.out" 2>&1 || { cat "$work/resumed.out"; fail "the resumed run"; }
grep -q "removed $ckpts/step-00000008.shards/rank-00001.h5: a checkpoint write that never finished" "$work/resumed.out" &&
  grep -q "resumed from $ckpts/step-00000004.h5 at step 4 " "$work/resumed.out" ||
  { cat "$work/resumed.out"; fail "auto-resume did not clear step 8's shards and continue from step 4"; }
grep -q "checkpoint at step 12: 2 shards written in parallel" "$work/resumed.out" || fail "step 12 was not written sharded"
[[ -n $(hash_in "$work/whole.out") && $(hash_in "$work/resumed.out") == "$(hash_in "$work/whole.out")" ]] ||
  fail "the resumed sharded run ended at $(hash_in "$work/resumed.out"), the one-file run at $(hash_in "$work/whole.out")"
echo "ok: auto-resume cleared step 8's shards, continued from step 4 and ended at the one-file run's weights"

# A shard missing, a shard changed: each copy its own run directory.
for damage in missing changed; do
  mkdir -p "$work/$damage"
  cp -r "$ckpts/step-00000012.h5" "$ckpts/step-00000012.shards" "$work/$damage/"
done
rm "$work/missing/step-00000012.shards/rank-00001.h5"
shard=$work/changed/step-00000012.shards/rank-00000.h5
printf '\x5a' | dd of="$shard" bs=1 seek=$(($(stat -c %s "$shard") / 2)) conv=notrunc status=none
for damage in missing changed; do
  if "$hpctrain" ckpt verify "$work/$damage/step-00000012.h5" >"$work/verify-$damage.out"; then
    cat "$work/verify-$damage.out"
    fail "ckpt verify passed a checkpoint with a $damage shard"
  fi
  cat "$work/verify-$damage.out"
done
grep -q "^BAD .*: shard rank-00001.h5: missing$" "$work/verify-missing.out" || fail "the missing shard is not named"
grep -q "^BAD .*: shard rank-00000.h5: its SHA-256 differs from the index's" "$work/verify-changed.out" ||
  fail "the changed shard is not named"

"$hpctrain" ckpt inspect "$ckpts/step-00000012.h5" >"$work/inspect.out"
grep -q "^shards       2, one per rank, in $ckpts/step-00000012.shards$" "$work/inspect.out" &&
  grep -q "^/model " "$work/inspect.out" && grep -q "^/optimizer " "$work/inspect.out" ||
  { cat "$work/inspect.out"; fail "ckpt inspect does not show the shards and their groups"; }
"$hpctrain" ckpt export "$ckpts/step-00000012.h5" --out "$work/sharded.safetensors" >/dev/null
"$hpctrain" ckpt export "$work/whole/checkpoints/step-00000012.h5" --out "$work/whole.safetensors" >/dev/null
# The stored configs differ (checkpoint.sharded), so the metadata does; the
# tensors' names, shapes, offsets and bytes must not.
/usr/bin/python3 - "$work/sharded.safetensors" "$work/whole.safetensors" <<'PY' ||
import json, struct, sys
def tensors(path):
    raw = open(path, "rb").read()
    (length,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8:8 + length])
    header.pop("__metadata__")
    return header, raw[8 + length:]
sys.exit(0 if tensors(sys.argv[1]) == tensors(sys.argv[2]) else 1)
PY
  fail "the sharded checkpoint exports other tensors than the one-file checkpoint of the same step"
echo "ok: ckpt verify names a missing and a changed shard; inspect shows the shards; export matches the one-file export"
