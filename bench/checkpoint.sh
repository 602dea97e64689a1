#!/usr/bin/env bash
# bench/checkpoint.sh: the two checkpoint targets, on the quickstart model.
#  1. Time an asynchronous checkpoint blocks training, against one quickstart
#     step (2 ranks, as the README's main command). Target: <= 10%.
#  2. Write bandwidth of the quickstart's checkpoint against a plain write of
#     the same size into the same directory, as `dd bs=1M conv=fsync` does it,
#     alternated round by round (build/bench/checkpoint_bench). Target: >= 50%.
#     `dd` itself is run as well, as a check on that baseline.
# Uses the quickstart data set (prepared on first use).
set -euo pipefail
cd "$(dirname "$0")/.."
hpctrain=build/hpctrain
work=${BENCH_DIR:-$(mktemp -d -p "$PWD" .bench-ckpt.XXXX)}
trap 'rm -rf "$work"' EXIT
ranks=${RANKS:-2}
steps=${STEPS:-12}
common=(--set "training.steps=$steps" --set eval.interval=0 --set eval.samples=8 --set eval.final=sample --set eval.sample_tokens=0
  --set logging.interval=1 --set checkpoint.interval=3 --set checkpoint.keep=2)

mpiexec -n "$ranks" "$hpctrain" jobs/quickstart.toml "${common[@]}" --set checkpoint.async=true \
  --set "job.run_dir=$work/async" >"$work/async.out" 2>&1 || { cat "$work/async.out"; exit 1; }

/usr/bin/python3 - "$work" "$ranks" <<'PY'
import json, re, statistics, subprocess, sys
work, ranks = sys.argv[1], int(sys.argv[2])
text = open(f"{work}/async.out").read()
# The snapshot's cost is a detail: rank 0's log file has it.
log = open(f"{work}/async/logs/rank-0.log").read()
# Periodic checkpoints only (the final one waits for its write on purpose).
blocked = [float(x) for x in re.findall(r"checkpoint at step \d+: [\d.]+ MB snapshot; training blocked ([\d.]+) ms", log)][:-1]
records = [json.loads(l) for l in open(f"{work}/async/metrics.jsonl")]
steps = [r for r in records if r["kind"] == "train"]
# A step's time from tokens/s; steps with a checkpoint in them are left out of the median.
tokens_per_step = None
for line in text.splitlines():
    m = re.search(r"(\d+) steps of (\d+) samples x (\d+) tokens", line)
    if m:
        tokens_per_step = int(m.group(2)) * int(m.group(3))
step_s = statistics.median(tokens_per_step / r["tokens_per_s"] for r in steps[1:] if r["step"] % 3 != 1)
worst = max(blocked)
print(f"async checkpoint: training blocked {statistics.median(blocked):.1f} ms median, {worst:.1f} ms worst, over {len(blocked)} checkpoints")
print(f"quickstart step ({ranks} ranks): {1e3 * step_s:.0f} ms median")
print(f"blocked / step = {worst / 1e3 / step_s:.3f} (target <= 0.10) {'PASS' if worst / 1e3 / step_s <= 0.10 else 'FAIL'}")
PY
build/bench/checkpoint_bench --dir "$work" --rounds 15
/usr/bin/python3 - "$work" <<'PY'
import re, statistics, subprocess, sys
work = sys.argv[1]
rates = []
for _ in range(7):
    out = subprocess.run(["dd", "if=/dev/zero", f"of={work}/dd.bin", "bs=1M", "count=61", "conv=fsync"],
                         capture_output=True, text=True, check=True).stderr
    rates.append(61 * 1.048576 / float(re.search(r"copied, ([\d.e-]+) s", out).group(1)))
print(f"dd itself, 61 MiB conv=fsync, same directory: {statistics.median(rates):.0f} MB/s median of 7")
PY
