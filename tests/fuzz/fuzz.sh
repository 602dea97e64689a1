#!/usr/bin/env bash
# Fuzzes hpctrain's hostile-input readers with libFuzzer (clang, ASan, UBSan):
# builds the fuzz preset, then runs each harness of tests/fuzz for the given
# time on a copy of its seed corpus (the repository's corpus is never
# changed), two at a time on 2 cores, in fork mode: a crash inside a library
# we do not own (libhdf5 1.10.8 has several, docs/security.md) is kept and the
# run goes on, so every harness runs its whole time. Prints one table
# (executions, executions per second, the coverage of the functions each
# harness exists for), then every finding grouped by cause and owner
# (tests/fuzz/findings.sh). Exits 1 when any finding is ours (anything but a
# crash inside libhdf5): a crash, a leak, a timeout over 5 s or an out-of-memory.
#
#   tests/fuzz/fuzz.sh [--time SECONDS] [--jobs N] [--work DIR] [--report-only] [HARNESS...]
#
# Default: every harness for 600 s, 2 at a time, in /tmp/hpctrain-fuzz.
set -euo pipefail
cd "$(dirname "$0")/../.."
fuzz_repo=$PWD
# shellcheck source=tests/fuzz/findings.sh
source tests/fuzz/findings.sh
# shellcheck source=tests/fuzz/harnesses.sh
source tests/fuzz/harnesses.sh
seconds=600
jobs=2
work=/tmp/hpctrain-fuzz
report_only=0
parse_fuzz_options 2,15 "$@"

# The functions each harness is there to reach (coverage is reported for these).
declare -A targets=(
  [hostlist]='expand_hostlist|compress_hostlist'
  [experiment]='load_experiment_text|apply_override|SectionReader'
  [mustache]='render_mustache|Parser::parse|Renderer::render|parse_data'
  [mustache_shapes]='render_mustache|Parser::parse|Renderer::render|parse_data'
  [batch_script]='shell_expanding|shell_word|sbatch_value|batch_script_data|plan_batch_job'
  [checkpoint]='verify_checkpoint|Hdf5Reader|read_checkpoint_info|check_structure|manifest'
  [checkpoint_edits]='verify_checkpoint|Hdf5Reader|read_checkpoint_info|check_structure|manifest'
  [token_data]='TokenDataset|read_meta'
  [run_record]='read_run|parse_event|read_progress|printable'
  [shard_table]='parse_shard_table|checkpoint_step'
  [safetensors]='SafetensorsFile|HfWeights|parse_entry|half_to_float'
  [tokenizer_model]='refuse_precompiled_charsmap|WireReader|Tokenizer::from_model'
)

run_one() {
  local h=$1 dir=$work/$1
  rm -rf "$dir" && mkdir -p "$dir/corpus" "$dir/findings"
  cp -r "tests/fuzz/corpus/$h/." "$dir/corpus/"
  fuzz_fork "$fuzz_repo/build-fuzz/fuzz/fuzz_$h" "$h" "$dir"
  # Fork mode prints no coverage per function: one pass over the grown corpus does.
  (cd "$dir" && ASAN_OPTIONS=detect_leaks=0:allocator_may_return_null=1 \
    "$fuzz_repo/build-fuzz/fuzz/fuzz_$h" corpus -runs=0 -timeout=30 -rss_limit_mb=2048 \
      -malloc_limit_mb="${malloc_mb[$h]}" -print_coverage=1 >coverage.log 2>&1) || true
}

if ((!report_only)); then
  cmake --preset fuzz >/dev/null
  cmake --build --preset fuzz
  mkdir -p "$work"
  for h in "${harnesses[@]}"; do
    [[ -x build-fuzz/fuzz/fuzz_$h ]] || { echo "fuzz: no harness $h" >&2; exit 2; }
  done
  run_harnesses run_one
fi

printf '\n%-13s %12s %9s %10s %s\n' harness executions exec/s findings "coverage of its functions (edges)"
for h in "${harnesses[@]}"; do
  dir=$work/$h
  last=$(grep -E '^#[0-9]+: cov: ' "$dir/log" | tail -1 || true)
  runs=$(grep -oP '^#\K[0-9]+' <<<"$last" || true)
  secs=$(grep -oP '\btime: \K[0-9]+' <<<"$last" || true)
  [[ -z $secs || $secs == 0 ]] && secs=$seconds
  found=$(find "$dir/findings" -type f | wc -l)
  covered=$(grep -E "^(UN)?COVERED_FUNC: .*(${targets[$h]})" "$dir/coverage.log" |
    awk '{split($5, e, "/"); c += e[1]; t += e[2]} END {if (t) printf "%d/%d edges in %d functions", c, t, NR; else print "not reached"}')
  printf '%-13s %12s %9s %10s %s\n' "$h" "${runs:-?}" "$(( ${runs:-0} / secs ))" "$found" "$covered"
done

status=0
for h in "${harnesses[@]}"; do
  echo
  echo "== $h: findings"
  listing=$(report_findings "$fuzz_repo/build-fuzz/fuzz/fuzz_$h" "$work/$h" "$fuzz_repo" "${malloc_mb[$h]}")
  echo "$listing"
  if grep -qE '^ +in our code' <<<"$listing"; then status=1; fi
done
exit $status
