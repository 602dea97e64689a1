#!/usr/bin/env bash
# gpu-startup-refusals.sh HPCTRAIN EXPERIMENT DATA_DIR RANKS
#
# GPU start-up on a machine without a GPU: every rank must stop with one error
# line, within a time limit, and none may hang.
#  1. `doctor --nccl` builds the NCCL communicator as GPU training does, with
#     rank 1's device selection failing (HPCTRAIN_TEST_FAIL_CUDA_DEVICE=1, in
#     NcclCommunicator's constructor, before the unique id is broadcast). Every
#     rank's line must name rank 1's injected failure: the ranks learn it from
#     the start-up agreement, not from their own failure. Here the other ranks
#     fail as well, for want of a GPU; on a GPU node they would get past their
#     own device selection and, without the agreement, wait for rank 0's
#     unique id or for rank 1 in ncclCommInitRank.
#  2. training.device = "cuda" on a CPU-only LibTorch: every rank names the refusal.
set -euo pipefail
shopt -s inherit_errexit
hpctrain=$1 experiment=$2 data=$3 ranks=$4
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
limit=60

# expect_every_rank NAME REGEX CMD...: CMD under mpiexec fails (not by the time
# limit), and each rank's stderr holds exactly one line, matching REGEX.
expect_every_rank() {
  local name=$1 regex=$2
  shift 2
  local rc=0 started=$SECONDS
  timeout -k 5 "$limit" mpiexec -n "$ranks" -prepend-rank "$@" >"$out/$name.out" 2>"$out/$name.err" || rc=$?
  local took=$((SECONDS - started))
  if [[ $rc -eq 0 || $rc -eq 124 || $rc -eq 137 ]]; then
    echo "FAIL: $name: exit $rc after ${took} s (0: no refusal; 124/137: hung until the ${limit} s limit)"
    cat "$out/$name.err"
    exit 1
  fi
  for ((r = 0; r < ranks; ++r)); do
    local lines
    lines=$(grep -c "^\[$r\] " "$out/$name.err" || true)
    if [[ $lines -ne 1 ]] || ! grep -Eq -- "^\[$r\] $regex" "$out/$name.err"; then
      echo "FAIL: $name: rank $r printed $lines stderr line(s); expected one matching /$regex/:"
      cat "$out/$name.err"
      exit 1
    fi
  done
  echo "ok: $name: exit $rc after ${took} s on $ranks ranks: $(grep '^\[0\] ' "$out/$name.err")"
}

HPCTRAIN_TEST_FAIL_CUDA_DEVICE=1 expect_every_rank nccl_startup \
  "hpctrain: error: .*rank 1: device selection failed: injected by HPCTRAIN_TEST_FAIL_CUDA_DEVICE" \
  "$hpctrain" doctor --nccl --no-bandwidth --timeout 20

expect_every_rank train_on_cuda \
  "hpctrain: error: ranks? [-0-9, ]+: training.device = \"cuda\", but this hpctrain runs on a CPU-only LibTorch" \
  "$hpctrain" train "$experiment" --set training.device=\"cuda\" --set data.dir=\""$data"\" \
  --set job.run_dir=\""$out/run"\"
