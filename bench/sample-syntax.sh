#!/usr/bin/env bash
# sample-syntax.sh HPCTRAIN RUN_OR_CHECKPOINT [SEEDS] [TEMPERATURE] [GENERATE
# OPTIONS...]: does the
# model write Python? Samples SEEDS continuations (default 20) of the run's
# eval.prompt at TEMPERATURE (default 0.8), cuts each sample's last line (the
# sample stops mid-line), and asks Python's own codeop.compile_command, what
# the interactive interpreter uses to tell incomplete input from invalid
# input. A sample passes when it is complete or incomplete Python, not
# invalid. Prints each verdict and the share that passes.
set -euo pipefail
hpctrain=$1 run=$2 seeds=${3:-20} temperature=${4:-0.8}
shift $(($# < 4 ? $# : 4))
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for ((seed = 1; seed <= seeds; ++seed)); do
  "$hpctrain" generate "$run" --seed "$seed" --temperature "$temperature" "$@" >"$work/$seed.txt" 2>"$work/$seed.err" ||
    { cat "$work/$seed.err"; exit 1; }
done
/usr/bin/python3 - "$work" "$seeds" <<'PY'
import codeop, sys, warnings
work, seeds = sys.argv[1], int(sys.argv[2])
warnings.simplefilter("ignore")  # invalid escape sequences and the like are warnings, not errors
passed = 0
for seed in range(1, seeds + 1):
    text = open(f"{work}/{seed}.txt", encoding="utf-8", errors="replace").read()
    lines = text.split("\n")
    body = "\n".join(lines[:-1]) if len(lines) > 1 else ""
    try:
        verdict = "complete" if codeop.compile_command(body, "<sample>", "exec") else "incomplete"
        passed += 1
    except (SyntaxError, ValueError, OverflowError) as error:
        verdict = f"invalid ({type(error).__name__}: {error.msg if isinstance(error, SyntaxError) else error})"
    print(f"seed {seed:2}: {verdict}")
print(f"{passed} of {seeds} samples are Python (complete or incomplete) by codeop.compile_command")
PY
