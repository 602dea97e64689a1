#!/usr/bin/env bash
# profile-preemption.sh JOBGEN EXPERIMENT PROFILE: a cluster profile that says
# its site delivers no --signal (signal_lead_s = 0) and forbids requeueing
# (on_preempt = "resubmit") sets both for every job, named as their source by
# --explain and carried into the script; the experiment can still override.
set -euo pipefail
shopt -s inherit_errexit
jobgen=$1 experiment=$2 profile=$3
fail() { echo "FAIL: $*"; exit 1; }
explained=$("$jobgen" explain "$experiment" --cluster "$profile")
echo "$explained"
grep -Eq "^  slurm.signal_lead_s = 0 +<- profile .*site-profile.toml$" <<<"$explained" ||
  fail "signal_lead_s does not come from the profile"
grep -Eq "^  slurm.on_preempt = resubmit +<- profile .*site-profile.toml$" <<<"$explained" ||
  fail "on_preempt does not come from the profile"
! grep -q -- '--signal' <<<"$explained" || fail "a --signal directive despite signal_lead_s = 0"
script=$("$jobgen" "$experiment" --cluster "$profile")
grep -q '^case resubmit in$' <<<"$script" || fail "the script does not resubmit"
overridden=$("$jobgen" explain "$experiment" --cluster "$profile" --set 'slurm.on_preempt="stop"')
grep -Eq '^  slurm.on_preempt = stop +<- --set slurm.on_preempt' <<<"$overridden" ||
  { echo "$overridden"; fail "the experiment's --set does not win over the profile"; }
echo "ok: the profile sets signal_lead_s and on_preempt, named as their source; --set still wins"
