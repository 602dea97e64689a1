#!/usr/bin/env bash
# tests/platform/resume-across-libtorch.sh: checkpoints across LibTorch
# versions, both ways. This machine's build (Debian 12, LibTorch 1.13) and the
# Debian 13 root's (LibTorch 2.6, tests/platform/debian13.sh) each train a
# small GPT 12 steps straight, and 6 steps then stop with a checkpoint; each
# then resumes the OTHER one's checkpoint for the last 6 steps, on the data set
# that one prepared: SentencePiece 0.1.99 (Debian 12) and 0.2.0 (Debian 13)
# train different tokenizers from the same corpus, and a checkpoint refuses
# a run whose tokenizer is not its own (the data set moves with the run).
# Both sides read one corpus (this machine's Python 3.11 sources [a-h]*.py,
# copied) under one path: inside the root, this machine's path to the work
# folder is a link to it, so both compute the same data-set fingerprint.
# Must show: both resumes start at step 6 and finish; each ends within 0.5%
# of the validation loss of the straight run it continues (the other
# LibTorch's, on the same data set). Its weights need not be bitwise that
# run's: the two libraries' kernels may round differently, so a trajectory
# may change from where it moved library on. The script prints the hashes and
# losses, so what happens is seen, not assumed. Needs root (the Debian 13 root) and a build here; the root is made
# or reused by tests/platform/debian13.sh, whose clone it builds.
set -euo pipefail
shopt -s inherit_errexit
repo=$(cd "$(dirname "$0")/../.." && pwd)
base=${HPCTRAIN_DEBIAN13:-/var/tmp/hpctrain-debian13}
host=$repo/build/hpctrain
[[ -x $host ]] || { echo "resume-across: build here first (cmake --build --preset default)" >&2; exit 1; }
work=$base/fs/root/resume-across # /root/resume-across inside the root
rm -rf "$work"
mkdir -p "$work/corpus"
cp -p /usr/lib/python3.11/[a-h]*.py "$work/corpus/"
fail() { echo "FAIL: $*"; exit 1; }

# A third of the corpus, a small vocabulary and model; two evaluations.
small=(--set "data.sources=[\"$work/corpus\"]" --set 'data.exclude=[]' --set data.vocab_size=2048 --set model.n_layer=2 --set model.d_model=64
  --set model.n_head=2 --set training.steps=12 --set training.batch_size=4 --set training.micro_batch_size=4
  --set eval.interval=6 --set eval.samples=32 --set eval.final=sample --set eval.test=false --set eval.sample_tokens=0
  --set checkpoint.interval=0 --set logging.interval=1)

# Each side: the straight run, the first half, then the other side's first half resumed.
side() {  # HPCTRAIN NAME
  local hpctrain=$1 dir=$work name=$2
  "$hpctrain" train jobs/quickstart.toml "${small[@]}" --set "data.dir=$dir/data-$name" \
    --set "job.run_dir=$dir/$name-straight" >"$dir/$name-straight.log" 2>&1
  "$hpctrain" train jobs/quickstart.toml "${small[@]}" --set "data.dir=$dir/data-$name" \
    --set "job.run_dir=$dir/$name-half" --set training.stop_after=6 >"$dir/$name-half.log" 2>&1
}
cross() {  # HPCTRAIN NAME OTHER
  local hpctrain=$1 dir=$work name=$2 other=$3
  local checkpoint
  checkpoint=$(find "$dir/$other-half" -name 'step-*6.h5' | head -1)
  [[ -n $checkpoint ]] || { echo "no step-6 checkpoint in $dir/$other-half"; return 1; }
  "$hpctrain" train jobs/quickstart.toml "${small[@]}" --set "data.dir=$dir/data-$other" \
    --set "job.run_dir=$dir/$name-from-$other" --set "checkpoint.resume=\"$checkpoint\"" >"$dir/$name-from-$other.log" 2>&1
}
declare -p small work >"$work/settings.sh"

echo "resume-across: LibTorch 1.13 (this machine): straight, first half"
(cd "$repo" && side "$host" lt113) || fail "the 1.13 runs: $(tail -n 3 "$work"/lt113-*.log)"
echo "resume-across: LibTorch 2.6 (the Debian 13 root): straight, first half, then the 1.13 checkpoint resumed"
"$repo/tests/platform/debian13.sh" "cmake --preset default >/dev/null && cmake --build --preset default >/dev/null &&
  mkdir -p $(dirname "$work") && ln -sfn /root/resume-across $work && source /root/resume-across/settings.sh &&
  $(declare -f side cross) && side build/hpctrain lt26 && cross build/hpctrain lt26 lt113" ||
  fail "the 2.6 runs: $(tail -n 3 "$work"/lt26-*.log)"
echo "resume-across: LibTorch 1.13: the 2.6 checkpoint resumed"
(cd "$repo" && cross "$host" lt113 lt26) || fail "1.13 resuming 2.6's checkpoint: $(tail -n 3 "$work/lt113-from-lt26.log")"

/usr/bin/python3 - "$work" <<'PY'
import json, re, sys
work = sys.argv[1]
def run(name):
    log = open(f"{work}/{name}.log").read()
    h = re.search(r"final weights sha256: ([0-9a-f]+)", log)
    evals = [json.loads(l) for l in open(f"{work}/{name}/metrics.jsonl")]
    evals = [r for r in evals if r["kind"] == "eval"]
    return log, h.group(1) if h else None, evals[-1]["eval_loss"] if evals else None
ok = True
print(f"{'run':<28} {'final val loss':>14}  weights sha256")
rows = {}
for name in ("lt113-straight", "lt26-straight", "lt26-from-lt113", "lt113-from-lt26"):
    log, h, loss = run(name)
    rows[name] = (h, loss)
    print(f"{name:<28} {loss:>14.5f}  {h}")
for name, own in (("lt26-from-lt113", "lt113-straight"), ("lt113-from-lt26", "lt26-straight")):
    log = open(f"{work}/{name}.log").read()
    if not re.search(r"resumed from .*step-0*6\.h5 at step 6", log):
        print(f"FAIL: {name} did not resume at step 6"); ok = False
    drift = abs(rows[name][1] - rows[own][1]) / rows[own][1]
    same = "bitwise the same as" if rows[name][0] == rows[own][0] else "not bitwise"
    print(f"{name}: resumed at step 6, final loss {100 * drift:.3f}% from {own}'s (limit 0.5%); weights {same} {own}'s")
    ok &= drift <= 0.005
print("PASS" if ok else "FAIL")
sys.exit(0 if ok else 1)
PY
