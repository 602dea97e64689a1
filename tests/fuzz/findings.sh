# shellcheck shell=bash
# Sourced by tests/fuzz/fuzz.sh and tests/fuzz/fuzz-before-fixes.sh: lists what a
# libFuzzer run in fork mode found. Fork mode goes on after each finding and
# keeps every input that crashed, timed out (over 5 s), ran out of memory or
# leaked, mostly the same few bugs again; each is replayed alone through the
# harness binary and grouped by what the sanitizer or libFuzzer said and by
# where: the innermost stack frame in our code (SRC/src/..., the harness),
# and whose it is. A crash whose innermost frame is inside libhdf5 (a shared
# library we do not own, parsing a file) is libhdf5's; everything else is
# ours, header-only libraries compiled into our code (toml++, nlohmann/json)
# and libraries called with values we did not check included: the library is
# named beside it.
# The caller sets fuzz_repo to the repository root.

# describe_finding BINARY FINDING SRC MALLOC_MB -> "what<TAB>where<TAB>owner"
describe_finding() {
  local binary=$1 finding=$2 src=$3 malloc_mb=$4 report what line where owner
  report=$(cd "$(dirname "$binary")" && ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1 \
    LSAN_OPTIONS="suppressions=${fuzz_repo:?set by the sourcing script}/tests/fuzz/lsan.supp" UBSAN_OPTIONS=print_stacktrace=1 \
    timeout -k 5 60 "$binary" -timeout=5 -rss_limit_mb=2048 -malloc_limit_mb="$malloc_mb" "$finding" 2>&1 || true)
  what=$(grep -m1 -oE 'ERROR: (AddressSanitizer|LeakSanitizer|libFuzzer): [A-Za-z-]+( on [a-z ]+)?|runtime error: [^;]{0,70}|Assertion .{0,70}|[a-z_]+_fuzz: .{0,60}' <<<"$report" | head -1 || true)
  grep -q 'std::terminate' <<<"$report" && grep -q '__cxa_throw' <<<"$report" && what+=" (an uncaught exception)"
  [[ -z $what ]] && what="no longer reproduces alone"
  # The stack frames outside the sanitizers, libFuzzer and the C and C++
  # runtimes (frames libhdf5 has no symbols for are kept: "(libhdf5...+0x...)").
  local frames runtime='in (__sanitizer|__asan|__ubsan|__lsan|fuzzer::|__interceptor|abort|raise|__pthread|std::terminate|__cxa|__assert|__libc|__mem|malloc|calloc|realloc|operator new)|in (mem(cpy|move|set|cmp|chr)|str(len|n?cmp|chr|dup)) |/libc\.so|libstdc\+\+|sanitizer_common|/asan/'
  # (libFuzzer's out-of-memory report puts a hint and a blank line before its
  # stack: the stack ends at the first blank line after a frame.)
  frames=$(awk '/ERROR:|runtime error:|Assertion/ {on = 1} on && /^ +#[0-9]+ / {seen = 1} on && seen && /^$/ {exit} on' <<<"$report" |
    grep -E '^ +#[0-9]+ 0x[0-9a-f]+ ' | grep -vE "$runtime" || true)
  # Our sources appear under SRC, or relative to the build directory where
  # ccache's base_dir rewrote the paths (build-fuzz/../src/...).
  line=$(grep -m1 -E " ($src/|[^ ]*\.\./)(src|tests/fuzz)/" <<<"$frames" || true)
  local first
  first=$(head -1 <<<"$frames")
  # A stack buffer overflowed inside a library belongs to the function that
  # owns the buffer: the frame ASan names after "located in stack of thread".
  local holder=
  if grep -q 'stack-buffer-overflow' <<<"$report"; then
    holder=$(awk '/is located in stack of thread/ {on = 1; next} on && /^ +#[0-9]+ 0x/ {print; exit}' <<<"$report")
  fi
  case ${holder:-$first} in
    *libhdf5*) owner=libhdf5 ;;
    *toml++* | *tomlplusplus*) owner="our code (inside toml++)" ;;
    *nlohmann*) owner="our code (inside nlohmann/json)" ;;
    *) owner="our code" ;;
  esac
  [[ -z $line ]] && line=$first
  where=$(sed -E 's/^ +#[0-9]+ 0x[0-9a-f]+ in //; s|'"$src"'/||; s#[^ ]*\.\./(src|tests/fuzz)/#\1/#' <<<"$line" |
    awk '{fn = $1; sub(/\(.*/, "", fn); print fn " " $NF}' | cut -c1-150)
  printf '%s\t%s\t%s\n' "$what" "${where:-?}" "$owner"
}

# report_findings BINARY DIR SRC MALLOC_MB [REPLAY]: one group per kind, cause
# and owner, with a count and an example. With REPLAY (a binary that takes a
# file, such as the GCC replay driver of the README's test command), each
# finding is also run through it: "today: taken" when it exits 0.
report_findings() {
  local binary=$1 dir=$2 src=$3 malloc_mb=$4 replay=${5:-}
  shopt -s nullglob
  local findings=("$dir"/findings/*)
  shopt -u nullglob
  if ((${#findings[@]} == 0)); then
    echo "   nothing found"
    return
  fi
  # Every timeout, out-of-memory and leak, and at most 100 crashes (their
  # names are hashes, so the first 100 are an unbiased pick).
  local replayed=() crashes=0 f
  for f in "${findings[@]}"; do
    if [[ $(basename "$f") == crash-* ]]; then
      crashes=$((crashes + 1))
      ((crashes > 100)) && continue
    fi
    replayed+=("$f")
  done
  ((crashes > 100)) && echo "   $crashes crashes: 100 of them replayed"
  for f in "${replayed[@]}"; do
    local kind today=""
    kind=$(basename "$f" | cut -d- -f1)
    if [[ -n $replay ]]; then
      if ASAN_OPTIONS=detect_leaks=1 LSAN_OPTIONS="suppressions=$fuzz_repo/tests/fuzz/lsan.supp" \
        timeout -k 5 60 "$replay" "$f" >/dev/null 2>&1; then today="taken"; else today="FAILS"; fi
    fi
    IFS=$'\t' read -r what where owner < <(describe_finding "$binary" "$f" "$src" "$malloc_mb")
    printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$kind" "$what" "$where" "$owner" "$today" "$(basename "$f")"
  done | sort | awk -F'\t' '
    { key = $1 FS $2 FS $3 FS $4 FS $5; if (!(key in n)) { order[++k] = key; example[key] = $6 } n[key]++ }
    END { for (i = 1; i <= k; i++) { split(order[i], p, FS)
            printf "   %3d x %-8s %s\n         in %s: %s\n", n[order[i]], p[1], p[2], p[4], p[3]
            if (p[5] != "") printf "         today: %s\n", p[5]
            printf "         e.g. findings/%s\n", example[order[i]] } }'
}
