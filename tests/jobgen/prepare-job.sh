#!/usr/bin/env bash
# prepare-job.sh JOBGEN EXPERIMENT SWEEP: `jobgen --prepare` renders the job
# that prepares the data set on CPUs: one task on one node with the
# profile's CPUs, no GPU, no signal or requeue handling, no array, running
# `hpctrain prepare` on the embedded config; a sweep whose points set data.*
# keys is refused, naming the index and the key.
set -euo pipefail
jobgen=$1 experiment=$2 sweep=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
"$jobgen" "$experiment" --prepare --cluster example-gpu --set slurm.ntasks_per_node=4 --set slurm.gpus_per_task=1 \
  --set slurm.gpu_bind=\"closest\" >"$work/prepare.sbatch"
bash -n "$work/prepare.sbatch" || fail "not valid bash"
directives=$(grep '^#SBATCH' "$work/prepare.sbatch")
echo "$directives"
for want in '--job-name="quickstart-prepare"' '--nodes="1"' '--ntasks-per-node="1"' '--cpus-per-task="64"  # jobgen --prepare: profile example-gpu cpus_per_node' '--partition="gpu"'; do
  grep -qF -- "#SBATCH $want" <<<"$directives" || fail "no '$want'"
done
if grep -E -- "--(gpu|signal|requeue|array)" <<<"$directives"; then fail "a GPU, signal, requeue or array directive above"; fi
grep -q "^srun --mpi='pmi2' -- '/opt/hpctrain/bin/hpctrain' prepare \"\$config\"$" "$work/prepare.sbatch" ||
  fail "srun line: $(grep '^srun' "$work/prepare.sbatch")"
# No cpus_per_node in the profile (default): the whole node, not sbatch's one CPU;
# the experiment's own cpus_per_task where it states one. GPUs asked for
# through [slurm.extra] go too.
{ cat "$experiment"; printf '\n[slurm.extra]\ngres = "gpu:4"\nmem-per-gpu = "8G"\n'; } >"$work/extra.toml"
plain=$("$jobgen" "$work/extra.toml" --prepare)
grep -qx '#SBATCH --exclusive  # jobgen --prepare: the whole node (profile default states no cpus_per_node)' <<<"$plain" ||
  fail "no --exclusive with the default profile: $(grep '^#SBATCH' <<<"$plain")"
if grep -E -- "--(gres|mem-per-gpu)" <<<"$plain"; then fail "GPUs asked for through [slurm.extra] above"; fi
eight=$("$jobgen" "$experiment" --prepare --set slurm.cpus_per_task=8)
grep -q '^#SBATCH --cpus-per-task="8"' <<<"$eight" || fail "slurm.cpus_per_task=8: $(grep '^#SBATCH' <<<"$eight")"
grep -q -- "--exclusive" <<<"$eight" && fail "--exclusive beside the experiment's cpus_per_task"
"$jobgen" "$sweep" --prepare >"$work/sweep.sbatch" || fail "a sweep over other keys"
grep -q -- "--array" "$work/sweep.sbatch" && fail "the preparation of a sweep is an array"
printf '[job]\nname = "ds"\n\n[sweep.parameters]\n"data.vocab_size" = [4096, 8192]\n' >"$work/data-sweep.toml"
if "$jobgen" "$work/data-sweep.toml" --prepare >/dev/null 2>"$work/err"; then
  fail "a sweep over data.vocab_size rendered one preparation"
fi
grep -q "^jobgen: error: jobgen --prepare: sweep index 0 sets data.vocab_size" "$work/err" || fail "$(cat "$work/err")"
echo "ok: jobgen --prepare renders one CPU task running hpctrain prepare; a sweep over data.* is refused"
