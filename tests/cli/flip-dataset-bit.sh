#!/usr/bin/env bash
# flip-dataset-bit.sh FILE.h5 DATASET: flips one bit inside DATASET's stored
# bytes (h5dump exports them, which locates them in the file), so that its
# Fletcher32 checksum must fail.
set -euo pipefail
file=$1 dataset=$2
raw=$(mktemp)
trap 'rm -f "$raw"' EXIT
h5dump -d "$dataset" -b LE -o "$raw" "$file" >/dev/null
/usr/bin/python3 - "$file" "$raw" <<'PY'
import sys
path, raw = sys.argv[1], open(sys.argv[2], "rb").read()
data = bytearray(open(path, "rb").read())
offset = data.find(raw[:256])
assert offset > 0 and data.find(raw[:256], offset + 1) < 0, "dataset bytes not found exactly once"
data[offset + 1000] ^= 0x04
open(path, "wb").write(data)
PY
