#!/usr/bin/env bash
# bench/gpu-smoke.sh [--cpu | --dry-run] [--build-dir DIR] [--prebuilt] [--data DIR] [--work DIR]
#                    [--set KEY=VALUE ...]
#
# The first run on a GPU node, in one command: does hpctrain's GPU path work
# here? Steps, each PASS or FAIL in the table at the end:
#   torch    find a CUDA LibTorch: $CMAKE_PREFIX_PATH, else the cmake prefix of
#            a python3 whose torch was built with CUDA (Debian's python3-torch
#            is CPU-only and is refused)
#   build    hpctrain against it, with the node's CUDA and NCCL (DIR, default
#            build-gpu/); --prebuilt: DIR holds a built hpctrain already
#            (bench/gpu-proof.sh builds it), which must have the NCCL backend
#   data     the quickstart data set (--data DIR to reuse one)
#   doctor   hpctrain doctor --nccl on one rank per GPU: each rank's GPU, the
#            NCCL and CUDA libraries, allreduce busbw over MPI and over NCCL
#   ddp      30 bf16 steps of DDP (the quickstart model) on every GPU
#   rerun    the ddp step again: it must end at the same weights hash, bit
#            for bit (the same seed and world size give the same run)
#   zero     the ddp step again with ZeRO-1 (parallel.zero = 1: gradients
#            reduce-scattered, AdamW state sharded, parameters allgathered):
#            the reducer must say so, and every logged loss must agree with the
#            ddp step's to 1e-3 relative: a reduce-scatter may add the bf16
#            gradients in another order than an allreduce (3.7e-6 seen with
#            MPI on CPUs), while a lost or misplaced shard update is off by
#            far more within 30 steps
#   ddap     30 bf16 steps of DDAP (DiLoCo, overlapped merges every 5 steps, the int8 merge wire)
#   resume   15 steps, a stop with a checkpoint, a resume and 15 more must end
#            at the ddp step's final weights hash, bit for bit
#   kill     (2+ GPUs) a 2-rank run loses rank 1 to kill -9: the job must end
#            within the collective timeout plus a grace, naming rank 1
#
# --cpu runs the same steps on this machine's CPUs (the default build in
# build/, Debian's LibTorch, a tiny model, 2 ranks; the torch step is skipped and
# so marked): it checks the script and every step that needs no GPU. --dry-run
# prints the GPU plan's commands without running any. --set KEY=VALUE goes
# to every run (bench/gpu-proof.sh names the data set's sources with it). docs/bootstrap.md
# describes what each step proves.
set -euo pipefail
shopt -s inherit_errexit
repo=$(cd "$(dirname "$0")/.." && pwd)
mode=gpu build="" data="" work="" prebuilt=0 extra=()
while (($# > 0)); do
  case $1 in
    --cpu) mode=cpu ;;
    --dry-run) mode=dry ;;
    --build-dir) build=$2; shift ;;
    --prebuilt) prebuilt=1 ;;
    --set) extra+=(--set "$2"); shift ;;
    --data) data=$2; shift ;;
    --work) work=$2; shift ;;
    *) echo "gpu-smoke: unknown argument '$1' (see the comment at the top of $0)" >&2; exit 2 ;;
  esac
  shift
done
if [[ -z $work ]]; then
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
fi
mkdir -p "$work"

if [[ $mode == cpu ]]; then
  build=${build:-$repo/build}
  ranks=2
  device=cpu
  # A tiny model: the CPU run checks the steps, not the speed.
  shape=(--set model.n_layer=1 --set model.d_model=32 --set training.batch_size=4 --set training.micro_batch_size=2
    --set data.seq_len=64)
else
  build=${build:-$repo/build-gpu}
  # One rank per GPU this node lets us see.
  if [[ -n ${CUDA_VISIBLE_DEVICES:-} ]]; then
    ranks=$(tr ',' '\n' <<<"$CUDA_VISIBLE_DEVICES" | grep -c .)
  else
    ranks=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ' || true)
  fi
  ((ranks > 0)) || ranks=1
  device=cuda
  shape=()
fi
hpctrain=$build/hpctrain
data=${data:-$work/data}
common=(--set "data.dir=$data" --set "training.device=$device" --set training.precision=bf16
  --set eval.interval=0 --set eval.samples=64 --set eval.final=sample --set eval.test=false
  --set eval.sample_tokens=0 --set logging.interval=5 --set checkpoint.interval=0 "${shape[@]}" ${extra[@]+"${extra[@]}"})
kill_timeout=10

declare -a names results notes seconds
blocked=0  # a step has failed
record() { # NAME RESULT NOTE SECONDS
  names+=("$1")
  results+=("$2")
  notes+=("$3")
  seconds+=("$4")
}

# step NAME CMD...: runs CMD (a function below), recording PASS or FAIL with
# its last line of output; --dry-run prints the commands instead.
step() {
  local name=$1
  shift
  if [[ $mode == dry ]]; then
    echo "# $name"
    DRY=1 "$@"
    return 0
  fi
  local started=$SECONDS rc=0
  "$@" >"$work/$name.log" 2>&1 || rc=$?
  local note
  note=$(grep -v '^$' "$work/$name.log" | tail -1 | cut -c1-110)
  if ((rc == 0)); then
    record "$name" PASS "$note" $((SECONDS - started))
  else
    record "$name" FAIL "$note" $((SECONDS - started))
    blocked=1
  fi
}

# run CMD...: prints CMD under --dry-run, runs it otherwise.
run() {
  if [[ -n ${DRY:-} ]]; then
    printf '%q ' "$@"
    echo
  else
    "$@"
  fi
}

train() { # RUN_DIR [--set ...]: one run on every rank
  local dir=$1
  shift
  run mpiexec -n "$ranks" "$hpctrain" train "$repo/jobs/quickstart.toml" "${common[@]}" --set training.steps=30 \
    --set "job.run_dir=$dir" "$@"
}

final_hash() { grep -o 'final weights sha256: [0-9a-f]*' "$1" | tail -1; }

find_torch() {
  if [[ -n ${DRY:-} ]]; then
    echo "# CMAKE_PREFIX_PATH with a CUDA LibTorch, else:"
    run python3 -c 'import torch; print(torch.version.cuda, torch.utils.cmake_prefix_path)'
    return 0
  fi
  local p
  local prefixes=${CMAKE_PREFIX_PATH:-}
  for p in ${prefixes//:/ }; do
    if [[ -n $(find "$p" -maxdepth 4 -name 'libtorch_cuda.so' -print -quit 2>/dev/null) ]]; then
      echo "$p" >"$work/torch-prefix"
      echo "CUDA LibTorch from CMAKE_PREFIX_PATH: $p"
      return 0
    fi
  done
  local found
  found=$(python3 -c 'import torch; print(torch.version.cuda or "", torch.utils.cmake_prefix_path)' 2>/dev/null) || {
    echo "no CUDA LibTorch: CMAKE_PREFIX_PATH has none, and python3 cannot import torch"
    return 1
  }
  if [[ -z ${found%% *} || $found != *' '* ]]; then
    echo "python3's torch (${found#* }) is built without CUDA (Debian's python3-torch is CPU-only);" \
      "install a CUDA build (pip install torch) or point CMAKE_PREFIX_PATH at a CUDA LibTorch"
    return 1
  fi
  echo "${found#* }" >"$work/torch-prefix"
  echo "CUDA ${found%% *} LibTorch from python3: ${found#* }"
}

build_hpctrain() {
  if ((prebuilt)); then
    [[ -n ${DRY:-} ]] && { echo "# $hpctrain, built already"; return 0; }
    [[ -x $hpctrain ]] || { echo "--prebuilt, but $hpctrain is not there"; return 1; }
    [[ $mode == cpu ]] && { "$hpctrain" --version | head -1; return 0; }
    "$hpctrain" --version | grep 'built against NCCL' || { echo "$hpctrain was built without the NCCL backend"; return 1; }
    return 0
  fi
  if [[ $mode == cpu ]]; then
    run cmake --build "$build" --target hpctrain
    return
  fi
  local prefix
  prefix=$([[ -n ${DRY:-} ]] && echo '$TORCH_PREFIX' || cat "$work/torch-prefix")
  run cmake -S "$repo" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release "-DCMAKE_PREFIX_PATH=$prefix" \
    -DHPCTRAIN_WITH_NCCL=ON -DHPCTRAIN_BENCH=OFF -DHPCTRAIN_CLUSTER_TESTS=OFF
  run cmake --build "$build" --target hpctrain
  [[ -n ${DRY:-} ]] || "$hpctrain" --version | grep 'built against NCCL' || {
    echo "built without the NCCL backend (CUDA or NCCL not found: see $build/CMakeCache.txt)"
    return 1
  }
}

prepare_data() {
  if [[ -z ${DRY:-} && -f $data/meta.json ]]; then
    echo "reusing $data"
    return 0
  fi
  run "$hpctrain" prepare "$repo/jobs/quickstart.toml" --set "data.dir=$data"
}

doctor() {
  local nccl=(--nccl)
  [[ $mode == cpu ]] && nccl=()
  run mpiexec -n "$ranks" "$hpctrain" doctor "${nccl[@]}" --max-bytes 16777216
}

ddp() {
  train "$work/ddp"
  [[ -n ${DRY:-} ]] || final_hash "$work/ddp.log" | grep -q . || { echo "no final weights hash"; return 1; }
}

# losses RUN_DIR: "step loss" per logged training step, from its metrics.
losses() { grep -o '"kind":"train","step":[0-9]*,"loss":[-0-9.e+]*' "$1/metrics.jsonl" | awk -F '[:,]' '{print $4, $6}'; }

# ends_as_ddp STEP WHAT: STEP's run ended at the ddp step's final weights hash.
ends_as_ddp() {
  [[ -z ${DRY:-} ]] || return 0
  local want got
  want=$(final_hash "$work/ddp.log")
  got=$(final_hash "$work/$1.log")
  [[ -n $want && $got == "$want" ]] || { echo "the $1 step ended at '$got', the ddp step at '$want'"; return 1; }
  echo "$2: $got"
}

rerun() {
  train "$work/rerun"
  ends_as_ddp rerun "ddp twice, bit for bit"
}

zero() {
  train "$work/zero" --set parallel.zero=1
  [[ -z ${DRY:-} ]] || return 0
  grep -q 'ZeRO-1: AdamW state sharded over' "$work/zero.log" || { echo "the reducer does not say ZeRO-1"; return 1; }
  local tolerance=1e-3
  # Every logged step of both runs, loss against loss.
  join <(losses "$work/ddp") <(losses "$work/zero") | awk -v tol="$tolerance" '
    { n++; d = $2 - $3; if (d < 0) d = -d; r = d / ($2 < 0 ? -$2 : $2); if (r > worst) worst = r }
    END { if (n < 2) { print "fewer than 2 logged steps to compare"; exit 1 }
          if (worst > tol) { printf "ZeRO-1 against DDP: worst relative loss difference %.3g > %s over %d steps\n", worst, tol, n; exit 1 }
          printf "ZeRO-1 against DDP: %d logged losses agree, worst relative difference %.3g (<= %s)\n", n, worst, tol }'
}

ddap() {  # the int8 merge wire: NCCL's alltoall (a group of sends and receives) and allgather of bytes
  train "$work/ddap" --set parallel.reducer=ddap --set parallel.merge=diloco --set parallel.merge_mode=overlapped \
    --set parallel.merge_every=5 --set parallel.merge_wire=int8
}

resume() {
  train "$work/split" --set training.stop_after=15
  train "$work/split"
  ends_as_ddp resume "15 + stop + resume + 15 = 30 straight"
}

kill_one_rank() {
  local dir=$work/kill
  local args=(mpiexec -n 2 "$hpctrain" train "$repo/jobs/quickstart.toml" "${common[@]}" --set training.steps=100000
    --set "job.run_dir=$dir" --set "parallel.collective_timeout_s=$kill_timeout")
  if [[ -n ${DRY:-} ]]; then
    run "${args[@]}" '&'
    echo "# once step 5 is logged: kill -9 <rank 1's pid, from $dir/logs/rank-1.log>; the job must end naming rank 1"
    return 0
  fi
  "${args[@]}" >"$work/kill-run.log" 2>&1 &
  local job=$!
  local waited=0
  until grep -Eq '"step": *([5-9]|[1-9][0-9])[,}]' "$dir/metrics.jsonl" 2>/dev/null; do
    sleep 0.5
    ((++waited < 600)) || { kill "$job"; echo "the run never reached step 5"; return 1; }
  done
  local victim
  victim=$(grep -o 'rank 1: pid [0-9]*' "$dir/logs/rank-1.log" | cut -d' ' -f4)
  local killed=$SECONDS
  kill -9 "$victim"
  local limit=$((kill_timeout + 30)) rc=0
  while kill -0 "$job" 2>/dev/null && ((SECONDS - killed < limit)); do sleep 0.2; done
  if kill -0 "$job" 2>/dev/null; then
    kill -9 "$job" || true
    echo "still running $limit s after rank 1 (pid $victim) was killed"
    return 1
  fi
  wait "$job" || rc=$?
  cat "$work/kill-run.log"
  ((rc != 0)) || { echo "the job exited 0 after losing rank 1"; return 1; }
  # hpctrain's roll call names rank 1, or mpiexec (Hydra) names its pid as it
  # tears the job down itself, before any timeout.
  local named='still missing: 1$|failed on rank [0-9]+ of 2.*missing: 1|PID '"$victim"' RUNNING AT'
  grep -Eq "$named" "$work/kill-run.log" || { echo "nothing names rank 1 (pid $victim)"; return 1; }
  echo "ended $((SECONDS - killed)) s after kill -9 of rank 1 (pid $victim), exit $rc:" \
    "$(grep -Eo "$named" "$work/kill-run.log" | head -1)"
}

if [[ $mode == cpu ]]; then
  record torch SKIP "--cpu: Debian's CPU LibTorch, no CUDA" 0
elif ((prebuilt)); then
  record torch SKIP "--prebuilt: the build found its LibTorch" 0
else
  step torch find_torch
fi
# Once a step fails, the later ones need what it did (the CUDA LibTorch, the
# build, the data): they are listed as not run rather than run to fail.
then_step() { # NAME FUNCTION
  if [[ $mode != dry && $blocked == 1 ]]; then
    record "$1" "NOT RUN" "an earlier step failed" 0
  else
    step "$@"
  fi
}
then_step build build_hpctrain
then_step data prepare_data
then_step doctor doctor
then_step ddp ddp
then_step rerun rerun
then_step zero zero
then_step ddap ddap
then_step resume resume
if [[ $mode != gpu || $ranks -ge 2 ]]; then
  then_step kill kill_one_rank
else
  record kill SKIP "one GPU: needs 2" 0
fi
[[ $mode == dry ]] && exit 0

echo
echo "gpu-smoke ($mode, $ranks rank(s), commit $(git -C "$repo" rev-parse --short=12 HEAD 2>/dev/null || echo unknown))"
printf '%-7s %-7s %5s  %s\n' step result s note
failed=0
for i in "${!names[@]}"; do
  printf '%-7s %-7s %5s  %s\n' "${names[$i]}" "${results[$i]}" "${seconds[$i]}" "${notes[$i]}"
  [[ ${results[$i]} == FAIL ]] && failed=1
done
for i in "${!names[@]}"; do
  [[ ${results[$i]} == FAIL ]] || continue
  echo
  echo "--- ${names[$i]}: the last lines of its output"
  tail -n 20 "$work/${names[$i]}.log"
done
exit "$failed"
