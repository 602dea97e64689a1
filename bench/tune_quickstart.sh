#!/usr/bin/env bash
# Tunes the quickstart on its validation split: runs jobs/quickstart.toml on
# 2 ranks once per candidate (a line of --set overrides), one after the
# other, and prints a table of the final whole-split validation loss and
# perplexity, tokens/s and wall time per candidate, best first. The test split
# is never read (eval.test = false): the quickstart's own run reports it, once,
# for the configuration chosen here.
#
#   bench/tune_quickstart.sh CANDIDATES_FILE [--out DIR] [--rerun]
#
# CANDIDATES_FILE: one candidate per line, "name: --set a.b=1 --set c.d=2";
# an empty override list is the quickstart as it is. About 7 minutes per
# candidate on 2 cores. A candidate already run in DIR is not run again
# (--rerun: every one is), so candidates can be added to the file later.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
build=${HPCT_BUILD:-$repo/build}
candidates=${1:?usage: ${0##*/} CANDIDATES_FILE [--out DIR] [--rerun]}
shift
out=/tmp/hpctrain-tune
rerun=false
while (($#)); do
  case $1 in
    --out) out=${2:?}; shift 2 ;;
    --rerun) rerun=true; shift ;;
    *) echo "usage: ${0##*/} CANDIDATES_FILE [--out DIR] [--rerun]" >&2; exit 2 ;;
  esac
done
mkdir -p "$out"
"$build/hpctrain" prepare "$repo/jobs/quickstart.toml" --set "data.dir=$out/data" >"$out/prepare.log" 2>&1 ||
  { cat "$out/prepare.log"; exit 1; }

while IFS= read -r line; do
  [[ -z $line || $line == \#* ]] && continue
  name=${line%%:*}
  read -r -a overrides <<<"${line#*:}"
  run=$out/$name
  if ! $rerun && [[ -f $run/wall_s ]]; then
    echo "$name: run earlier in $run"
    continue
  fi
  rm -rf "$run"
  SECONDS=0
  # mpiexec reads its standard input, which is the candidates file here.
  mpiexec -n 2 "$build/hpctrain" "$repo/jobs/quickstart.toml" --set "data.dir=$out/data" --set "job.run_dir=$run" \
    --set eval.test=false --set eval.sample_tokens=0 --set checkpoint.keep_best=false "${overrides[@]}" \
    </dev/null >"$out/$name.log" 2>&1 || { tail -5 "$out/$name.log"; echo "$name: failed" >&2; continue; }
  echo "$name: ${SECONDS} s: $(grep '^validation loss' "$out/$name.log")"
  echo "$SECONDS" >"$run/wall_s"
done <"$candidates"

/usr/bin/python3 - "$out" "$candidates" <<'PY'
import json, math, os, sys
out, candidates = sys.argv[1], sys.argv[2]
rows = []
for line in open(candidates):
    line = line.strip()
    if not line or line.startswith("#"):
        continue
    name, overrides = line.split(":", 1)
    path = os.path.join(out, name, "metrics.jsonl")
    if not os.path.exists(path):
        continue
    summary = [json.loads(l) for l in open(path) if '"summary"' in l][-1]
    wall = open(os.path.join(out, name, "wall_s")).read().strip()
    rows.append((summary["eval_loss"], name, overrides.strip() or "(the quickstart as it is)", summary["tokens_per_s"],
                 int(summary["eval_tokens"]), wall))
print("| candidate | overrides | validation loss | perplexity | tokens/s | wall s |")
print("|---|---|---|---|---|---|")
for loss, name, overrides, speed, tokens, wall in sorted(rows):
    print(f"| {name} | `{overrides}` | {loss:.4f} | {math.exp(loss):.2f} | {speed:.0f} | {wall} |")
print(f"\nValidation: the whole split, {rows[0][4] if rows else 0} tokens; the test split was not read.")
PY
