#!/usr/bin/env bash
# bench/scale.sh [--part 1|2] [ROUNDS] [STEPS]: what ZeRO-1 saves, on the GPT-2-small shape
# (12 layers, d_model 768, 12 heads; the quickstart's 8192-token vocabulary:
# 91.5M parameters), global batch 8 x 256 tokens, fp32, on this machine.
#  1. Memory and checkpoints: DDP and DDP + ZeRO-1 at 1, 2 and 4 ranks, 2 steps
#     and the final checkpoint each. Per rank: AdamW state (as the reducer
#     reports it), peak resident memory (VmHWM from /proc/self/status, which
#     hpctrain logs over ranks: the largest is rank 0, which also takes the
#     checkpoint's snapshot; the smallest is a rank that trains only), and the
#     checkpoint's write time and training-blocked time (rank 0 gathers and
#     writes; sharded writes do not exist yet).
#  2. Speed: DDP against ZeRO-1 at 2 ranks, alternated ROUNDS times (default 3;
#     which goes first alternates), STEPS steps each (default 3), no
#     checkpoints: training tokens/s as hpctrain prints it, the ratio
#     ZeRO-1/DDP per round and its median (target >= 0.95). 4 ranks
#     oversubscribe 2 cores, so they have no speed figure.
#  3. Checkpoint writes at 4 ranks, DDP and DDAP: one file gathered to rank 0
#     against sharded (checkpoint.sharded: every rank writes its own shard,
#     rank 0 an index): the largest and smallest peak resident memory over the
#     ranks and the rank that had the largest, and the write time hpctrain
#     logs (one file: rank 0's background write; sharded: the slowest shard,
#     the agreement and the index, in the foreground).
# --part runs one part only. Writes bench/results/scale/scale-COMMIT.txt (a part
# run alone: scale-COMMIT-partN.txt) and, with gnuplot, scale-COMMIT.png.
# Data: $DATA, or the quickstart's data set prepared into a temporary directory.
# LAYERS=N (default 12) changes the depth, for a shape whose one-file DDAP
# checkpoint fits this machine's memory at 4 ranks; the results file then
# ends in -layersN.
# Takes ~20 minutes on 2 cores (a GPT-2-small step is ~10 s here).
set -euo pipefail
shopt -s inherit_errexit
repo=$(cd "$(dirname "$0")/.." && pwd)
parts=(1 2 3)
if [[ ${1:-} == --part ]]; then
  parts=("${2:?--part needs 1, 2 or 3}")
  shift 2
fi
rounds=${1:-3} steps=${2:-3}
hpctrain=${HPCTRAIN:-$repo/build/hpctrain}
commit=$(git -C "$repo" rev-parse --short=12 HEAD)
results=$repo/bench/results
mkdir -p "$results"
out=$results/scale/scale-$commit.txt
((${#parts[@]} == 3)) || out=$results/scale/scale-$commit-part${parts[0]}.txt
layers=${LAYERS:-12}
[[ $layers =~ ^[1-9][0-9]?$ ]] || { echo "scale.sh: LAYERS must be 1-99" >&2; exit 1; }
((layers == 12)) || out=${out%.txt}-layers$layers.txt
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
data=${DATA:-}
if [[ -z $data ]]; then
  data=$work/data
  "$hpctrain" prepare "$repo/jobs/quickstart.toml" --set "data.dir=$data" >"$work/prepare.log" 2>&1 ||
    { cat "$work/prepare.log"; exit 1; }
fi
common=(--set "data.dir=$data" --set "model.n_layer=$layers" --set model.d_model=768 --set model.n_head=12
  --set training.batch_size=8 --set training.micro_batch_size=2 --set training.precision=fp32
  --set eval.interval=0 --set eval.final=sample --set eval.samples=8 --set eval.sample_tokens=0 --set eval.test=false
  --set logging.interval=1)
run() {  # RANKS ZERO NAME [--set ...] -> the log's path
  local ranks=$1 zero=$2 name=$3
  shift 3
  mpiexec -n "$ranks" "$hpctrain" train "$repo/jobs/quickstart.toml" "${common[@]}" --set "parallel.zero=$zero" \
    --set "job.run_dir=$work/$name" "$@" >"$work/$name.log" 2>&1 || { cat "$work/$name.log" >&2; exit 1; }
  echo "$work/$name.log"
}
field() { grep -oE "$1" "$2" | tail -1 | grep -oE '[0-9]+(\.[0-9]+)?' | sed -n "${3:-1}p"; }

shape="GPT-2-small shape"
((layers == 12)) || shape="GPT-2-small shape at $layers layers"
echo "bench/scale.sh at $commit, $(nproc) cores: $shape, batch 8 x 256 tokens, fp32" | tee "$out"
memory_part() {
  {
    echo
    echo "1. memory and checkpoints (2 steps, then the final checkpoint)"
    printf '%-6s %-7s %14s %16s %16s %12s %10s\n' ranks reducer "AdamW MiB/rank" "peak MiB rank 0" "peak MiB other" \
      "ckpt write s" "blocked ms"
  } | tee -a "$out"
  for ranks in 1 2 4; do
    for zero in 0 1; do
      ((ranks == 1 && zero == 1)) && continue  # one rank: ZeRO-1 changes nothing
      log=$(run "$ranks" "$zero" "mem-$ranks-$zero" --set training.steps=2 --set checkpoint.interval=2)
      reducer=ddp
      ((zero)) && reducer=zero1
      if ((ranks == 1)); then  # the local reducer reports no state: two fp32 moments per parameter
        params=$(field '[0-9.]+M parameters' "$log")
        adam=$(python3 -c "print(f'{$params * 1e6 * 8 / 2**20:.1f}')")
      elif ((zero)); then
        adam=$(field '\([0-9.]+ MiB on this one\)' "$log")
      else
        adam=$(field 'AdamW state [0-9.]+ MiB' "$log")
      fi
      peak_max=$(field 'VmHWM\): max [0-9]+ MiB' "$log")
      peak_min=$(field 'min [0-9]+ MiB \(rank' "$log")
      ((ranks == 1)) && peak_min=-
      write_s=$(field 'written: [0-9.]+ MB in [0-9.]+ s' "$log" 2)
      blocked=$(field 'training blocked [0-9.]+ ms' "${log%.log}/logs/rank-0.log")  # a detail: the rank's log file
      printf '%-6s %-7s %14s %16s %16s %12s %10s\n' "$ranks" "$reducer" "$adam" "$peak_max" "$peak_min" "$write_s" \
        "$blocked" | tee -a "$out"
      rows+=("$ranks $reducer $adam $peak_max ${peak_min/-/$peak_max}")
    done
  done
}

speed_part() {
  {
    echo
    echo "2. speed at 2 ranks, $steps steps, $rounds alternating rounds: training tokens/s"
  } | tee -a "$out"
  ratios=()
  for round in $(seq "$rounds"); do
    order=(0 1)
    ((round % 2 == 0)) && order=(1 0)
    declare -A rate=()
    for zero in "${order[@]}"; do
      log=$(run 2 "$zero" "speed-$round-$zero" --set "training.steps=$steps" --set checkpoint.interval=0)
      rate[$zero]=$(field '[0-9]+ tokens/s over' "$log")
    done
    ratio=$(python3 -c "print(f'{${rate[1]} / ${rate[0]}:.3f}')")
    ratios+=("$ratio")
    echo "round $round: DDP ${rate[0]} tok/s, ZeRO-1 ${rate[1]} tok/s, ZeRO-1/DDP $ratio" | tee -a "$out"
  done
  python3 -c "import statistics, sys; print(f'median ZeRO-1/DDP {statistics.median(map(float, sys.argv[1:])):.3f} (target >= 0.95)')" \
    "${ratios[@]}" | tee -a "$out"
}

sharded_part() {
  {
    echo
    echo "3. checkpoint writes at 4 ranks (2 steps, then the final checkpoint): one file against sharded"
    printf '%-8s %-9s %18s %16s %12s\n' reducer layout "peak MiB max (rank)" "peak MiB min" "ckpt write s"
  } | tee -a "$out"
  for reducer in ddp ddap; do
    for sharded in false true; do
      layout=one-file
      [[ $sharded == true ]] && layout=sharded
      # A run that does not fit (the kernel's OOM killer) is a result too.
      if ! log=$(run 4 0 "ckpt-$reducer-$sharded" --set training.steps=2 --set checkpoint.interval=2 \
        --set "parallel.reducer=$reducer" --set parallel.merge_every=2 --set "checkpoint.sharded=$sharded" 2>/dev/null)
      then
        printf '%-8s %-9s %s\n' "$reducer" "$layout" "failed: $(grep -o 'EXIT CODE: [0-9]*' \
          "$work/ckpt-$reducer-$sharded.log" | head -1) (9: killed, see dmesg for the OOM killer)" | tee -a "$out"
        continue
      fi
      peak_max=$(grep -oE 'VmHWM\): max [0-9]+ MiB \(rank [0-9]+\)' "$log" | tail -1 | grep -oE '[0-9]+' | paste -sd' ')
      peak_min=$(field 'min [0-9]+ MiB \(rank' "$log")
      write_s=$(field 'written: [0-9.]+ MB in [0-9.]+ s' "$log" 2)
      printf '%-8s %-9s %18s %16s %12s\n' "$reducer" "$layout" "${peak_max% *} (${peak_max#* })" "$peak_min" \
        "$write_s" | tee -a "$out"
    done
  done
}

rows=()
for part in "${parts[@]}"; do
  case $part in
    1) memory_part ;;
    2) speed_part ;;
    3) sharded_part ;;
    *) echo "bench/scale.sh: --part is 1, 2 or 3" >&2; exit 2 ;;
  esac
done

if ((${#rows[@]})) && command -v gnuplot >/dev/null; then
  printf '%s\n' "${rows[@]}" >"$work/rows.dat"
  gnuplot <<GP
set terminal pngcairo size 900,500
set output "$results/scale/scale-$commit.png"
set title "GPT-2-small shape, fp32: memory per rank (bench/scale.sh at $commit)"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set ylabel "MiB"
set key below
set xtics rotate by 0
plot "$work/rows.dat" using 3:xtic(sprintf("%d ranks, %s", \$1, strcol(2))) title "AdamW state", \
     "" using 5 title "peak resident, a training rank", \
     "" using 4 title "peak resident, rank 0 (writes checkpoints)"
GP
  echo "plot: $results/scale/scale-$commit.png" | tee -a "$out"
fi
echo "results: $out"
