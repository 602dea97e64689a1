#!/usr/bin/env bash
# expect-failure.sh [--any-lines] REGEX CMD... : passes when CMD exits non-zero
# and its stderr has exactly one line, an error matching the extended regex REGEX.
# With --any-lines, other lines may surround it (a launcher's own messages).
set -u
one_line=1
if [[ $1 == --any-lines ]]; then
  one_line=0
  shift
fi
regex=$1
shift
err=$(mktemp)
trap 'rm -f "$err"' EXIT
"$@" >/dev/null 2>"$err"
rc=$?
if [[ $rc -eq 0 ]]; then
  echo "FAIL: '$*' exited 0; expected an error matching /$regex/"
  exit 1
fi
lines=$(grep -c '' "$err")
if { [[ $one_line -eq 1 && $lines -ne 1 ]]; } || ! grep -Eq -- "$regex" "$err"; then
  echo "FAIL: '$*' exited $rc; expected one stderr line matching /$regex/, got $lines:"
  cat "$err"
  exit 1
fi
echo "ok: exit $rc: $(grep -E -- "$regex" "$err")"
