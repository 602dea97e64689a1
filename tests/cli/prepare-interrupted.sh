#!/usr/bin/env bash
# prepare-interrupted.sh HPCTRAIN EXPERIMENT: kills `hpctrain prepare` (SIGKILL)
# while it writes the data set, then checks that nothing that looks like a
# complete data set was left, and that the next run cleans up and completes.
set -euo pipefail
hpctrain=$1 experiment=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
dir=$work/data/quickstart
# A fifth of the corpus and a smaller vocabulary: the same code path in 4 s
# instead of 30 (what is tested is the interruption, not the tokenizer).
small=(--set "data.dir=$dir" --set 'data.glob="[a-c]*.py"' --set data.vocab_size=2048)

"$hpctrain" prepare "$experiment" "${small[@]}" >"$work/log" 2>&1 &
pid=$!
for _ in $(seq 1 600); do
  compgen -G "$dir.tmp-*" >/dev/null && break
  sleep 0.1
done
compgen -G "$dir.tmp-*" >/dev/null || { echo "FAIL: prepare never started writing"; cat "$work/log"; exit 1; }
kill -9 "$pid"
wait "$pid" 2>/dev/null || true
if [[ -e $dir/meta.json ]]; then
  echo "FAIL: a killed preparation left $dir/meta.json behind"
  exit 1
fi
echo "ok: killed during writing; left only $(cd "$work/data" && ls -d quickstart*)"

"$hpctrain" prepare "$experiment" "${small[@]}" >"$work/log2" 2>&1 || { cat "$work/log2"; exit 1; }
[[ -e $dir/meta.json ]] || { echo "FAIL: the rerun did not complete"; exit 1; }
if compgen -G "$dir.tmp-*" >/dev/null; then
  echo "FAIL: the rerun left the killed run's temporary directory"
  exit 1
fi
echo "ok: the rerun completed and removed the leftovers"
