#!/usr/bin/env bash
# bench/data.sh: data pipeline throughput on the quickstart corpus.
# Prepares the quickstart data set (reused when unchanged), then runs
# build/bench/data_bench and prints tokenization MB/s at 1 and 2 threads with
# their ratio, and loader tokens/s against a trainer's token rate.
#   TRAINER_TOKENS_PER_S  the trainer rate to compare with (default: 1490, the
#                         tokens/s PyTorch eager trained the tiny GPT at on 2
#                         threads here, an early and low figure)
set -euo pipefail
cd "$(dirname "$0")/.."
data=build/bench-data/quickstart
build/hpctrain prepare jobs/quickstart.toml --set "data.dir=$data" | tail -n 12
json=$(mktemp)
trap 'rm -f "$json"' EXIT
HPCTRAIN_BENCH_DATA=$data build/bench/data_bench --benchmark_repetitions=3 --benchmark_report_aggregates_only=true \
  --benchmark_format=json >"$json"
python3 - "$json" "${TRAINER_TOKENS_PER_S:-1490}" <<'PY'
import json, sys
runs = {b["name"]: b for b in json.load(open(sys.argv[1]))["benchmarks"] if b.get("aggregate_name") == "median"}
trainer = float(sys.argv[2])
t1 = runs["Tokenize/threads:1/real_time_median"]["bytes_per_second"] / 1e6
t2 = runs["Tokenize/threads:2/real_time_median"]["bytes_per_second"] / 1e6
loader = runs["Loader_median"]["tokens/s"]
print(f"{'measure (median of 3)':<40} {'value':>14}")
print(f"{'tokenize, 1 thread':<40} {t1:>10.2f} MB/s")
print(f"{'tokenize, 2 threads':<40} {t2:>10.2f} MB/s")
print(f"{'  2 threads / 1 thread':<40} {t2 / t1:>12.2f}x")
print(f"{'loader (B8 T256, sampler + mmap)':<40} {loader / 1e6:>8.2f} Mtok/s")
print(f"{'  loader / trainer ({:.0f} tok/s)'.format(trainer):<40} {loader / trainer:>12.0f}x  (target >= 100x)")
PY
