#!/usr/bin/env bash
# site-flags.sh JOBGEN EXPERIMENT: the site keys of [slurm] and [slurm.extra]
# become #SBATCH directives and srun arguments, each stamped with the line it
# came from; bad values are refused naming the key and its line:column; and an
# extra option is put to the real sbatch's option parser (a minimal SLURM
# configuration lets sbatch parse options here; nothing is submitted).
set -euo pipefail
jobgen=$1 experiment=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

exp=$work/site.toml
{ cat "$experiment"; cat <<'TOML'

[slurm]
gpus_per_task = 1
exclusive = true
reservation = "maint"
nodelist = "node[01-02]"
exclude = "node07"
mail_type = "END,fail"
mail_user = "me@example.org"
cpu_bind = "cores"
gpu_bind = "closest"
srun_args = ["--kill-on-bad-exit=1", "--label"]

[slurm.extra]
"mem-per-gpu" = "40G"
"hint" = "nomultithread"
"spread-job" = true
"overcommit" = false
TOML
} >"$exp"
# The last occurrence: the experiment above may have a key of the same name ([data] exclude).
line_of() { grep -n "^$1" "$exp" | tail -1 | cut -d: -f1; }
"$jobgen" "$exp" >"$work/job.sbatch" || fail "the site keys did not render"
for want in "--gpus-per-task=\"1\"  # $exp:$(line_of gpus_per_task):17" \
  "--exclusive  # $exp:$(line_of exclusive):13" \
  "--reservation=\"maint\"  # $exp:$(line_of reservation):15" \
  "--nodelist=\"node\[01-02\]\"  # $exp:$(line_of nodelist):12" \
  "--exclude=\"node07\"  # $exp:$(line_of exclude):11" \
  "--mail-type=\"END,fail\"  # $exp:$(line_of mail_type):13" \
  "--mail-user=\"me@example.org\"  # $exp:$(line_of mail_user):13" \
  "--mem-per-gpu=\"40G\"  # $exp:$(line_of '"mem-per-gpu"'):17" \
  "--hint=\"nomultithread\"  # $exp:$(line_of '"hint"'):10" \
  "--spread-job  # $exp:$(line_of '"spread-job"'):16"; do
  grep -q -- "^#SBATCH $want$" "$work/job.sbatch" || { grep '^#SBATCH' "$work/job.sbatch"; fail "no line '#SBATCH $want'"; }
done
! grep -q -- "--overcommit" "$work/job.sbatch" || fail "an extra option set to false was rendered"
grep -q -- "^srun --mpi='pmi2' '--cpu-bind=cores' '--gpu-bind=closest' '--kill-on-bad-exit=1' '--label' -- " \
  "$work/job.sbatch" || { grep '^srun' "$work/job.sbatch"; fail "the srun line lacks the site's arguments"; }
bash -n "$work/job.sbatch" || fail "the script does not parse"
"$jobgen" "$exp" --explain >"$work/explain.txt"
grep -q "srun '--label' .* <- $exp:$(line_of srun_args):13" "$work/explain.txt" &&
  grep -q "#SBATCH --mem-per-gpu=\"40G\" .* <- $exp:" "$work/explain.txt" ||
  { cat "$work/explain.txt"; fail "--explain does not name the sources of the site keys"; }
echo "ok: 10 site directives and 4 srun arguments rendered with their sources"

# Refusals, each naming the key and where it stands.
refused() {  # REGEX TOML-SLURM-LINES... : rendering must fail with REGEX
  local regex=$1
  shift
  { cat "$experiment"; printf '\n[slurm]\n'; printf '%s\n' "$@"; } >"$work/bad.toml"
  if "$jobgen" "$work/bad.toml" >/dev/null 2>"$work/err.txt"; then fail "rendered: $*"; fi
  grep -Eq -- "$regex" "$work/err.txt" || { cat "$work/err.txt"; fail "for '$*' expected an error matching: $regex"; }
}
n=$(($(wc -l <"$experiment") + 3))  # the line of the first [slurm] key in bad.toml
refused "bad.toml:$n:17: slurm.gpus_per_task = 2: hpctrain runs one rank per GPU" 'gpus_per_task = 2'
refused "bad.toml:$n:13: slurm.mail_type: 'BEGN' is not a SLURM mail type .*did you mean 'BEGIN'" 'mail_type = "END,BEGN"'
refused "bad.toml:$n:12: slurm.nodelist: .*node\[1-" 'nodelist = "node[1-"'
refused "bad.toml:$n:12: slurm.gpu_bind: 'map_gpu:0 1' is not a SLURM binding" 'gpu_bind = "map_gpu:0 1"'
refused "bad.toml:$n:13: slurm.exclusive: 'users' is not one of user, mcs" 'exclusive = "users"'
refused "bad.toml:$n:15: slurm.reservation: 'a b' is not a reservation name" 'reservation = "a b"'
refused "bad.toml:$n:13: slurm.srun_args: expected an array of strings" 'srun_args = "--label"'
refused "bad.toml:$((n + 1)):13: slurm.extra.\"partition\": jobgen sets --partition itself; use slurm.partition" \
  '[slurm.extra]' 'partition = "gpu"'
refused "bad.toml:$((n + 1)):7: slurm.extra.\"Mem\": not an sbatch long option name" '[slurm.extra]' 'Mem = "4G"'
refused "bad.toml:$((n + 1)):17: slurm.extra.\"mem-per-gpu\": expected a string, an integer, or true" \
  '[slurm.extra]' '"mem-per-gpu" = 4.5'
refused "bad.toml:$n:14: slurm.on_preempt: 'retry' is not one of requeue, resubmit, stop" 'on_preempt = "retry"'
echo "ok: 11 bad site values refused, each naming its key and line:column"
"$jobgen" "$experiment" --set slurm.signal_lead_s=0 >"$work/no-signal.sbatch"
! grep -q -- '^#SBATCH --signal' "$work/no-signal.sbatch" ||
  fail "slurm.signal_lead_s = 0 still asks for an early-warning signal"
"$jobgen" "$experiment" --set slurm.on_preempt=\"resubmit\" >"$work/resubmit.sbatch"
grep -q '^case resubmit in$' "$work/resubmit.sbatch" || fail "slurm.on_preempt does not reach the script"
echo "ok: signal_lead_s = 0 renders no --signal; on_preempt reaches the script"

# The real sbatch judges extra options when it can run: a minimal
# configuration is enough for it to parse options (nothing is submitted).
printf 'ClusterName=jobgen-test\nSlurmctldHost=localhost\n' >"$work/slurm.conf"
export SLURM_CONF=$work/slurm.conf
sbatch --version >/dev/null 2>&1 || fail "sbatch cannot run with a minimal configuration"
SLURM_CONF=$work/slurm.conf "$jobgen" "$exp" --explain >"$work/explain.txt" || fail "sbatch refused valid extra options"
grep -q '\[slurm.extra\]: checked by the installed sbatch' "$work/explain.txt" || fail "extra options not checked"
refused "bad.toml:$((n + 1)):17: slurm.extra.\"mem-per-gpx\": sbatch refuses --mem-per-gpx=40G: sbatch: unrecognized option" \
  '[slurm.extra]' '"mem-per-gpx" = "40G"'
echo "ok: sbatch $(sbatch --version | cut -d' ' -f2) accepts the valid extra options (--hint among them, which its --help" \
  "leaves out) and refuses a misspelt one with its own message"
