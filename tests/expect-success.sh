#!/usr/bin/env bash
# expect-success.sh REGEX CMD... : passes when CMD exits 0 and its output
# (stdout and stderr) matches the extended regex REGEX. Prints the output.
set -u
regex=$1
shift
out=$(mktemp)
trap 'rm -f "$out"' EXIT
"$@" >"$out" 2>&1
rc=$?
cat "$out"
if [[ $rc -ne 0 ]]; then
  echo "FAIL: '$*' exited $rc"
  exit 1
fi
if ! grep -Eq -- "$regex" "$out"; then
  echo "FAIL: output of '$*' does not match /$regex/"
  exit 1
fi
