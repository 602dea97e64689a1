#!/usr/bin/env bash
# plan-reducers.sh MPIEXEC HPCTRAIN EXPERIMENT: `hpctrain plan` on 2 ranks
# measures a step without communication, DDP's step and an allreduce of the
# model, states DDP's communication share and DDAP's step for H = 4, 16, 64
# and the experiment's own H, and ends with a verdict that follows from its
# own figures (DDAP only where it runs above 1.5x DDP's tokens/s), with the
# bytes each rank sends (DDP's allreduce, the merge through the experiment's
# wire, per step for each H). It leaves nothing in the working directory or
# TMPDIR. Then 4 ranks with a batch of 2: DDP trains that (2 ranks stand in),
# so plan must measure it too; that experiment is DDAP with a synchronous
# start over the int4 wire, streamed merges and the int8 wire, which plan's
# DDP step must leave out.
set -euo pipefail
mpiexec=$1 hpctrain=$2 experiment=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
mkdir tmp
TMPDIR=$work/tmp "$mpiexec" -n 2 "$hpctrain" plan "$experiment" --steps 2 --set model.n_layer=1 --set model.d_model=64 \
  --set training.batch_size=4 --set parallel.merge_every=8 >out 2>&1 || { cat out; exit 1; }
cat out
/usr/bin/python3 - out <<'PY'
import re, sys
text = open(sys.argv[1]).read()
def number(pattern):
    m = re.search(pattern, text)
    assert m, f"no match for {pattern!r}"
    return float(m.group(1))
compute = number(r"step without communication \(a DDAP local step\) +([0-9.]+) ms")
ddp = number(r"DDP step, as the experiment sets it +([0-9.]+) ms")
share = number(r"communication adds [0-9.]+ ms, ([0-9.]+)% of the step")
allreduce = number(r"one allreduce of the model \(MPI\) +([0-9.]+) ms")
assert compute > 0 and ddp > 0 and allreduce > 0 and 0 <= share <= 100, (compute, ddp, share, allreduce)
rows = re.findall(r"H = (\d+) +([0-9.]+) ms: ([0-9.]+)x DDP's tokens/s", text)
assert [int(h) for h, _, _ in rows] == [4, 8, 16, 64], rows
assert "(parallel.merge_every)" in text.splitlines()[[i for i, l in enumerate(text.splitlines()) if "H = 8 " in l][0]]
# fp32 on 2 ranks: a merge sends what DDP's allreduce does, so H steps send H x fewer.
ddp_mb = number(r"of the step; ([0-9.]+) MB sent by each rank")
merge_mb = number(r"one merge of the model, fp32 wire \(MPI\) +[0-9.]+ ms, ([0-9.]+) MB sent by each rank")
assert ddp_mb > 0 and abs(merge_mb - ddp_mb) <= 0.011, (ddp_mb, merge_mb)
fewer = [float(x) for x in re.findall(r"MB sent per step \(([0-9.]+)x fewer\)", text)]
assert fewer == [4, 8, 16, 64], fewer
best = max(float(x) for _, _, x in rows)
verdict = "DDAP should win" if best > 1.5 else "Use DDP"
assert verdict in text, f"best {best}x, expected '{verdict}'"
print(f"ok: DDP's share {share}%, DDAP at most {best}x DDP's tokens/s, verdict '{verdict}'")
PY
[[ -z $(ls -A tmp) ]] || { echo "FAIL: plan left $(ls -A tmp) in TMPDIR"; exit 1; }
[[ $(ls -A) == $'out\ntmp' ]] || { echo "FAIL: plan left $(ls -A) in the working directory"; exit 1; }
TMPDIR=$work/tmp "$mpiexec" -n 4 "$hpctrain" plan "$experiment" --steps 1 --set model.n_layer=1 --set model.d_model=64 \
  --set training.batch_size=2 --set parallel.reducer=ddap --set parallel.sync_steps=2 --set parallel.merge_wire=int8 \
  --set parallel.sync_wire=int4 --set parallel.merge_fragments=2 \
  >small 2>&1 || { cat small; echo "FAIL: plan refused 2 samples over 4 ranks"; exit 1; }
grep -q "^plan: DDAP needs about" small || { cat small; echo "FAIL: no verdict for 2 samples over 4 ranks"; exit 1; }
# int8: 3.9x fewer bytes a merge than fp32, so H = 16 sends about 60x fewer than DDP.
grep -q "one merge of the model, int8 wire" small && grep -Eq "H = 16 .*\((5[5-9]|6[0-4])x fewer\)" small ||
  { cat small; echo "FAIL: the int8 wire's bytes"; exit 1; }
[[ -z $(ls -A tmp) ]] || { echo "FAIL: plan left $(ls -A tmp) in TMPDIR"; exit 1; }
echo "ok: plan measures 2 samples over 4 ranks and leaves nothing behind"
