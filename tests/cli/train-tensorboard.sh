#!/usr/bin/env bash
# train-tensorboard.sh HPCTRAIN EXPERIMENT DATA_DIR: a short run, then an
# independent decoder (decode_tfevents.py) checks its TensorBoard file.
set -euo pipefail
hpctrain=$1 experiment=$2 data=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$hpctrain" train "$experiment" --set "data.dir=$data" --set "job.run_dir=$work/run" --set training.steps=6 \
  --set training.batch_size=4 --set training.micro_batch_size=4 --set model.n_layer=1 --set model.d_model=32 \
  --set eval.interval=3 --set eval.samples=8 --set eval.final=sample --set eval.test=false --set logging.interval=2 --set eval.sample_tokens=0 >"$work/out" 2>&1 ||
  { cat "$work/out"; exit 1; }
/usr/bin/python3 "$(dirname "$0")/decode_tfevents.py" "$work/run"
