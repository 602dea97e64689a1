#!/usr/bin/env bash
# bench/across-nodes.sh — sync against async reducers across 2 nodes, the way
# users run them: `jobgen --submit` on a real SLURM cluster (the test harness,
# tests/cluster/slurm-cluster.sh: one network namespace per node), one rank per
# node, MPI over TCP on the inter-node link (UCX_TLS=tcp,self: otherwise the
# simulated nodes, one machine, would use shared memory), the link limited to
# 100 Mbit/s with tbf.
#
# Fixed here, before any run (bench/across-nodes-report.py computes from them):
#   the run length:     STEPS optimizer steps of the quickstart (model, data,
#                       batch of 16 x 256 tokens, schedule, seed) at learning
#                       rate LR (the quickstart's before it was tuned to 3e-3,
#                       kept so that runs measured before and after compare);
#   the evaluations:    every EVAL_EVERY steps, each over the whole validation
#                       split (eval.samples larger than the split);
#   the target:         DDP's final whole-split eval loss x 1.01;
#   the headline:       training seconds until a run's eval loss first reaches
#                       the target (interpolated between evaluations), then
#                       tokens/s;
#   the configurations: ddp (buckets of <= 2 MiB overlapped with backward),
#                       and DDAP with each merge rule, average, ties and diloco
#                       (outer Nesterov momentum 0.9, outer learning rate 0.7),
#                       every MERGE_EVERY steps, blocking or overlapped (applied
#                       MERGE_DELAY steps later); a DDAP configuration's
#                       options after "+": int8, int4 or int2
#                       (parallel.merge_wire), syncN (parallel.sync_steps = N),
#                       syncint8, syncint4 or syncint2 (parallel.sync_wire), fragN (streaming:
#                       parallel.merge_fragments = N);
#   the chosen ones:    `--configs chosen`: DDP and the DDAP configurations
#                       chosen by bench/ddap-tokens-to-target.sh on the
#                       validation split (docs/reducers.md, "Quantized merges,
#                       measured" and "Streaming merges, measured"): the
#                       fewest bytes for their tokens (diloco, int4: 1.63x
#                       DDP's tokens, 120x fewer bytes) and the fewest tokens
#                       (diloco after 100 synchronous steps, int4: 0.83x
#                       DDP's tokens, 3.9x fewer bytes); then, with the
#                       synchronous steps' gradients over int4 too
#                       (parallel.sync_wire, "Quantized synchronous steps,
#                       measured"), 100 of them (0.83x, 25x fewer bytes) and
#                       35 (1.13x DDP's tokens, 53x fewer bytes: at most 1.3x
#                       the tokens and at least 50x fewer bytes); then, measured
#                       on this benchmark's own model (ddap-tokens-to-target.sh
#                       --model d256), 70 synchronous steps over the int2 wire
#                       before int4 merges (1.12x DDP's tokens, 53x fewer
#                       bytes).
# Each rank's 8 sequences per step go through one micro-batch, so all of DDP's
# backward can overlap communication. Results (metrics.jsonl per run, the
# link's allreduce bandwidth) go to OUT; bench/across-nodes-report.py then
# writes docs/benchmarks.md and its plots (gnuplot).
#
#   bench/across-nodes.sh [--out DIR] [--rates "100mbit ..."] [--configs "ddp ..."]
#   bench/across-nodes.sh --report-only [--out DIR]     (redo the report)
#
# --steps N runs longer than the fixed STEPS, for a supplementary run in an
# --out of its own: a DDAP run that does not reach the target in STEPS steps
# may reach it later. Copy or link the DDP run into that --out first: the
# target is computed from it. Only bench/results/across-nodes reports into
# docs/; any other --out gets its report in OUT/report/.
#
# Needs root (the cluster harness) and a build (README). About an hour on
# 2 cores.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
build=${HPCT_BUILD:-$repo/build}
out=$repo/bench/results/across-nodes
readonly EVAL_EVERY=20 MERGE_EVERY=16 MERGE_DELAY=4 LR=1e-3
STEPS=400
# The data every run was measured on: the quickstart's corpus as whole files,
# its tokenizer trained on 400,000 lines (the quickstart itself now trains it
# on 100,000).
readonly DATA="--set data.tokenizer_max_lines=400000 --set data.document_starts=[]"
rates="100mbit"
readonly CHOSEN="ddp ddap-diloco-blocking+int4 ddap-diloco-blocking+sync100+int4
  ddap-diloco-blocking+sync100+int4+syncint4 ddap-diloco-blocking+sync35+int4+syncint4
  ddap-diloco-blocking+sync70+int4+syncint2"
configs="ddp ddap-average-blocking ddap-average-overlapped ddap-ties-blocking ddap-ties-overlapped
         ddap-diloco-blocking ddap-diloco-overlapped"
report_only=false
while (($#)); do
  case $1 in
    --out) out=${2:?}; shift 2 ;;
    --rates) rates=${2:?}; shift 2 ;;
    --configs) configs=${2:?}; shift 2 ;;
    --steps) STEPS=${2:?}; shift 2 ;;
    --report-only) report_only=true; shift ;;
    *) echo "usage: ${0##*/} [--out DIR] [--rates LIST] [--configs LIST] [--steps N] [--report-only]" >&2; exit 2 ;;
  esac
done
out=$(mkdir -p "$out" && cd "$out" && pwd)
[[ $configs == chosen ]] && configs=$CHOSEN
# The results in bench/results/across-nodes report into docs/; others (an
# --out of their own, such as a longer run's) beside them, in OUT/report/.
report_to=$out/report
[[ $out == "$(cd "$repo/bench/results/across-nodes" 2>/dev/null && pwd)" ]] && report_to=$repo/docs
report() { mkdir -p "$report_to" && /usr/bin/python3 "$repo/bench/across-nodes-report.py" "$out" "$report_to"; }
if $report_only; then report; exit; fi

((EUID == 0)) || { echo "${0##*/}: needs root (the SLURM cluster harness)" >&2; exit 1; }
for f in "$build/hpctrain" "$build/jobgen"; do
  [[ -x $f ]] || { echo "${0##*/}: $f missing: build first (README)" >&2; exit 1; }
done

# DDP buckets of at most 2 MiB, so backward has several to overlap: with the
# default 25 MiB cap this 21 MB model fills a 1 MiB bucket and one that is
# ready only when backward ends. The tied embedding (8 MB) is ready last
# whatever the cap: both its uses must report.
ddp_buckets="--set parallel.bucket_cap_mb=2"

reducer_settings() {  # CONFIG -> --set options
  # A DDAP configuration may carry options after "+": int8 or int4 (the merge
  # wire), syncN (N synchronous steps first), syncint8 or syncint4 (their
  # gradients' wire), fragN (N fragments merged in turn), e.g.
  # ddap-diloco-blocking+sync100+int4.
  local base=${1%%+*} options=
  [[ $1 == *+* ]] && options=${1#*+}
  case $base in
    ddp) [[ -z $options ]] || { echo "${0##*/}: ddp takes no options ($1)" >&2; exit 2; }
      echo "--set parallel.reducer=ddp --set parallel.overlap=true $ddp_buckets" ;;
    ddap-*-blocking | ddap-*-overlapped)
      local merge=${base#ddap-} mode=${base##*-}
      merge=${merge%-*}
      echo "--set parallel.reducer=ddap --set parallel.merge=$merge --set parallel.merge_every=$MERGE_EVERY" \
        "--set parallel.merge_mode=$mode --set parallel.merge_delay=$MERGE_DELAY"
      local option
      for option in ${options//+/ }; do
        case $option in
          int8 | int4 | int2) echo "--set parallel.merge_wire=$option" ;;
          syncint8 | syncint4 | syncint2) echo "--set parallel.sync_wire=${option#sync}" ;;
          sync[0-9]*) echo "--set parallel.sync_steps=${option#sync}" ;;
          frag[0-9]*) echo "--set parallel.merge_fragments=${option#frag}" ;;
          *) echo "${0##*/}: unknown option $option in $1" >&2; exit 2 ;;
        esac
      done
      ;;
    *) echo "${0##*/}: unknown configuration $1" >&2; exit 2 ;;
  esac
}
for config in $configs; do reducer_settings "$config" >/dev/null; done  # an unknown one stops here, before any run

# The data set and tokenizer, prepared once on the host (every node sees the
# same file system).
data=$out/data
# shellcheck disable=SC2086  # DATA holds separate words on purpose
"$build/hpctrain" prepare "$repo/jobs/quickstart.toml" --set "data.dir=$data" $DATA >"$out/prepare.log" 2>&1 ||
  { cat "$out/prepare.log"; exit 1; }

# What was measured: the commit, and whether the tree had changes on top
# (each run keeps its own, since --configs can rerun some runs later).
commit=$(git -C "$repo" describe --always --dirty)
SECONDS=0
printf 'steps=%s eval_every=%s merge_every=%s merge_delay=%s lr=%s\n' "$STEPS" "$EVAL_EVERY" "$MERGE_EVERY" "$MERGE_DELAY" "$LR" \
  >"$out/settings.txt"

prefix=$(mktemp -d /tmp/hpct-bench.XXXXXX)
cluster() { "$repo/tests/cluster/slurm-cluster.sh" "$@"; }
trap 'cluster down --prefix "$prefix" --purge >/dev/null 2>&1 || true' EXIT
cluster up --prefix "$prefix" --nodes 2 --cpus 2
# shellcheck disable=SC1091
source "$prefix/env"

wait_for_job() {  # JOBID -> its final state
  local state=
  while :; do
    state=$(scontrol show job "$1" 2>/dev/null | grep -o 'JobState=[A-Z_]*' | cut -d= -f2)
    case $state in COMPLETED | FAILED | CANCELLED | TIMEOUT | NODE_FAIL | OUT_OF_MEMORY | BOOT_FAIL | DEADLINE) break ;; esac
    sleep 1
  done
  echo "$state"
}

cd "$out"
for rate in $rates; do
  cluster shape --prefix "$prefix" --rate "$([[ $rate == unlimited ]] && echo off || echo "$rate")"
  mkdir -p "$rate"
  # The link as MPI sees it: allreduce busbw, 2 ranks, one per node.
  srun -N2 -n2 --ntasks-per-node=1 --cpus-per-task=1 --export=ALL,UCX_TLS=tcp,self "$build/hpctrain" doctor --min-bytes 16777216 --max-bytes 16777216 \
    >"$rate/doctor.txt" 2>&1
  for config in $configs; do
    run=$rate/$config
    rm -rf "$run"
    # shellcheck disable=SC2046,SC2086  # reducer_settings and DATA print separate words on purpose
    submitted=$("$build/jobgen" "$repo/jobs/quickstart-2node.toml" --set slurm.ntasks_per_node=1 \
      --set slurm.cpus_per_task=1 --cluster local-tcp --set "slurm.executable=$build/hpctrain" \
      --set "slurm.log_dir=$out/$rate" --set "job.name=$config" --set "job.run_dir=$out/$run" \
      --set "data.dir=$data" $DATA --set "training.steps=$STEPS" --set "optimizer.lr=$LR" --set "eval.interval=$EVAL_EVERY" \
      --set eval.samples=1000000000 --set eval.final=full --set eval.test=false --set eval.sample_tokens=0 \
      --set checkpoint.interval=0 --set checkpoint.keep_best=false --set training.micro_batch_size=8 \
      $(reducer_settings "$config") --submit)
    id=${submitted#submitted batch job }
    state=$(wait_for_job "$id")
    [[ $state == COMPLETED ]] || { cat "$out/$rate/$config-$id.out"; echo "${0##*/}: job $id ($run) ended $state" >&2; exit 1; }
    mv "$out/$rate/$config-$id.out" "$run/job.out"
    echo "$commit" >"$run/commit.txt"
    echo "$SECONDS" >"$run/duration_s.txt"
    SECONDS=0
    rm -rf "$run/checkpoints" "$run/tensorboard"  # only the metrics and the log are results
    grep -o 'training [0-9.]* s (evaluations excluded), [0-9]* tokens/s' "$run/job.out" | sed "s|^|$run: |"
  done
done
cluster shape --prefix "$prefix" --rate off
report
