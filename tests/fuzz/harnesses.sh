# shellcheck shell=bash disable=SC2034,SC2154  # sets variables its callers read; they set fuzz_repo
# Sourced by tests/fuzz/fuzz.sh and tests/fuzz/fuzz-before-fixes.sh: the harnesses of
# tests/fuzz and the limits each runs under, the same for today's code and
# for the code before the hostile-input fixes, so the two runs compare.

all_harnesses=(hostlist experiment mustache mustache_shapes batch_script checkpoint checkpoint_edits token_data
               run_record shard_table safetensors tokenizer_model)
# Inputs as large as each reader meets: a checkpoint seed is ~600 kB; the
# Mustache harness's token mutation adds up to 512 KiB at once.
declare -A max_len=([hostlist]=4096 [experiment]=65536 [mustache]=600000 [batch_script]=4096
                    [checkpoint]=700000 [checkpoint_edits]=4096 [mustache_shapes]=4096
                    [token_data]=65536 [run_record]=65536 [shard_table]=65536 [safetensors]=65536
                    [tokenizer_model]=131072)
# Memory a single input may take: an expanded hostlist of the largest size
# SLURM allows is tens of MB, so more means an unbounded expansion.
declare -A malloc_mb=([hostlist]=256 [experiment]=2048 [mustache]=2048 [batch_script]=2048 [checkpoint]=2048
                      [checkpoint_edits]=2048 [mustache_shapes]=2048 [token_data]=2048 [run_record]=2048
                      [shard_table]=2048 [safetensors]=2048 [tokenizer_model]=2048)

# libFuzzer's own options per harness. By default libFuzzer mutates only
# a short prefix of each input at first and raises that length slowly: the
# checkpoint harness would fuzz truncated files (a seed is ~600 kB) and the
# Mustache harness's token mutation would have no room. These two mutate
# whole inputs, up to max_len, from the start.
declare -A options=([mustache]=-len_control=0 [checkpoint]=-len_control=0)

# parse_fuzz_options HELP_LINES ARG... sets seconds, jobs, work, report_only
# and harnesses (every harness unless some are named) from the options both
# scripts take, and commit from --commit where the caller has set one; the
# caller sets the defaults. -h prints lines HELP_LINES ("2,15") of the script.
parse_fuzz_options() {
  local help=$1
  shift
  harnesses=()
  while (($#)); do
    case $1 in
      --time) seconds=${2:?--time needs seconds}; shift 2 ;;
      --jobs) jobs=${2:?--jobs needs a number}; shift 2 ;;
      --work) work=${2:?--work needs a directory}; shift 2 ;;
      --commit) [[ -v commit ]] || { echo "${0##*/}: unknown option --commit" >&2; exit 2; }
                commit=${2:?--commit needs a commit}; shift 2 ;;
      --report-only) report_only=1; shift ;;
      -h|--help) sed -n "${help}p" "$0"; exit 0 ;;
      -*) echo "${0##*/}: unknown option $1" >&2; exit 2 ;;
      *) harnesses+=("$1"); shift ;;
    esac
  done
  ((${#harnesses[@]})) || harnesses=("${all_harnesses[@]}")
}

# fuzz_fork BINARY HARNESS DIR: libFuzzer in fork mode for $seconds on
# DIR/corpus (with the harness's dictionary, if any), keeping going after each
# crash, timeout (over 5 s) or out-of-memory and leaving every reproducer in
# DIR/findings; leaks count as findings, like crashes. Output in DIR/log.
# libFuzzer's own timeout report can deadlock in a child (seen on the pre-fix
# hostlist code: the child slept on a lock after "ALARM: working on the last
# Unit", and fork mode waits for it forever), so the whole run is killed 5
# minutes after its time; what it found until then stays in DIR/findings.
fuzz_fork() {
  local binary=$1 h=$2 dir=$3 dict=()
  [[ -f $fuzz_repo/tests/fuzz/dict/$h.dict ]] && dict=(-dict="$fuzz_repo/tests/fuzz/dict/$h.dict")
  (cd "$dir" && ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1 \
    LSAN_OPTIONS="suppressions=$fuzz_repo/tests/fuzz/lsan.supp" UBSAN_OPTIONS=print_stacktrace=1 \
    timeout --signal=KILL $((seconds + 300)) "$binary" corpus "${dict[@]}" -fork=1 -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1 \
      -max_total_time="$seconds" -timeout=5 -rss_limit_mb=2048 -malloc_limit_mb="${malloc_mb[$h]}" \
      -max_len="${max_len[$h]}" ${options[$h]:-} -artifact_prefix=findings/ >log 2>&1) || true
}

# run_harnesses RUN_ONE: RUN_ONE HARNESS for every harness, $jobs at a time.
run_harnesses() {
  local run_one=$1 h running=0
  for h in "${harnesses[@]}"; do
    echo "${0##*/}: $h for ${seconds} s ($work/$h/log)"
    "$run_one" "$h" &
    running=$((running + 1))
    if ((running >= jobs)); then
      wait -n
      running=$((running - 1))
    fi
  done
  wait
}
