#!/usr/bin/env bash
# Fuzzes hpctrain's hostile-input readers with libFuzzer (clang, ASan, UBSan):
# builds the fuzz preset, then runs each harness of tests/fuzz for the given
# time on a copy of its seed corpus (the repository's corpus is never
# changed), two at a time on 2 cores, and prints one table: executions,
# executions per second, what libFuzzer stopped on (crash, leak, timeout over
# 5 s, out of memory) and the coverage of the functions each harness exists
# for. Findings land in the work directory with libFuzzer's reproducer file.
#
#   bench/fuzz.sh [--time SECONDS] [--jobs N] [--work DIR] [HARNESS...]
#
# Default: every harness for 600 s, 2 at a time, in /tmp/hpctrain-fuzz.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=600
jobs=2
work=/tmp/hpctrain-fuzz
harnesses=()
while (($#)); do
  case $1 in
    --time) seconds=$2; shift 2 ;;
    --jobs) jobs=$2; shift 2 ;;
    --work) work=$2; shift 2 ;;
    -h|--help) sed -n '2,12p' "$0"; exit 0 ;;
    *) harnesses+=("$1"); shift ;;
  esac
done
((${#harnesses[@]})) || harnesses=(hostlist experiment mustache batch_script checkpoint token_data)

# Inputs as large as each reader meets: a checkpoint seed is ~600 kB.
declare -A max_len=([hostlist]=4096 [experiment]=65536 [mustache]=65536 [batch_script]=4096
                    [checkpoint]=700000 [token_data]=65536)
# Memory a single input may take: an expanded hostlist of the largest size
# SLURM allows is tens of MB, so more means an unbounded expansion.
declare -A malloc_mb=([hostlist]=256 [experiment]=2048 [mustache]=2048 [batch_script]=2048 [checkpoint]=2048
                      [token_data]=2048)
# The functions each harness is there to reach (coverage is reported for these).
declare -A targets=(
  [hostlist]='expand_hostlist|compress_hostlist'
  [experiment]='load_experiment_text|apply_override|SectionReader'
  [mustache]='render_mustache|Parser::parse|Renderer::render|parse_data'
  [batch_script]='shell_expanding|shell_word|sbatch_value|batch_script_data|plan_batch_job'
  [checkpoint]='verify_checkpoint|Hdf5Reader|read_checkpoint_info|check_structure|manifest'
  [token_data]='TokenDataset|read_meta'
)

cmake --preset fuzz >/dev/null
cmake --build --preset fuzz
mkdir -p "$work"

run_one() {
  local h=$1 dir=$work/$1
  rm -rf "$dir" && mkdir -p "$dir/corpus" "$dir/findings"
  cp -r "tests/fuzz/corpus/$h/." "$dir/corpus/"
  local dict=()
  [[ -f tests/fuzz/dict/$h.dict ]] && dict=(-dict="tests/fuzz/dict/$h.dict")
  # Leaks count as findings; a process that reports one stops like on a crash.
  ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1 LSAN_OPTIONS="suppressions=$PWD/tests/fuzz/lsan.supp" \
    UBSAN_OPTIONS=print_stacktrace=1 \
    "build-fuzz/fuzz/fuzz_$h" "$dir/corpus" "${dict[@]}" -max_total_time="$seconds" -timeout=5 \
    -rss_limit_mb=2048 -malloc_limit_mb="${malloc_mb[$h]}" -max_len="${max_len[$h]}" -print_final_stats=1 -print_coverage=1 \
    -artifact_prefix="$dir/findings/" >"$dir/log" 2>&1 || true
}

running=0
for h in "${harnesses[@]}"; do
  [[ -x build-fuzz/fuzz/fuzz_$h ]] || { echo "fuzz: no harness $h" >&2; exit 2; }
  echo "fuzz: $h for ${seconds} s ($work/$h/log)"
  run_one "$h" &
  running=$((running + 1))
  if ((running >= jobs)); then
    wait -n
    running=$((running - 1))
  fi
done
wait

printf '\n%-13s %12s %9s %-34s %s\n' harness executions exec/s stopped-on "coverage of its functions (edges)"
status=0
for h in "${harnesses[@]}"; do
  log=$work/$h/log
  runs=$(grep -oP 'stat::number_of_executed_units:\s*\K[0-9]+' "$log" | tail -1 || true)
  secs=$(grep -oP 'stat::.*' "$log" >/dev/null && grep -oP 'Done [0-9]+ runs in \K[0-9]+' "$log" | tail -1 || true)
  [[ -z $secs || $secs == 0 ]] && secs=$seconds
  finding=$(ls "$work/$h/findings" 2>/dev/null | head -1)
  if [[ -n $finding ]]; then
    stopped="$(grep -oE 'ERROR: (AddressSanitizer|LeakSanitizer|libFuzzer): [a-z-]+|runtime error' "$log" | head -1): $finding"
    status=1
  else
    stopped="time (no finding)"
  fi
  covered=$(grep -E "^(UN)?COVERED_FUNC: .*(${targets[$h]})" "$log" |
    awk '{split($5, e, "/"); c += e[1]; t += e[2]} END {if (t) printf "%d/%d edges in %d functions", c, t, NR; else print "not reached"}')
  printf '%-13s %12s %9s %-34s %s\n' "$h" "${runs:-?}" "$(( ${runs:-0} / secs ))" "$stopped" "$covered"
done
exit $status
