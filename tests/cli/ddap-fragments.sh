#!/usr/bin/env bash
# ddap-fragments.sh HPCTRAIN EXPERIMENT DATA_DIR [--set k=v ...]: streaming
# DDAP (parallel.merge_fragments) at 2 ranks with a checkpoint after every
# step; h5py and numpy check from the files alone that each merge moved the
# anchor and synchronized the replicas on exactly the fragment the documented
# rule names, at the step it names (ddap_fragments_reference.py).
set -euo pipefail
hpctrain=$1 experiment=$2 data=$3
shift 3
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap '[[ -n ${KEEP:-} ]] || rm -rf "$work"' EXIT
steps=13
mpiexec -n 2 "$hpctrain" train "$experiment" --set "data.dir=$data" --set training.steps=$steps \
  --set training.batch_size=8 --set training.micro_batch_size=2 --set model.n_layer=2 --set model.d_model=32 \
  --set eval.interval=0 --set eval.final=sample --set eval.samples=16 --set eval.sample_tokens=0 --set eval.test=false \
  --set training.threads=1 --set checkpoint.interval=1 --set checkpoint.keep=0 --set checkpoint.keep_best=false \
  --set parallel.reducer=ddap --set "job.run_dir=$work/run" "$@" >"$work/train.out" 2>&1 ||
  { cat "$work/train.out"; echo "FAIL: training"; exit 1; }
grep -h "^reducer" "$work/train.out" | sed 's/^/  /'
mapfile -t checkpoints < <(ls "$work"/run/checkpoints/step-*.h5)
[[ ${#checkpoints[@]} == "$steps" ]] || { ls "$work/run/checkpoints"; echo "FAIL: want $steps checkpoints"; exit 1; }
# The last checkpoint follows the final whole-model merge: it gives the
# parameters' order, and the rule's check stops at the step before.
PYTHONPATH=$here /usr/bin/python3 "$here/ddap_fragments_reference.py" "${checkpoints[-1]}" \
  "${checkpoints[@]:0:$((steps - 1))}" ||
  { echo "FAIL: the merges did not follow the fragments' rule"; exit 1; }
