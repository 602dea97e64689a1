#!/usr/bin/env bash
# hostile-input.sh HPCTRAIN JOBGEN SOURCE_DIR DATA_DIR: every hostile case of
# docs/security.md, through the real binaries. Each must be refused cleanly
# (a non-zero exit that is no signal, and exactly one stderr line naming the
# input and the field) or handled correctly; none may crash, hang, run a
# command or delete a file. The fuzz corpora's reproducers (tests/fuzz/corpus)
# are the inputs where a file is needed.
set -uo pipefail
export LC_ALL=C  # messages may quote invalid UTF-8 from the input
hpctrain=$1 jobgen=$2 src=$3 data=$4
corpus=$src/tests/fuzz/corpus
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
exp=$src/jobs/quickstart.toml
# The files under tests/fuzz/libhdf5-crashes crash libhdf5 1.10 (Debian 12);
# HDF5 1.14 (Debian 13) refuses them itself, and hpctrain names what it could
# not open. Either way the refusal is clean; which one is expected depends on
# the libhdf5 hpctrain runs against.
hdf5=$("$hpctrain" --version | sed -n 's/^HDF5: //p')
[[ -n $hdf5 ]] || { echo "FAIL: hpctrain --version names no HDF5"; exit 1; }
if [[ $hdf5 == 1.10.* ]]; then
  sigfpe="libhdf5 crashed reading it, killed by SIGFPE"
  overread="model/tok_emb.weight fails its checksum or cannot be read"
else
  sigfpe="[^ ]+ cannot be opened"
  overread="[^ ]+ cannot be opened"
fi

fail() {
  echo "FAIL: $*"
  failures=$((failures + 1))
}

# refused REGEX CMD...: non-zero exit below 128, one stderr line matching REGEX.
refused() {
  local regex=$1
  shift
  timeout 60 "$@" >"$work/out" 2>"$work/err"
  local rc=$? lines
  lines=$(grep -c '' "$work/err")
  if ((rc == 0 || rc >= 124)); then
    fail "'${*:0:3}...' exited $rc (expected a clean refusal): $(head -c 300 "$work/err")"
  elif ((lines != 1)) || ! grep -Eq -- "$regex" "$work/err"; then
    fail "'${*:0:3}...' exited $rc; expected one stderr line matching /$regex/, got $lines: $(head -c 400 "$work/err")"
  else
    echo "ok: refused: $(head -c 200 "$work/err")"
  fi
}

# handled CMD...: exit 0 within the limit.
handled() {
  timeout 60 "$@" >"$work/out" 2>"$work/err" || fail "'${*:0:3}...' exited $?: $(head -c 300 "$work/err")"
}

# 1. Crafted checkpoints: every command that reads one refuses it, naming what is wrong.
for f in array-format-version renamed-format-version vlen-config big-endian-dataset gzip-dataset \
  unchecksummed-dataset soft-link external-link deep-groups negative-world-size; do
  file=$corpus/checkpoint/repro-$f.h5
  refused "^hpctrain: error: .*repro-$f.h5: " "$hpctrain" ckpt inspect "$file"
  timeout 60 "$hpctrain" ckpt verify "$file" >"$work/out" 2>&1
  rc=$?
  if ((rc == 0 || rc >= 124)) || ! grep -q "^BAD  .*repro-$f.h5: " "$work/out"; then
    fail "ckpt verify $f exited $rc: $(cat "$work/out")"
  fi
  refused "^hpctrain: error: .*repro-$f.h5: " "$hpctrain" eval "$file"
done
# Altered metadata (format 3): only the manifest can see it.
for f in altered-config altered-lr extra-dataset missing-dataset; do
  timeout 60 "$hpctrain" ckpt verify "$corpus/checkpoint/repro-$f.h5" >"$work/out" 2>&1
  grep -Eq "^BAD  .*: (attribute|dataset) .*(differs from|not in|missing from the file)" "$work/out" ||
    fail "ckpt verify $f: $(cat "$work/out")"
done
# An attribute the manifest does not list shows in the count (libhdf5 cannot
# list attributes safely: the file below crashed it inside H5Aiterate2).
timeout 60 "$hpctrain" ckpt verify "$corpus/checkpoint/repro-extra-attribute.h5" >"$work/out" 2>&1
grep -Eq "^BAD  .*: 15 root attributes, but the manifest lists 13 and itself" "$work/out" ||
  fail "ckpt verify extra-attribute: $(cat "$work/out")"
timeout 60 "$hpctrain" ckpt verify "$corpus/checkpoint/found-libhdf5-attribute-iterate.h5" >"$work/out" 2>&1
rc=$?
if ((rc == 0 || rc >= 124)) || ! grep -q "^BAD  .*found-libhdf5-attribute-iterate.h5: " "$work/out"; then
  fail "ckpt verify found-libhdf5-attribute-iterate exited $rc: $(head -c 400 "$work/out")"
fi
# libhdf5 1.10.8 over-reads a heap buffer on this one (docs/security.md); the
# release build must still refuse it cleanly.
refused "^hpctrain: error: .*attribute-exists-heap-overflow.h5: " "$hpctrain" ckpt inspect \
  "$src/tests/fuzz/libhdf5-crashes/attribute-exists-heap-overflow.h5"
# libhdf5 1.10.8 reads past a heap buffer of its own in H5Dread on this one
# (docs/security.md); the release build names the datasets it cannot read.
timeout 60 "$hpctrain" ckpt verify "$src/tests/fuzz/libhdf5-crashes/dataset-read-heap-overread.h5" >"$work/out" 2>&1
rc=$?
if ((rc != 1)) || ! grep -Eq "^BAD  .*dataset-read-heap-overread.h5: .*$overread" "$work/out"; then
  fail "ckpt verify dataset-read-heap-overread exited $rc: $(head -c 400 "$work/out")"
fi
# libhdf5 1.10.8 divides by zero opening this one's dataset (docs/security.md):
# checkpoints are read in a child process first, so hpctrain refuses the file
# instead of dying with SIGFPE.
fpe=$src/tests/fuzz/libhdf5-crashes/chunk-set-info-divide-by-zero.h5
refused "^hpctrain: error: .*divide-by-zero.h5: $sigfpe" "$hpctrain" ckpt inspect "$fpe"
refused "^hpctrain: error: .*divide-by-zero.h5: $sigfpe" "$hpctrain" eval "$fpe"
timeout 60 "$hpctrain" ckpt verify "$fpe" >"$work/out" 2>&1
rc=$?
if ((rc != 1)) || ! grep -Eq "^BAD  .*divide-by-zero.h5: $sigfpe" "$work/out"; then
  fail "ckpt verify divide-by-zero exited $rc: $(head -c 400 "$work/out")"
fi
# A format-2 checkpoint (no manifest) still verifies, with a warning.
handled "$hpctrain" ckpt verify "$corpus/checkpoint/seed-format2-ddp-mlp.h5"
grep -q "warning: format 2 was written before checkpoints carried a manifest" "$work/out" ||
  fail "format 2 without its warning: $(cat "$work/out")"
# Auto-resume passes over a crafted checkpoint, naming it, and starts afresh.
run=$work/run
mkdir -p "$run/checkpoints"
cp "$corpus/checkpoint/repro-array-format-version.h5" "$run/checkpoints/step-00000009.h5"
cp "$fpe" "$run/checkpoints/step-00000010.h5"
tiny=(--set "data.dir=$data" --set "job.run_dir=$run" --set training.steps=1 --set training.batch_size=2
  --set training.micro_batch_size=2 --set model.n_layer=1 --set model.d_model=32 --set eval.samples=8 --set eval.final=sample --set eval.test=false
  --set eval.sample_tokens=0 --set eval.interval=0)
handled "$hpctrain" train "$exp" "${tiny[@]}"
grep -q "skipping checkpoint .*step-00000009.h5: attribute format_version is not a single value" "$work/out" ||
  fail "auto-resume did not name the crafted checkpoint: $(tail -5 "$work/out")"
grep -Eq "skipping checkpoint .*step-00000010.h5: $sigfpe" "$work/out" ||
  fail "auto-resume did not name the checkpoint that crashes libhdf5: $(tail -5 "$work/out")"

# 2. prepare never deletes a directory it did not make.
mine=$work/mine
mkdir -p "$mine"
echo precious >"$mine/notes.txt"
refused "data.dir = $mine exists and is not a data set hpctrain prepared \(it holds 'notes.txt'\)" \
  "$hpctrain" prepare "$exp" --set "data.dir=$mine"
[[ -f $mine/notes.txt ]] || fail "prepare deleted $mine/notes.txt"
corpus_dir=$work/corpus
mkdir -p "$corpus_dir"
cp "$src"/src/data/*.cpp "$corpus_dir/"
refused "is not a data set hpctrain prepared" "$hpctrain" prepare "$exp" --set "data.sources=[\"$corpus_dir\"]" \
  --set 'data.glob="*.cpp"' --set "data.dir=$corpus_dir"
[[ $(ls "$corpus_dir" | wc -l) -gt 3 ]] || fail "prepare deleted the corpus it was pointed at"
refused "data.dir is empty" "$hpctrain" prepare "$exp" --set 'data.dir=""'
refused "not a regular file, so not a tokenizer model" "$hpctrain" prepare "$exp" --set data.tokenizer=/dev/zero \
  --set "data.dir=$work/tok"
# A 3 GB binary file is sniffed, not read whole (and not kept in memory).
big=$work/big
mkdir -p "$big"
truncate -s 3G "$big/huge.txt"
# The peak resident size (kB) of what it runs, after its output.
peak_rss() {
  python3 -c 'import resource, subprocess, sys
code = subprocess.run(sys.argv[2:]).returncode
open(sys.argv[1], "w").write(str(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss))' "$@"
}
peak_rss "$work/rss" timeout 60 "$hpctrain" prepare "$exp" --set "data.sources=[\"$big\"]" \
  --set 'data.glob="*.txt"' --set data.on_bad_input=error --set "data.dir=$work/bigdata" >"$work/out" 2>"$work/err"
grep -q "huge.txt: binary file (NUL byte at offset 0)" "$work/err" || fail "3 GB binary: $(cat "$work/err")"
(($(cat "$work/rss") < 500000)) || fail "3 GB binary file: $(cat "$work/rss") kB resident"
compgen -G "$work/*.tmp-*" >/dev/null && fail "temporaries left next to the data set: $(ls "$work")"

# 3. Run-time values cannot run commands; environment numbers never meet arithmetic unchecked.
for value in '${HPCTRAIN_A@P}' '${a[$HPCTRAIN_A]}' '${V:=$(id)}' '${SLURM_CPUS_PER_TASK/' '$$' '${!X}'; do
  refused "slurm.env HPCTRAIN_B: .*a run-time value may hold literal text, \\\$NAME and \\\$\{NAME\}" \
    "$jobgen" "$exp" --set "slurm.env={HPCTRAIN_A='\$(touch $work/pwned)', HPCTRAIN_B={runtime='$value'}}"
done
"$jobgen" "$exp" --set "job.run_dir=$work/jobrun" --set "slurm.log_dir=$work/logs" >"$work/job.sh" ||
  fail "jobgen on the quickstart"
stubs=$work/stubs
mkdir -p "$stubs"
printf '#!/bin/sh\nexit 75\n' >"$stubs/srun"
printf '#!/bin/sh\necho "scontrol $*" >>%s/scontrol.log\n' "$work" >"$stubs/scontrol"
chmod +x "$stubs/srun" "$stubs/scontrol"
for variable in SLURM_RESTART_COUNT HPCTRAIN_RESUBMITS; do
  env PATH=$stubs:/usr/bin:/bin SLURM_JOB_ID=77 "$variable=PATH[\$(touch $work/pwned)]" \
    bash "$work/job.sh" >"$work/out" 2>&1 && fail "$variable: a bad count did not stop the script"
  [[ -e $work/pwned ]] && fail "$variable ran a command"
  grep -q "SLURM_RESTART_COUNT or HPCTRAIN_RESUBMITS is not a count" "$work/out" ||
    fail "bad restart count: $(cat "$work/out")"
  [[ -e $work/scontrol.log ]] && fail "requeued on a bad restart count"
done

# 5. Nesting: refused before any parser recurses.
refused "^hpctrain: error: .*repro-deep-table-header:1:.*nest deeper than 32$" \
  "$hpctrain" prepare "$corpus/experiment/repro-deep-table-header"
refused "^jobgen: error: .*repro-deep-dotted-key:1:.*nest deeper than 32$" "$jobgen" script "$corpus/experiment/repro-deep-dotted-key"
printf '%*s' 100000 '' | tr ' ' '[' >"$work/deep.json"
refused "^jobgen: error: .*deep.json: byte 64: nested deeper than 64$" "$jobgen" render "$src/templates/header.mustache" \
  --data "$work/deep.json"

# 6. meta.json sizes near 2^63 and shards outside the data set. Each claims
# the fingerprint of the experiment's data set (anyone can compute it), so
# training reads it instead of preparing the data set again.
fingerprint=$(grep -o '"fingerprint": "[0-9a-f]*"' "$data/meta.json" | cut -d'"' -f4)
for case in "9223372036854775808:2:train-000.bin:tokens is 9223372036854775808, not an integer" \
  "4611686018427387904:4:train-000.bin:tokens is 4611686018427387904, not an integer" \
  "10:2:../meta.json:shard name '../meta.json' is not a plain file name"; do
  IFS=: read -r tokens bytes file message <<<"$case"
  crafted=$work/crafted-$tokens
  mkdir -p "$crafted"
  cp "$data/tokenizer.model" "$crafted/"
  printf '{"format_version": 2, "token_bytes": %s, "vocab_size": 8192, "tokenizer_hash": "x", "stats": {}, "fingerprint": "%s", "splits": {"train": {"shards": [{"file": "%s", "tokens": %s}]}, "val": {"shards": []}}}' \
    "$bytes" "$fingerprint" "$file" "$tokens" >"$crafted/meta.json"
  : >"$crafted/train-000.bin"
  refused "^hpctrain: error: $crafted/meta.json: $message" "$hpctrain" train "$exp" "${tiny[@]}" --set "data.dir=$crafted"
done

# 7. Hostlists: the end of the number range, and output bounded by bytes.
handled "$hpctrain" hostnames 'n[18446744073709551614-18446744073709551615]'
[[ $(cat "$work/out") == $'n18446744073709551614\nn18446744073709551615' ]] || fail "2^64-1: $(cat "$work/out")"
refused "range '0-18446744073709551615' has more than 65536 hosts" "$hpctrain" hostnames 'n[0-18446744073709551615]'
refused "its host names would take more than 64 MiB" "$hpctrain" hostnames "$(printf 'x%.0s' $(seq 4000))[0-65535]"
refused "more than 1048576 hosts" "$hpctrain" hostnames "a$(printf '[1-2]%.0s' $(seq 30))"

# 8. Verification and rendering end quickly however the input multiplies.
tpl=$work/tpl
mkdir -p "$tpl"
for i in $(seq 0 39); do printf '{{>p%d}}{{>p%d}}' $((i + 1)) $((i + 1)) >"$tpl/p$i.mustache"; done
printf '{{>p0}}\n' >"$tpl/chain.mustache"
refused "rendering takes more than .* steps \(sections over large data, or partials that include others several times\)" \
  "$jobgen" "$exp" --template "$tpl/chain.mustache"
printf '{{!c}}%.0s' $(seq 100000) >"$tpl/comments.mustache"
echo '{}' >"$work/empty.json"
handled "$jobgen" render "$tpl/comments.mustache" --data "$work/empty.json"
# Sections 96 deep over a list of 30,000 items: 2.9 million nodes, but each
# name looks through up to 96 contexts (found by the mustache_shapes harness).
{ printf '{{#a}}%.0s' $(seq 96); printf x; printf '{{/a}}%.0s' $(seq 96); } >"$tpl/deep-over-list.mustache"
{ printf '{"a": ['; printf '{"a": 1}, %.0s' $(seq 29999); printf '{"a": 1}]}'; } >"$work/list.json"
refused "rendering takes more than .* steps" "$jobgen" render "$tpl/deep-over-list.mustache" --data "$work/list.json"

# 9. A sweep whose run count overflows.
sweep=$work/sweep.toml
cp "$exp" "$sweep"
echo '[sweep.parameters]' >>"$sweep"
for i in $(seq 1 64); do echo "\"eval.x$i\" = [1, 2]"; done >>"$sweep"
refused "sweep.toml:[0-9]+:[0-9]+: \[sweep\] makes more than 100000 runs" "$jobgen" "$sweep"

# 10. Silent failures and leftovers.
refused "/no/such/dir/m.json: cannot write the sweep manifest" "$jobgen" "$exp" --manifest /no/such/dir/m.json
refused "$tpl/: not a regular file, so not a template" "$jobgen" "$exp" --template "$tpl/"
refused "/dev/zero: not a regular file, so not a template" "$jobgen" render /dev/zero --data "$work/empty.json"
# A number beyond double's range is no syntax error: nlohmann's out_of_range
# escaped unnamed (found by the mustache harness).
echo '{"a": 5E5555}' >"$work/overflow.json"
echo '{{a}}' >"$tpl/a.mustache"
refused "^jobgen: error: $work/overflow.json: .*number overflow" "$jobgen" render "$tpl/a.mustache" --data "$work/overflow.json"
mkdir -p "$work/outdir"
refused "$work/outdir: is a directory; name the .safetensors file" "$hpctrain" ckpt export \
  "$corpus/checkpoint/seed-ddp-mlp.h5" --out "$work/outdir"
[[ -z $(ls "$work/outdir") ]] || fail "ckpt export left $(ls "$work/outdir")"
compgen -G "$work/*outdir.tmp-*" >/dev/null && fail "ckpt export left a temporary"
TMPDIR=$work/no-such-tmp refused "cannot create a temporary file for sbatch in $work/no-such-tmp \(TMPDIR\)" \
  "$jobgen" "$exp" --set "slurm.log_dir=$work/submitlogs" --submit
[[ -e $work/submitlogs ]] && fail "--submit created the log directory before failing"
# An sbatch that refuses the job: the log directories --submit made for it go
# again, and one that was there before stays.
mkdir -p "$work/fakebin" "$work/kept"
printf '#!/bin/sh\necho "sbatch: error: invalid partition specified: nosuch"\nexit 1\n' >"$work/fakebin/sbatch"
chmod +x "$work/fakebin/sbatch"
PATH=$work/fakebin:$PATH refused "sbatch refused the script: sbatch: error: invalid partition" \
  "$jobgen" "$exp" --set "slurm.log_dir=$work/made/logs" --submit
[[ -e $work/made ]] && fail "--submit left the log directories of a job sbatch refused"
PATH=$work/fakebin:$PATH refused "sbatch refused the script" "$jobgen" "$exp" --set "slurm.log_dir=$work/kept/logs" --submit
[[ -d $work/kept && ! -e $work/kept/logs ]] || fail "--submit removed a directory it did not make, or left logs/"
# An sbatch that warns first and queues the job (exit 0, the id last): submitted, its log directory kept.
printf '#!/bin/sh\necho "sbatch: Warning: the partition is busy"\necho 4242\n' >"$work/fakebin/sbatch"
said=$(PATH=$work/fakebin:$PATH "$jobgen" "$exp" --set "slurm.log_dir=$work/queued/logs" --submit 2>&1) ||
  fail "an sbatch that warned and queued: $said"
[[ $said == "submitted batch job 4242" && -d $work/queued/logs ]] || fail "a warning before the id: '$said'"

# 11. --set and environment errors name their source.
refused "^hpctrain: error: --set nosuch.key=1: unknown section \[nosuch\]$" "$hpctrain" prepare "$exp" --set nosuch.key=1
refused "^hpctrain: error: --set data.dir=.*: neither a TOML value nor a string" "$hpctrain" prepare "$exp" \
  --set "$(printf 'data.dir=\xff\xfe')"
refused "^hpctrain: error: --set model.d_model=10, --set model.n_head=3: model.d_model 10 is not a multiple of model.n_head 3$" \
  "$hpctrain" prepare "$exp" --set model.d_model=10 --set model.n_head=3
refused "^hpctrain: error: --set training.steps=10.*: the value is more than one TOML value" "$hpctrain" prepare "$exp" \
  --set "$(printf 'training.steps=10\nc = 2')"
refused "^hpctrain: error: SLURM_TASKS_PER_NODE adds up to more than 2147483647 tasks$" env SLURM_JOB_ID=1 \
  SLURM_JOB_NODELIST=a,b SLURM_TASKS_PER_NODE=2147483647,1 "$hpctrain" doctor --no-bandwidth
refused "^hpctrain: error: --temperature: must be a number in \[1e-06, 100\]" "$hpctrain" generate "$corpus/checkpoint/seed-ddp-mlp.h5" \
  --temperature nan

((failures == 0)) || { echo "$failures failure(s)"; exit 1; }
echo "every hostile input refused or handled"
