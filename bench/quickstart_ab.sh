#!/usr/bin/env bash
# bench/quickstart_ab.sh OLD NEW [ROUNDS] [STEPS]: two builds of hpctrain (for
# example the commit before a change, built in its own directory, and this
# one) training the quickstart on 2 ranks (mpiexec -n 2), alternated ROUNDS
# times (default 3; which goes first alternates), STEPS steps each (default
# 60), no periodic evaluation, no checkpoints, from the same seed and data.
# A run's figure is the tokens/s hpctrain prints for its training time
# (evaluations excluded); the ratio NEW/OLD is the median of the rounds' own
# ratios. Both runs of a round must end with the same weights hash.
#
#   git worktree add /tmp/old HEAD~1 && cmake -S /tmp/old -B /tmp/old/build -G Ninja \
#     -DCMAKE_BUILD_TYPE=RelWithDebInfo && cmake --build /tmp/old/build --target hpctrain
#   bench/quickstart_ab.sh /tmp/old/build/hpctrain build/hpctrain
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
old=$1 new=$2 rounds=${3:-3} steps=${4:-60}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$new" prepare "$repo/jobs/quickstart.toml" --set "data.dir=$work/data" >"$work/prepare.log" 2>&1 ||
  { cat "$work/prepare.log"; exit 1; }

run() {  # BINARY NAME -> "tokens/s hash"
  local log=$work/$2.log
  mpiexec -n 2 "$1" "$repo/jobs/quickstart.toml" --set "data.dir=$work/data" --set "job.run_dir=$work/$2" \
    --set "training.steps=$steps" --set eval.interval=0 --set checkpoint.interval=0 --set eval.sample_tokens=0 \
    >"$log" 2>&1 || { cat "$log" >&2; exit 1; }
  local rate hash
  rate=$(grep -o '[0-9]* tokens/s over' "$log" | tail -1 | cut -d' ' -f1)
  hash=$(grep -o 'final weights sha256: [0-9a-f]*' "$log" | tail -1 | cut -d' ' -f4)
  echo "$rate $hash"
}

echo "OLD $old"
echo "NEW $new"
echo "quickstart, 2 ranks, $steps steps, $rounds alternating rounds: training tokens/s"
ratios=()
for round in $(seq "$rounds"); do
  order=(old new)
  ((round % 2 == 0)) && order=(new old)
  declare -A rate=() hash=()
  for which in "${order[@]}"; do
    binary=$old
    [[ $which == new ]] && binary=$new
    read -r rate[$which] hash[$which] < <(run "$binary" "$which-$round")
  done
  [[ ${hash[old]} == "${hash[new]}" ]] || echo "round $round: the weights differ: OLD ${hash[old]}, NEW ${hash[new]}"
  ratio=$(python3 -c "print(f'{${rate[new]} / ${rate[old]}:.3f}')")
  ratios+=("$ratio")
  echo "round $round: OLD ${rate[old]} tok/s, NEW ${rate[new]} tok/s, NEW/OLD $ratio"
done
python3 -c "import statistics, sys; print(f'median NEW/OLD {statistics.median(map(float, sys.argv[1:])):.3f}')" "${ratios[@]}"
