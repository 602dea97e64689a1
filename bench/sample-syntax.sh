#!/usr/bin/env bash
# sample-syntax.sh HPCTRAIN RUN_OR_CHECKPOINT [SEEDS] [TEMPERATURE] [GENERATE
# OPTIONS...]: does the model write Python? Samples continuations of the
# run's eval.prompt at TEMPERATURE (default 0.8), one per seed of SEEDS (N:
# seeds 1 to N, default 20; FIRST-LAST: those, e.g. 101-300 to choose a
# setting on seeds apart from the 1 to 20 that judge it), cuts each sample's
# last line (a sample that stops at the token budget stops mid-line), and
# asks Python's own codeop.compile_command, what the interactive interpreter
# uses to tell incomplete input from invalid input. A sample passes when it
# is complete or incomplete Python, not invalid. Prints each verdict and the
# share that passes.
set -euo pipefail
hpctrain=$1 run=$2 seeds=${3:-20} temperature=${4:-0.8}
shift $(($# < 4 ? $# : 4))
first=1 last=$seeds
[[ $seeds == *-* ]] && first=${seeds%-*} last=${seeds#*-}
[[ $first =~ ^[0-9]+$ && $last =~ ^[0-9]+$ ]] && ((first >= 1 && first <= last)) ||
  { echo "${0##*/}: SEEDS is N or FIRST-LAST, not $seeds" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for ((seed = first; seed <= last; ++seed)); do
  "$hpctrain" generate "$run" --seed "$seed" --temperature "$temperature" "$@" >"$work/$seed.txt" 2>"$work/$seed.err" ||
    { cat "$work/$seed.err"; exit 1; }
done
/usr/bin/python3 - "$work" "$first" "$last" <<'PY'
import codeop, sys, warnings
work, first, last = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
warnings.simplefilter("ignore")  # invalid escape sequences and the like are warnings, not errors
passed = 0
for seed in range(first, last + 1):
    text = open(f"{work}/{seed}.txt", encoding="utf-8", errors="replace").read()
    # `generate` prints the sample and a newline of its own: without that
    # newline, the last line is the sample's own last, the one cut off.
    text = text.removesuffix("\n")
    lines = text.split("\n")
    body = "\n".join(lines[:-1]) if len(lines) > 1 else ""
    try:
        verdict = "complete" if codeop.compile_command(body, "<sample>", "exec") else "incomplete"
        passed += 1
    except (SyntaxError, ValueError, OverflowError) as error:
        verdict = f"invalid ({type(error).__name__}: {error.msg if isinstance(error, SyntaxError) else error})"
    print(f"seed {seed:2}: {verdict}")
print(f"{passed} of {last - first + 1} samples (seeds {first} to {last}) are Python (complete or incomplete) by codeop.compile_command")
PY
