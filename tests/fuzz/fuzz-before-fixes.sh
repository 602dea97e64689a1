#!/usr/bin/env bash
# Shows that each fuzz harness can find the bugs it exists for: builds today's
# harnesses (tests/fuzz/*_fuzz.cpp, unchanged) against the code as it was
# before the hostile-input fixes, runs each from its ordinary seeds only
# (tests/fuzz/corpus/NAME/seed-*, never the repro-*/found-* inputs that hold
# the bugs), and lists what libFuzzer found: every crash, timeout (over 5 s),
# out-of-memory and leak, grouped by kind and by the first frame in our code
# (tests/fuzz/findings.sh), each replayed once more through today's code (the
# GCC replay driver of the README's test command), which must take it.
#
#   tests/fuzz/fuzz-before-fixes.sh [--time SECONDS] [--commit C] [--work DIR] [--report-only] [HARNESS...]
#
# --report-only lists what an earlier run in the same work directory found.
# Default: every harness for 600 s, 2 at a time, commit 0bfe22f (the last one
# before the fixes: 5d0a94e config, 973c2eb ckpt_file, d90864d cluster,
# 5f3d2cf data, d55215e jobgen), in /tmp/hpctrain-fuzz-before.
# libFuzzer runs in fork mode and goes on after each finding, so one run
# collects every kind of bug it reaches, not only the first.
#
# The old code had the same entry points as today's, with two exceptions
# bridged by tests/fuzz/before-fixes/: template data came only from files and
# partials were a plain map (mustache_compat.h), and the checkpoint reader
# lived in ckpt/ beside LibTorch (include/ckpt_file/). clang 14 reads
# LibTorch's headers as C++17 only, so the checkpoint harness and the old
# checkpoint code are compiled as C++17 and linked with LibTorch; the rest as
# C++20, like the fuzz preset. toml++ is header-only and instrumented, with its
# assertions on, as in the fuzz preset.
set -euo pipefail
cd "$(dirname "$0")/../.."
repo=$PWD
fuzz_repo=$repo
# shellcheck source=tests/fuzz/findings.sh
source tests/fuzz/findings.sh
# shellcheck source=tests/fuzz/harnesses.sh
source tests/fuzz/harnesses.sh
seconds=600
commit=0bfe22f
work=/tmp/hpctrain-fuzz-before
jobs=2
report_only=0
parse_fuzz_options 2,27 "$@"
# The harnesses that existed at the first hostile-input fixes; later ones
# (run_record, shard_table, safetensors) test code that commit does not have.
if (($# == 0)) || [[ ${*: -1} == -* ]]; then
  harnesses=(hostlist experiment mustache mustache_shapes batch_script checkpoint checkpoint_edits token_data)
fi

tree=$work/tree
mkdir -p "$work"
if [[ ! -f $tree/.commit || $(cat "$tree/.commit") != "$(git rev-parse "$commit")" ]]; then
  rm -rf "$tree" && mkdir -p "$tree"
  git archive "$commit" | tar -x -C "$tree"
  git rev-parse "$commit" >"$tree/.commit"
fi

# The old code's sources each harness needs (paths under src/).
declare -A sources=(
  [hostlist]='cluster/hostlist.cpp'
  [experiment]='config/config_error.cpp config/section_reader.cpp config/experiment.cpp'
  [mustache]='jobgen/mustache.cpp jobgen/data_file.cpp'
  [batch_script]='jobgen/*.cpp config/*.cpp support/sha256.cpp'
  [checkpoint]='ckpt/fletcher32.cpp ckpt/hdf5_file.cpp ckpt/checkpoint.cpp ckpt/checkpoint_files.cpp ckpt/verify.cpp
                handles/hdf5.cpp handles/mpi.cpp model/*.cpp config/*.cpp'
  [token_data]='data/token_dataset.cpp data/token_shards.cpp'
)
sources[checkpoint_edits]=${sources[checkpoint]}
sources[mustache_shapes]=${sources[mustache]}

# shellcheck disable=SC2054  # the commas belong to -fsanitize's list
sanitizers=(-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer -g -O2)
# shellcheck disable=SC2207  # pkg-config's flags are meant to split into words
common=(-I"$tree/src" -I"$repo/tests/fuzz" -DTOML_HEADER_ONLY=1 -DHPCTRAIN_SOURCE_DIR="\"$tree\""
        -DHPCTRAIN_CORPUS_DIR="\"$repo/tests/fuzz/corpus\""
        -DHPCTRAIN_VERSION='"before-fixes"' -DHPCTRAIN_GIT_COMMIT="\"$commit\"" -DHPCTRAIN_PLUGIN_DIR='"/nonexistent"'
        $(pkg-config --cflags hdf5-serial 2>/dev/null || echo -I/usr/include/hdf5/serial) -I/usr/include/x86_64-linux-gnu/mpich)

build_one() {
  local h=$1 out=$work/$1/fuzz_$1 std=-std=c++20 extra=() libs=(-lfmt)
  local files=()
  for pattern in ${sources[$h]}; do
    for f in "$tree"/src/$pattern; do files+=("$f"); done
  done
  case $h in
    mustache | mustache_shapes) extra=(-include "$repo/tests/fuzz/before-fixes/mustache_compat.h") ;;
    batch_script) libs+=(-lcrypto) ;;
    checkpoint | checkpoint_edits)
      std=-std=c++17
      extra=(-I"$repo/tests/fuzz/before-fixes/include" -I/usr/include/torch/csrc/api/include)
      libs+=(-L/usr/lib/x86_64-linux-gnu/hdf5/serial -lhdf5 -ltorch -ltorch_cpu -lc10 -lmpich) ;;
  esac
  mkdir -p "$work/$h"
  echo "fuzz-before-fixes: building $h (${#files[@]} old source files)"
  clang++ "$std" -fsanitize=fuzzer "${sanitizers[@]}" "${common[@]}" "${extra[@]}" \
    "$repo/tests/fuzz/${h}_fuzz.cpp" "${files[@]}" "${libs[@]}" -o "$out" 2>"$work/$h/build.log" || {
    tail -n 30 "$work/$h/build.log" >&2
    echo "fuzz-before-fixes: $h did not build against $commit" >&2
    exit 2
  }
}

run_one() {
  local h=$1 dir=$work/$1
  rm -rf "$dir/corpus" "$dir/findings" && mkdir -p "$dir/corpus" "$dir/findings"
  cp "$repo/tests/fuzz/corpus/$h"/seed-* "$dir/corpus/"
  fuzz_fork "$dir/fuzz_$h" "$h" "$dir"
}

if ((!report_only)); then
  for h in "${harnesses[@]}"; do build_one "$h"; done
  run_harnesses run_one
fi

for h in "${harnesses[@]}"; do
  dir=$work/$h
  stats=$(grep -E '^#[0-9]+: cov: ' "$dir/log" | tail -1 || true)
  echo
  echo "== $h at $commit, $(grep -oE 'time: [0-9]+s' "$dir/log" | tail -1) from $(ls "$repo/tests/fuzz/corpus/$h"/seed-* | wc -l) seeds: ${stats:-no statistics}"
  # Today's code on each input: the GCC replay driver (ASan + UBSan) of the
  # README's test command, when it has been built.
  replay=$repo/build/tests/fuzz_replay_$h
  [[ -x $replay ]] || replay=
  report_findings "$dir/fuzz_$h" "$dir" "$tree" "${malloc_mb[$h]}" "$replay"
done
