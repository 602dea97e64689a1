# shellcheck shell=bash
# job-helpers.sh: what the cluster tests ask of SLURM and of a job's log.
# Sourced, not run.

# The final weights hash a training log ends with.
hash_in() { grep -o 'final weights sha256: [0-9a-f]*' "$1" | tail -1 | cut -d' ' -f4; }

# FIELD of `scontrol show job JOB`; empty once SLURM has forgotten the job
# (MinJobAge after it ended).
field() { { scontrol show job "$1" 2>/dev/null || true; } | grep -o "$2=[^ ]*" | head -1 | cut -d= -f2 || true; }

# JOB's state once it is final (waits up to about 6 minutes).
wait_for_state() {
  local state=
  for _ in $(seq 1 2000); do
    state=$(field "$1" JobState)
    case $state in COMPLETED | FAILED | CANCELLED | TIMEOUT | NODE_FAIL | OUT_OF_MEMORY | BOOT_FAIL | DEADLINE) break ;; esac
    sleep 0.2
  done
  echo "$state"
}

# Whether background process PID ends by itself within about 10 s; killed if
# not. The caller then `wait`s for its exit status.
ends_by_itself() {
  for _ in $(seq 1 100); do
    kill -0 "$1" 2>/dev/null || return 0
    sleep 0.1
  done
  kill "$1" 2>/dev/null
  return 1
}
