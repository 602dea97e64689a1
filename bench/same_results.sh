#!/usr/bin/env bash
# bench/same_results.sh OLD_BUILD NEW_BUILD: does a change that should change
# nothing change nothing? OLD_BUILD and NEW_BUILD are build directories with
# hpctrain and jobgen (for example the commit before a restructuring, built in
# its own directory, and this one). Both train the same short runs from the
# same seed and data on 2 ranks, and each pair must end with the same weights
# hash and write the same losses (every train, eval and test record, timings
# left out); both render every experiment in jobs/ and tests/ with every
# cluster profile in env/clusters/, plain, --explain and --prepare, and each
# pair must print the same bytes and exit the same way. Prints one line per
# case and exits 1 if any differs.
#
#   git worktree add /tmp/old HEAD~1 && cmake -S /tmp/old -B /tmp/old/build -G Ninja \
#     -DCMAKE_BUILD_TYPE=RelWithDebInfo && cmake --build /tmp/old/build --target hpctrain jobgen
#   bench/same_results.sh /tmp/old/build build
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
old=$(cd "$1" && pwd) new=$(cd "$2" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failed=0

report() {  # NAME OLD-TEXT NEW-TEXT
  if [[ $2 == "$3" ]]; then
    printf 'same    %s\n' "$1"
  else
    printf 'DIFFERS %s\n  old: %s\n  new: %s\n' "$1" "${2:0:300}" "${3:0:300}"
    failed=1
  fi
}

"$new/hpctrain" prepare "$repo/jobs/quickstart.toml" --set "data.dir=$work/data" >"$work/prepare.log" 2>&1 ||
  { cat "$work/prepare.log"; exit 1; }

# The losses a run wrote, without what depends on the clock.
losses() {
  python3 - "$1/metrics.jsonl" <<'PY'
import json, sys
drop = {"tokens_per_s", "mfu", "eta_s", "train_s", "wall_max_s", "time"}
for line in open(sys.argv[1]):
    r = json.loads(line)
    print(json.dumps({k: v for k, v in sorted(r.items()) if k not in drop}))
PY
}

train() {  # BUILD RUN-NAME SETTINGS... -> prints "hash" then the losses
  local build=$1 name=$2
  shift 2
  local args=(--set "data.dir=$work/data" --set "job.run_dir=$work/$name")
  for setting in "$@"; do args+=(--set "$setting"); done
  mpiexec -n 2 "$build/hpctrain" "$repo/jobs/quickstart.toml" "${args[@]}" >>"$work/$name.log" 2>&1 ||
    [[ $? == 75 ]] || { tail -20 "$work/$name.log" >&2; return 1; }
}

case_run() {  # NAME SETTINGS...: both builds train; with stop_after, each resumes to the end
  local name=$1
  shift
  local which build
  for which in old new; do
    build=$old
    [[ $which == new ]] && build=$new
    train "$build" "$name-$which" "$@"
    if grep -q "writing a checkpoint and stopping" "$work/$name-$which.log"; then
      local resumed=()
      for setting in "$@"; do [[ $setting == training.stop_after=* ]] || resumed+=("$setting"); done
      train "$build" "$name-$which" "${resumed[@]}"
      grep -q "resumed from" "$work/$name-$which.log" || { echo "$name-$which did not resume" >&2; return 1; }
    fi
  done
  local hash_old hash_new
  hash_old=$(grep -o 'final weights sha256: [0-9a-f]*' "$work/$name-old.log" | tail -1)
  hash_new=$(grep -o 'final weights sha256: [0-9a-f]*' "$work/$name-new.log" | tail -1)
  [[ -n $hash_old ]] || { echo "$name: no final weights hash" >&2; return 1; }
  report "train $name: $hash_new" "$hash_old" "$hash_new"
  report "train $name: metrics.jsonl losses" "$(losses "$work/$name-old")" "$(losses "$work/$name-new")"
}

short=(training.steps=60 eval.interval=30 eval.samples=32 checkpoint.interval=20 eval.sample_tokens=16
  logging.interval=5)
case_run quickstart training.steps=300 eval.interval=150 eval.samples=64 checkpoint.interval=100 \
  eval.sample_tokens=32
case_run ddp-bf16 "${short[@]}" training.precision=bf16
case_run zero1 "${short[@]}" parallel.zero=1
case_run zero1-bf16 "${short[@]}" parallel.zero=1 training.precision=bf16
case_run ddp-no-overlap "${short[@]}" parallel.overlap=false
case_run ddap-average "${short[@]}" parallel.reducer=ddap parallel.merge_every=8
case_run ddap-ties-overlapped "${short[@]}" parallel.reducer=ddap parallel.merge=ties \
  parallel.merge_mode=overlapped parallel.merge_every=8
case_run ddap-diloco-moments "${short[@]}" parallel.reducer=ddap parallel.merge=diloco parallel.merge_every=8 \
  parallel.merge_moments=true
case_run ema "${short[@]}" training.ema_decay=0.9
case_run stop-and-resume "${short[@]}" training.stop_after=30
case_run zero1-stop-and-resume "${short[@]}" parallel.zero=1 training.stop_after=30 checkpoint.sharded=true
case_run ddap-stop-and-resume "${short[@]}" parallel.reducer=ddap parallel.merge_every=8 training.stop_after=28

# jobgen: every experiment, every profile, three ways; the two builds' paths
# and commits (the script's "Rendered by" line) named alike, so that only
# what the code renders is compared.
render() {  # BUILD ARGS... -> stdout, stderr and exit status, build path masked
  local build=$1 status=0
  shift
  (cd "$repo" && "$build/jobgen" script "$@") >"$work/out" 2>&1 || status=$?
  sed -e "s|$build|BUILD|g" -e 's|^\(# Rendered by jobgen [^ ]*\) (git [^)]*)|\1 (git COMMIT)|' "$work/out"
  echo "exit $status"
}
mapfile -t experiments < <(cd "$repo" && find jobs tests -name '*.toml' -not -path '*/clusters/*' | sort)
mapfile -t profiles < <(cd "$repo/env/clusters" && ls -- *.toml | sed 's/\.toml$//')
same=0
for experiment in "${experiments[@]}"; do
  for profile in "${profiles[@]}"; do
    for mode in "" --explain --prepare; do
      args=("$experiment" --cluster "$profile")
      [[ -n $mode ]] && args+=("$mode")
      a=$(render "$old" "${args[@]}") b=$(render "$new" "${args[@]}")
      if [[ $a == "$b" ]]; then
        ((++same))
      else
        report "jobgen ${args[*]}" "$a" "$b"
      fi
    done
  done
done
echo "jobgen: $same of $((${#experiments[@]} * ${#profiles[@]} * 3)) renderings the same (${#experiments[@]} experiments x ${#profiles[@]} profiles x plain, --explain, --prepare)"
exit "$failed"
