#!/usr/bin/env bash
# sigterm-causes.sh HPCTRAIN JOBGEN DATA_DIR: SLURM's SIGTERM, for each of its
# real causes, on a cluster from `with-cluster.sh --site-like` (KillWait=10;
# partition "urgent" preempts "debug" by requeueing, PreemptMode=REQUEUE):
#  (a) preemption by a job of the higher-priority partition: the step
#      checkpoints, the batch shell sees that SLURM requeues the job itself and
#      does not requeue it again; the job resumes and ends at the hash of an
#      uninterrupted run;
#  (b) a real time-limit expiry (--time=1, no early-warning signal): the step
#      checkpoints within KillWait and the script continues the run
#      (slurm.on_preempt = "resubmit", which SLURM does not hold back the way
#      it holds a requeued job); the chain ends at the uninterrupted hash;
#  (c) a user's cancel, by `jobgen cancel RUN_DIR` (one squeue, one
#      scancel): the step checkpoints and the run stops for good, and both
#      jobgen and the batch script record it in jobs.jsonl;
#  (d) a job whose requeue SLURM refuses (Requeue=0, as a site that forbids
#      requeueing leaves it): after the early-warning signal the script's
#      `scontrol requeue` fails, it resubmits the script instead, and the
#      chain of job ids is in jobs.jsonl; the run ends at the uninterrupted
#      hash.
# In (a), (b) and (c) the checkpoint written on SIGTERM verifies and holds the
# step the signal arrived in (newer than the last interval checkpoint unless
# that step is itself an interval step). `jobgen status` shows (b) running and
# (a) finished; `jobgen logs --follow` of (b), started while its first job
# runs, prints both jobs' logs in order and ends with the run.
set -euo pipefail
shopt -s inherit_errexit
hpctrain=$1 jobgen=$2 data=$3
here=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
fail() { echo "FAIL: $*"; exit 1; }
kill_wait=$(scontrol show config | awk '$1 == "KillWait" {print $3}')
((kill_wait >= 10)) || fail "KillWait is $kill_wait s; this test needs a site-like 10 s or more"

interval=20
shrink=(--set "data.dir=$data" --set model.n_layer=1 --set model.d_model=64 --set training.batch_size=4
  --set training.micro_batch_size=4 --set eval.interval=0 --set eval.samples=16 --set eval.final=sample
  --set eval.test=false --set eval.sample_tokens=0 --set "checkpoint.interval=$interval" --set checkpoint.keep=0
  --set logging.interval=5 --set "slurm.executable=$hpctrain" --set slurm.signal_lead_s=0 --set slurm.cpus_per_task=1)
# One compute thread per run, jobs and references alike (hpctrain reads
# SLURM_CPUS_PER_TASK), so that two runs side by side do not slow each other.
export SLURM_CPUS_PER_TASK=1
# shellcheck source=job-helpers.sh
. "$(dirname "$0")/job-helpers.sh"
wait_for_step() {  # RUN_DIR STEP
  for _ in $(seq 1 2000); do
    grep -q "\"step\":$2," "$1/metrics.jsonl" 2>/dev/null && return 0
    sleep 0.1
  done
  fail "$1 never reached step $2"
}
reference() {  # NAME STEPS: an uninterrupted run under mpiexec, one rank, as a job runs it
  mpiexec -n 1 "$hpctrain" train "$here/jobs/quickstart.toml" "${shrink[@]}" --set "training.steps=$2" \
    --set "job.run_dir=runs/$1" >"$1.out" 2>&1 </dev/null || { cat "$1.out"; fail "reference run $1"; }
}
submit() {  # NAME STEPS JOBGEN_OPTIONS... -> job id
  local name=$1 steps=$2 out
  shift 2
  out=$("$jobgen" "$here/jobs/quickstart.toml" --cluster local "${shrink[@]}" --set "training.steps=$steps" --set "job.name=$name" \
    --set "job.run_dir=runs/$name" "$@" --submit) || fail "jobgen --submit of $name"
  [[ ${out#submitted batch job } =~ ^[0-9]+$ ]] || fail "jobgen --submit of $name printed '$out'"
  echo "${out#submitted batch job }"
}
# The checkpoint hpctrain wrote on SIGTERM: logged with its step; it must
# verify and hold every step the run had finished when the signal arrived (the
# step hpctrain logs on receiving it, or the one after, where the other ranks'
# agreement settles). That step is a multiple of checkpoint.interval about one
# time in `interval`: then the SIGTERM checkpoint and the interval one are the
# same file, and no work is lost either way.
check_sigterm_checkpoint() {  # NAME LOG
  local step received
  step=$(grep -o 'checkpoint of step [0-9]* on disk [0-9.]* s after SIGTERM' "$2" | head -1 | cut -d' ' -f4)
  [[ -n $step ]] || { cat "$2"; fail "$1: no checkpoint logged after SIGTERM"; }
  received=$(grep -o 'SIGTERM received by the end of step [0-9]*' "$2" | head -1 | awk '{print $NF}')
  [[ -n $received ]] || { cat "$2"; fail "$1: hpctrain did not log the step SIGTERM arrived in"; }
  ((step == received || step == received + 1)) ||
    fail "$1: SIGTERM arrived by the end of step $received, but the checkpoint is of step $step"
  "$hpctrain" ckpt verify "runs/$1/checkpoints/step-$(printf %08d "$step").h5" >/dev/null ||
    fail "$1: the SIGTERM checkpoint of step $step does not verify"
  echo "$1: $(grep -o 'checkpoint of step [0-9]* on disk [0-9.]* s after SIGTERM' "$2" | head -1) (KillWait $kill_wait s)," \
    "signal by the end of step $received, verified; the last interval checkpoint before it:" \
    "step $(((received - 1) / interval * interval))"
}

# The short runs (a), (c), (d), and the rate of a step here.
short=200
SECONDS=0
reference short $short
want_short=$(hash_in short.out)
per_step=$(awk -v s="$SECONDS" -v n=$short 'BEGIN { print s / n }')

# (b) needs a run longer than one time-limit slice: SLURM checks limits every
# 30 s, so a 1-minute job ends 60 to 90 s after it starts. Sized to about
# 115 s alone, the first slice is cut and the second finishes. Its reference
# runs beside it (two processes, two cores); the other jobs start after.
long=$(awk -v p="$per_step" 'BEGIN { n = int(115 / p); print (n < 1000 ? 1000 : n) }')
timed=$(submit timed "$long" --set slurm.time=\"1\" --set slurm.nodelist=\"node1\" --set slurm.on_preempt=\"resubmit\")
echo "(b) job $timed: $long steps (about 115 s at ${per_step} s a step) under a 1-minute limit"
wait_for_step runs/timed 5
"$jobgen" logs runs/timed --follow >timed-follow.out 2>&1 &
follower=$!
"$jobgen" status runs/timed | tee timed-status.txt
[[ $(awk '$1 == "-" { print $2, $3, $4 }' timed-status.txt) == "$timed RUNNING 0" ]] ||
  fail "(b) status of the running job: $(tail -1 timed-status.txt)"
[[ $(awk '$1 == "-" { print $9 }' timed-status.txt) =~ ^[0-9]+m[0-9]{2}s$ ]] || fail "(b) status shows no ETA"
reference long "$long"
want_long=$(hash_in long.out)

preempted=$(submit preempted $short --set slurm.time=\"20\" --set slurm.nodelist=\"node2\" --set slurm.exclusive=true)
cancelled=$(submit cancelled $short --set slurm.time=\"20\" --set slurm.nodelist=\"node1\")
refused=$(submit refused $short --set slurm.time=\"20\" --set slurm.nodelist=\"node1\")
scontrol update "JobId=$refused" Requeue=0
wait_for_step runs/preempted 25
urgent=$(sbatch --parsable -p urgent -w node2 --exclusive -o urgent.out --wrap "sleep 3")
wait_for_step runs/cancelled 25
said=$("$jobgen" cancel runs/cancelled)
[[ $said == "cancelled 1 job of runs/cancelled: $cancelled" ]] || fail "(c) jobgen cancel said: $said"
wait_for_step runs/refused 25
scancel --signal=USR1 --batch "$refused"

# (c) a user's cancel: checkpoint, then nothing more.
[[ $(wait_for_state "$cancelled") == CANCELLED ]] || fail "(c) job $cancelled did not end CANCELLED"
log=logs/cancelled-$cancelled.out
cat "$log"
grep -q 'jobgen: SIGTERM received (cancel)' "$log" && grep -q 'the job was cancelled, so the run stops here' "$log" ||
  fail "(c) the script did not see a cancel"
check_sigterm_checkpoint cancelled "$log"
grep -q "^{\"event\":\"cancel\",\"job_id\":\"$cancelled\",.*\"by\":\"jobgen cancel\"}$" runs/cancelled/jobs.jsonl &&
  tail -1 runs/cancelled/jobs.jsonl | grep -q '"event":"end",.*"cause":"cancel","outcome":"cancelled"' ||
  { cat runs/cancelled/jobs.jsonl; fail "(c) jobs.jsonl does not record the cancel by jobgen and by the script"; }
said=$("$jobgen" cancel runs/cancelled)
[[ $said == "nothing to cancel: no job of runs/cancelled is queued or running" ]] || fail "(c) cancelled twice: $said"
# A record line jobgen cannot read may name a job that still runs: cancel says
# so, and names the line, instead of a plain "nothing to cancel".
cp runs/cancelled/jobs.jsonl cancelled-jobs.jsonl
echo '{"event":"start","job_id":' >>runs/cancelled/jobs.jsonl
said=$("$jobgen" cancel runs/cancelled 2>cancel-warnings.txt)
[[ $said == "nothing to cancel: no job of runs/cancelled is queued or running among those its readable records name (1 line unreadable: a job only they name is not known to jobgen)" ]] &&
  grep -q "^jobgen: warning: runs/cancelled/jobs.jsonl:[0-9]*: not a run record" cancel-warnings.txt ||
  fail "(c) cancel with an unreadable record line: $said / $(cat cancel-warnings.txt)"
cp cancelled-jobs.jsonl runs/cancelled/jobs.jsonl

# (a) preemption: SLURM requeues the job; the script must not requeue it again.
[[ $(wait_for_state "$urgent") == COMPLETED ]] || fail "the urgent job did not run"
[[ $(wait_for_state "$preempted") == COMPLETED ]] || fail "(a) job $preempted did not complete"
log=logs/preempted-$preempted.out
cat "$log"
grep -q 'jobgen: SIGTERM received (preemption)' "$log" && grep -q 'SLURM requeues this job itself' "$log" ||
  fail "(a) the script did not see a preemption"
[[ $(field "$preempted" Restarts) == 1 ]] || fail "(a) job $preempted restarted $(field "$preempted" Restarts) times, not once"
check_sigterm_checkpoint preempted "$log"
[[ $(hash_in "$log") == "$want_short" ]] || fail "(a) ended at $(hash_in "$log"), uninterrupted at $want_short"
"$jobgen" status runs/preempted | tee preempted-status.txt
[[ $(awk '$1 == "-" { print $2, $3, $4, $5, $10 }' preempted-status.txt) == \
  "$preempted finished 1 $short/$short step-$(printf %08d $short).h5" ]] || fail "(a) status of the finished run"
echo "(a) ok: preempted by job $urgent, requeued by SLURM alone, resumed to the uninterrupted hash"

# (d) requeue refused: resubmitted instead; the chain is in jobs.jsonl.
[[ $(wait_for_state "$refused") == COMPLETED ]] || fail "(d) job $refused did not end COMPLETED"
next=$(grep -o '"outcome":"resubmitted","exit_status":75,"next_job_id":"[0-9]*"' runs/refused/jobs.jsonl |
  grep -o '[0-9]*"$' | tr -d '"')
[[ -n $next ]] || { cat logs/refused-"$refused".out runs/refused/jobs.jsonl; fail "(d) no resubmission recorded"; }
grep -q 'jobgen: requeue refused' logs/refused-"$refused".out || fail "(d) the log does not say the requeue was refused"
[[ $(wait_for_state "$next") == COMPLETED ]] || fail "(d) resubmitted job $next did not complete"
cat logs/refused-"$refused".out logs/refused-"$next".out
grep -q "jobgen: job $next restart 1 on" logs/refused-"$next".out || fail "(d) job $next does not count restart 1"
[[ $(hash_in logs/refused-"$next".out) == "$want_short" ]] || fail "(d) the resubmitted run ended elsewhere"
grep -c '"event":"start"' runs/refused/jobs.jsonl | grep -qx 2 || fail "(d) jobs.jsonl does not hold 2 starts"
echo "(d) ok: requeue refused, resubmitted as job $next, resumed to the uninterrupted hash; jobs.jsonl:"
cat runs/refused/jobs.jsonl

# (b) the time limit: the chain of jobs in jobs.jsonl ends at the long
# reference's hash.
last=$timed  # followed through jobs.jsonl: SLURM forgets a job MinJobAge after it ends
for _ in $(seq 1 3000); do
  end=$(grep "\"event\":\"end\",\"job_id\":\"$last\"" runs/timed/jobs.jsonl 2>/dev/null || true)
  if [[ -n $end ]]; then
    next=$(grep -o '"next_job_id":"[0-9]*"' <<<"$end" | grep -o '[0-9][0-9]*' || true)
    [[ -n $next ]] || break
    last=$next
  fi
  sleep 0.2
done
state=$(wait_for_state "$last")
ids=$(grep -o '"event":"start","job_id":"[0-9]*"' runs/timed/jobs.jsonl | grep -o '[0-9]*' | tr '\n' ' ')
for id in $ids; do cat "logs/timed-$id.out"; done >timed.out
cat timed.out runs/timed/jobs.jsonl
# The last job finishes its training; the chain's length depends on where the
# limit cut each job (SLURM checks limits every 30 s). A job that ends within
# seconds of its own limit can finish its run and still be recorded TIMEOUT by
# SLURM, whose check fired while the batch script was exiting: then the run
# record must say the run finished with exit status 0.
if [[ $state == TIMEOUT ]] &&
  grep -q "\"event\":\"end\",\"job_id\":\"$last\",.*\"outcome\":\"finished\",\"exit_status\":0," runs/timed/jobs.jsonl; then
  echo "(b) job $last finished its run as its limit came; SLURM records it TIMEOUT, the run record finished"
else
  [[ $state == COMPLETED ]] || fail "(b) the last job of the chain ($last) ended $state"
fi
grep -q 'jobgen: SIGTERM received (time_limit)' timed.out || fail "(b) the script did not see the time limit"
grep -q '"cause":"time_limit","outcome":"resubmitted"' runs/timed/jobs.jsonl || fail "(b) no resubmission recorded"
check_sigterm_checkpoint timed timed.out
[[ $(hash_in timed.out) == "$want_long" ]] || fail "(b) ended at $(hash_in timed.out), uninterrupted at $want_long"
# `jobgen logs --follow`: every job's log, in order, each under its header, and
# ended by itself with the run.
ends_by_itself $follower || fail "(b) jobgen logs --follow did not end with the run"
wait $follower || { cat timed-follow.out; fail "(b) jobgen logs --follow failed"; }
for id in $ids; do echo "==> $PWD/logs/timed-$id.out (job $id) <=="; cat "logs/timed-$id.out"; done | cmp - timed-follow.out ||
  { cat timed-follow.out; fail "(b) jobgen logs --follow printed other than the chain's logs in order"; }
echo "(b) ok: cut by the time limit, continued (jobs $ids), ended at the uninterrupted hash; jobgen logs --follow" \
  "printed both jobs' logs in order and ended with the run"
echo "ok: preemption, time limit, scancel and a refused requeue each handled by their rule"
