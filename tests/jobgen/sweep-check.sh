#!/usr/bin/env bash
# sweep-check.sh JOBGEN EXPERIMENT: a 2 x 3 [sweep] renders one job array of 6
# tasks (%4 throttle) with a manifest, and array task 4 runs with its own
# overrides (checked by running the script under bash with srun recorded),
# running the hpctrain installed beside jobgen.
set -euo pipefail
jobgen=$1 experiment=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$jobgen" "$experiment" --manifest "$work/manifest.json" >"$work/array.sbatch"
arrays=$(grep -c '^#SBATCH --array=' "$work/array.sbatch")
grep -q '^#SBATCH --array="0-5%4"  # \[sweep\] grid: 6 runs$' "$work/array.sbatch" && ((arrays == 1)) ||
  { grep '^#SBATCH' "$work/array.sbatch"; echo "FAIL: expected one --array=0-5%4 directive"; exit 1; }
grep -q '^#SBATCH --output="logs/%x-%A_%a.out"' "$work/array.sbatch" || { echo "FAIL: array log name"; exit 1; }
/usr/bin/python3 - "$work/manifest.json" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
want = {str(i): {"optimizer.lr": lr, "model.d_model": d} for i, (lr, d) in
        enumerate((lr, d) for lr in (1e-3, 3e-4) for d in (64, 128, 256))}
assert m == want, f"manifest {m}"
print("ok: manifest maps 6 indexes to their overrides")
PY
mkdir "$work/bin"
printf '#!/bin/sh\nfor a in "$@"; do printf "%%s\\n" "$a"; done > "%s/srun.args"\n' "$work" >"$work/bin/srun"
chmod +x "$work/bin/srun"
(cd "$work" && PATH="$work/bin:$PATH" SLURM_JOB_ID=77 SLURM_ARRAY_JOB_ID=77 SLURM_ARRAY_TASK_ID=4 bash array.sbatch >run.out 2>&1) ||
  { cat "$work/run.out"; echo "FAIL: the array script failed"; exit 1; }
# The profile names no executable: the hpctrain beside this jobgen.
expected=$(printf '%s\n' --mpi=pmi2 -- "$(cd "$(dirname "$jobgen")" && pwd)/hpctrain" train runs/sweep/jobgen-77.toml --set optimizer.lr=0.0003 \
  --set model.d_model=128 --set job.run_dir=runs/sweep/4)
[[ $(cat "$work/srun.args") == "$expected" ]] || { diff <(echo "$expected") "$work/srun.args"; echo "FAIL: srun argv"; exit 1; }
cmp <(/usr/bin/python3 -m json.tool "$work/runs/sweep/sweep-manifest.json") <(/usr/bin/python3 -m json.tool "$work/manifest.json") ||
  { echo "FAIL: the job's manifest differs from jobgen's"; exit 1; }
echo "ok: array task 4 runs with optimizer.lr=0.0003 model.d_model=128 in runs/sweep/4"
