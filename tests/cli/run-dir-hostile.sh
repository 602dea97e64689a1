#!/usr/bin/env bash
# run-dir-hostile.sh HPCTRAIN JOBGEN SOURCE_DIR DATA_DIR: what others who can
# write to a run's directories, or a careless colleague, can do to hpctrain
# and jobgen (docs/security.md, "A shared project directory"), through the real
# binaries. None of it may delete or overwrite a file hpctrain did not create,
# hang, or print a control byte from its input; each case is either handled
# correctly or refused cleanly (a non-zero exit that is no signal and no
# timeout, naming the file). Every case runs and reports; the script fails if
# any did.
set -uo pipefail
export LC_ALL=C
hpctrain=$(readlink -f "$1") jobgen=$(readlink -f "$2") src=$(readlink -f "$3") data=$(readlink -f "$4")
exp=$src/jobs/quickstart.toml
work=$(mktemp -d)
sleeper=
trap '[[ -n $sleeper ]] && kill "$sleeper" 2>/dev/null; rm -rf "$work"' EXIT
cd "$work" || exit 1
failures=0
fail() {
  echo "FAIL: $*"
  failures=$((failures + 1))
}
ok() { echo "ok: $*"; }
# ok_unless_failed SINCE WHAT: "ok" when no check failed since the count SINCE.
ok_unless_failed() { ((failures == $1)) && ok "$2"; }
tiny=(--set "data.dir=$data" --set training.batch_size=2 --set training.micro_batch_size=2 --set model.n_layer=1
  --set model.d_model=32 --set eval.samples=8 --set eval.final=sample --set eval.test=false --set eval.sample_tokens=0
  --set eval.interval=0 --set logging.interval=1 --set checkpoint.interval=2 --set checkpoint.keep=0)
# train RUN STEPS [--set ...]: a tiny run, output in RUN.out; its exit status.
train() {
  local run=$1 steps=$2
  shift 2
  timeout 120 "$hpctrain" train "$exp" "${tiny[@]}" --set "job.run_dir=$run" --set "training.steps=$steps" "$@" \
    >"$run.out" 2>&1
}
# A clean refusal: exit status from 1 to 123, and stderr's last line names `regex`.
clean_refusal() {
  local rc=$1 err=$2 regex=$3 what=$4
  if ((rc == 0 || rc >= 124)); then
    fail "$what: exit $rc, expected a clean refusal: $(tail -c 300 "$err")"
  elif ! tail -1 "$err" | grep -Eq -- "$regex"; then
    fail "$what: exit $rc, the last line does not match /$regex/: $(tail -c 300 "$err")"
  else
    ok "$what refused: $(tail -1 "$err" | head -c 200)"
  fi
}
# Runs a command that plants a link at NAME.tmp-PID, where PID is the pid the
# command then runs with (exec keeps it): hpctrain's temporaries are named so.
with_planted_temporary() {
  local target=$1 name=$2
  shift 2
  timeout 120 bash -c 'ln -s "$0" "$1.tmp-$$" && exec "${@:2}"' "$target" "$name" "$@"
}
# victim NAME: a file of someone else's, a new one for each case; its path.
victim() {
  echo precious >"$work/victim-$1"
  echo "$work/victim-$1"
}
intact() { [[ $(cat "$work/victim-$1") == precious ]]; }
newest() { find "$(readlink -f "$1")/checkpoints" -maxdepth 1 -name 'step-*.h5' -type f | sort | tail -1; }

# 1. Writers never follow a link into a file hpctrain did not create.
mkdir -p r1/checkpoints
# checkpoint.resume = never: an auto-resume would clear the link as a dead writer's temporary first.
with_planted_temporary "$(victim temporary)" "$work/r1/checkpoints/step-00000002.h5" "$hpctrain" train "$exp" "${tiny[@]}" \
  --set "job.run_dir=$work/r1" --set training.steps=2 --set checkpoint.resume=never >r1.out 2>r1.err
rc=$?
intact temporary || fail "a checkpoint write truncated the file its temporary's link named"
clean_refusal $rc r1.err "step-00000002.h5.tmp-[0-9]+: cannot create it: a symbolic link stands there" \
  "a link planted as a checkpoint's temporary"
since=$failures
mkdir -p victim-dir r1s/checkpoints
echo precious >victim-dir/rank-00000.h5
ln -s "$work/victim-dir" r1s/checkpoints/step-00000002.shards
train "$work/r1s" 2 --set checkpoint.sharded=true || fail "sharded run beside a linked shard directory: $(tail -3 r1s.out)"
[[ $(cat victim-dir/rank-00000.h5) == precious ]] || fail "a shard was written through a linked shard directory"
[[ -L $(find r1s/checkpoints -path '*superseded-*' -name step-00000002.shards) ]] ||
  fail "the planted link was not set aside: $(ls -R r1s/checkpoints)"
"$hpctrain" ckpt verify "$work/r1s" >/dev/null || fail "the sharded checkpoint beside the planted link does not verify"
ok_unless_failed "$since" "shards are never written through a linked shard directory"

# 2. ckpt export replaces nothing but an earlier export.
train "$work/r2" 2 || fail "run r2: $(tail -3 r2.out)"
ckpt=$(newest r2)
cp -r r2 r2x
timeout 60 "$hpctrain" ckpt export r2x --out "$(newest r2x)" >out 2>err
clean_refusal $? err "step-00000002.h5: a file stands there, not an earlier safetensors export" "--out naming the checkpoint"
"$hpctrain" ckpt verify "$(newest r2x)" >/dev/null || fail "ckpt export --out CHECKPOINT destroyed the checkpoint"
if mknod "$work/device" c 1 3 2>/dev/null; then
  timeout 60 "$hpctrain" ckpt export r2 --out "$work/device" >out 2>err
  clean_refusal $? err "device: a character device stands there" "--out naming a character device"
  [[ -c $work/device ]] || fail "ckpt export replaced a character device with a regular file"
else
  echo "skipped: --out naming a character device (mknod needs root); not counted as passing"
fi
mkfifo "$work/fifo.safetensors"
timeout 60 "$hpctrain" ckpt export r2 --out "$work/fifo.safetensors" >out 2>err
clean_refusal $? err "fifo.safetensors: a FIFO stands there" "--out naming a FIFO"
ln -s "$(victim out-link)" "$work/link.safetensors"
timeout 60 "$hpctrain" ckpt export r2 --out "$work/link.safetensors" >out 2>err
clean_refusal $? err "link.safetensors: a symbolic link stands there" "--out naming a link"
[[ -L $work/link.safetensors ]] && intact out-link || fail "ckpt export replaced a link"
timeout 60 "$hpctrain" ckpt export r2 --out '' >out 2>err
clean_refusal $? err "ckpt export --out: an empty path" "--out ''"
ls -A "$work" | grep -q '^\.tmp-' && fail "--out '' left a temporary in the working directory: $(ls -A | grep '^\.tmp-')"
with_planted_temporary "$(victim export-temporary)" "$work/w.safetensors" "$hpctrain" ckpt export r2 --out "$work/w.safetensors" \
  >out 2>err
clean_refusal $? err "w.safetensors.tmp-[0-9]+: cannot create the temporary export: .*a symbolic link stands there" \
  "a link planted as the export's temporary"
intact export-temporary || fail "ckpt export wrote through a link planted as its temporary"
since=$failures
for i in 1 2; do
  timeout 60 "$hpctrain" ckpt export r2 --out "$work/w2.safetensors" >out 2>err || fail "export $i to w2: $(cat err)"
done
ok_unless_failed "$since" "a second export replaces the first"

# 3. Pruning and cleanup delete only what hpctrain wrote, never the file just written.
since=$failures
mkdir -p r3a/checkpoints
echo "unreadable" >r3a/checkpoints/step-99999999.h5
train "$work/r3a" 4 --set checkpoint.keep=1 || fail "run beside an unreadable step-99999999.h5: $(tail -3 r3a.out)"
[[ $(newest r3a) == $work/r3a/checkpoints/step-00000004.h5 ]] ||
  fail "keep = 1 beside an unreadable newer file: the run's checkpoints are $(ls r3a/checkpoints)"
grep -rqx unreadable r3a/checkpoints || fail "the unreadable file was deleted"
ok_unless_failed "$since" "an unreadable newer file neither costs the run its checkpoints nor is deleted"
since=$failures
# A rollback: resume from step 2 of a run that reached step 6. Its metrics of
# steps 3 to 6 are dropped through a temporary: a link planted under the
# name it once had must not be written through.
train "$work/r3b" 6 || fail "run r3b: $(tail -3 r3b.out)"
ln -s "$(victim metrics)" r3b/metrics.jsonl.tmp
train "$work/r3b" 4 --set checkpoint.keep=1 --set "checkpoint.resume=$work/r3b/checkpoints/step-00000002.h5" ||
  fail "rollback to step 2: $(tail -3 r3b.out)"
intact metrics || fail "dropping the metrics after step 2 wrote through metrics.jsonl.tmp's link"
[[ $(newest r3b) == $work/r3b/checkpoints/step-00000004.h5 ]] ||
  fail "after a rollback to step 2 and 2 more steps, the run's newest checkpoint is $(newest r3b), not step 4"
"$hpctrain" ckpt inspect r3b >out 2>&1 && grep -q "^step  *4$" out || fail "ckpt inspect after the rollback: $(head -3 out)"
compgen -G "r3b/checkpoints/superseded-from-step-2-*/step-00000006.h5" >/dev/null ||
  fail "the abandoned branch's step 6 was not kept aside: $(ls -R r3b/checkpoints)"
grep -q "moved step-00000004.h5, step-00000006.h5 into .*superseded-from-step-2-" r3b.out ||
  fail "the rollback did not say what it set aside: $(grep -i superseded r3b.out)"
ok_unless_failed "$since" "a rollback keeps its own checkpoints and sets the abandoned branch aside"
since=$failures
# A user's file named like an older checkpoint, a backup temporary, and the
# temporary of a process that still runs.
train "$work/r3c" 2 --set checkpoint.keep=1 || fail "run r3c: $(tail -3 r3c.out)"
echo "my notes" >r3c/checkpoints/step-00000001.h5
echo "backup" >r3c/checkpoints/step-00000003.h5.tmp-backup
sleep 600 &
sleeper=$!
echo "in progress" >"r3c/checkpoints/step-00000003.h5.tmp-$sleeper"
train "$work/r3c" 6 --set checkpoint.keep=1 || fail "run r3c continued: $(tail -3 r3c.out)"
[[ $(cat r3c/checkpoints/step-00000001.h5 2>/dev/null) == "my notes" ]] || fail "pruning deleted a user's step-00000001.h5"
grep -q "step-00000001.h5: not a checkpoint hpctrain wrote for step 1 (a regular file.*left alone" r3c.out ||
  fail "pruning did not name the file it left alone"
[[ -e r3c/checkpoints/step-00000003.h5.tmp-backup ]] || fail "cleanup deleted step-00000003.h5.tmp-backup"
[[ -e r3c/checkpoints/step-00000003.h5.tmp-$sleeper ]] || fail "cleanup deleted the temporary of a running process"
[[ $(newest r3c) == $work/r3c/checkpoints/step-00000006.h5 ]] || fail "r3c's newest: $(ls r3c/checkpoints)"
kill "$sleeper"
sleeper=
ok_unless_failed "$since" "pruning and cleanup left the user's files and a live writer's temporary alone"

# The run's own files: a link as its log, a FIFO as its metrics, a
# checkpoints/ that is someone else's link.
mkdir -p r3d/logs r3e
ln -s "$(victim log)" r3d/logs/rank-0.log
train "$work/r3d" 2 2>r3d.err
clean_refusal $? r3d.out "rank-0.log: cannot open the log to append: a symbolic link stands there" "a link as the rank's log"
intact log || fail "the rank's log was appended through a link"
mkfifo r3e/metrics.jsonl
train "$work/r3e" 2
clean_refusal $? r3e.out "metrics.jsonl: not a regular file, so not a metrics file" "a FIFO as metrics.jsonl"
if [[ $(id -u) == 0 ]] && id nobody >/dev/null 2>&1; then
  mkdir -p r3f elsewhere
  ln -s "$work/elsewhere" r3f/checkpoints
  chown -h nobody r3f/checkpoints
  train "$work/r3f" 2
  clean_refusal $? r3f.out "checkpoints: a symbolic link made by another user" "checkpoints/ linked by another user"
  [[ -z $(ls elsewhere) ]] || fail "checkpoints were written through another user's link: $(ls elsewhere)"
else
  echo "skipped: checkpoints/ linked by another user (needs root to make one); not counted as passing"
fi

# 4. SIGUSR1 outside the training loop: exit 75 at once, never a hang.
# signal_after SECONDS|/REGEX/ OUT ERR CMD...: runs CMD, sends SIGUSR1 after the
# delay or once OUT matches REGEX; its exit status, or 124 when it hung.
signal_after() {
  local when=$1 out=$2 err=$3 pid rc
  shift 3
  "$@" >"$out" 2>"$err" &
  pid=$!
  if [[ $when == /* ]]; then
    for _ in $(seq 1 600); do grep -Eq "${when:1:-1}" "$out" "$err" 2>/dev/null && break; sleep 0.05; done
  else
    sleep "$when"
  fi
  kill -USR1 "$pid"
  for _ in $(seq 1 300); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  if kill -0 "$pid" 2>/dev/null; then
    kill -9 "$pid"
    wait "$pid" 2>/dev/null
    return 124
  fi
  wait "$pid"
}
expect_75() {
  local rc=$1 err=$2 what=$3
  if ((rc == 75)) && grep -q "SIGUSR1 received outside a training loop (nothing to checkpoint): exit 75" "$err"; then
    ok "$what: exit 75"
  else
    fail "$what: exit $rc ($( ((rc == 124)) && echo "hung 30 s after the signal")): $(tail -c 300 "$err")"
  fi
}
signal_after "/not prepared yet/" r4a.out r4a.err "$hpctrain" train "$exp" --set "data.dir=$work/fresh-data" \
  --set "job.run_dir=$work/r4a"
expect_75 $? r4a.err "SIGUSR1 while the data set is prepared"
# The quickstart's model: its whole validation split takes seconds to score.
timeout 120 "$hpctrain" train "$exp" --set "data.dir=$data" --set "job.run_dir=$work/r4" --set training.steps=1 \
  --set training.batch_size=2 --set training.micro_batch_size=2 --set eval.samples=8 --set eval.final=sample \
  --set eval.test=false --set eval.sample_tokens=0 >r4.out 2>&1 || fail "run r4: $(tail -3 r4.out)"
signal_after 2 r4b.out r4b.err "$hpctrain" eval "$work/r4"
expect_75 $? r4b.err "SIGUSR1 during eval"
signal_after 2 r4c.out r4c.err "$hpctrain" generate "$work/r4" --tokens 200000
expect_75 $? r4c.err "SIGUSR1 during generate"

# 5. SIGTERM again and again until the process has gone: still exit 75.
"$hpctrain" train "$exp" "${tiny[@]}" --set "job.run_dir=$work/r5" --set training.steps=100000 \
  --set checkpoint.interval=0 >r5.out 2>&1 &
pid=$!
for _ in $(seq 1 600); do grep -q '"step":5,' r5/metrics.jsonl 2>/dev/null && break; sleep 0.05; done
while kill -TERM "$pid" 2>/dev/null; do sleep 0.005; done
wait "$pid"
rc=$?
((rc == 75)) && ok "SIGTERM sent every 5 ms until the exit: exit 75" ||
  fail "SIGTERM sent every 5 ms until the exit: exit $rc, not 75: $(tail -3 r5.out)"
"$hpctrain" ckpt verify r5 >/dev/null || fail "the checkpoint of the SIGTERM-flooded run does not verify"

# 6. The data set must be the one the checkpoint and the experiment name.
abc=(--set 'data.glob="[a-c]*.py"' --set data.vocab_size=2048 --set data.tokenizer_max_lines=20000)
timeout 120 "$hpctrain" prepare "$exp" --set "data.dir=$work/d6" "${abc[@]}" >d6.out 2>&1 || fail "prepare d6: $(tail -3 d6.out)"
train "$work/r6" 1 --set "data.dir=$work/d6" "${abc[@]}" || fail "run r6: $(tail -3 r6.out)"
timeout 120 "$hpctrain" prepare "$exp" --set "data.dir=$work/d6" --set 'data.glob="[d-f]*.py"' \
  --set data.vocab_size=2048 --set data.tokenizer_max_lines=20000 >d6b.out 2>&1 || fail "prepare d6 again: $(tail -3 d6b.out)"
timeout 60 "$hpctrain" eval r6 >out 2>err
clean_refusal $? err "was trained with the tokenizer of sha256 [0-9a-f]+, and .*d6/tokenizer.model \(data.dir\) is another" \
  "eval after data.dir was prepared again"
timeout 60 "$hpctrain" generate r6 --tokens 4 >out 2>err
clean_refusal $? err "was trained with the tokenizer of sha256" "generate after data.dir was prepared again"
train "$work/r6b" 1 --set "data.dir=$work/d6" "${abc[@]}"
clean_refusal $? r6b.out "data.dir = $work/d6 was prepared from other \[data\] settings or sources than .*quickstart.toml names" \
  "a run whose [data] differs from the prepared data set"

# 7. A FIFO where a file is read: refused, never waited on.
mkdir -p fifo-data
mkfifo fifo-data/meta.json
timeout 30 "$hpctrain" prepare "$exp" --set "data.dir=$work/fifo-data" >out 2>err
clean_refusal $? err "meta.json: not a regular file, so not a meta.json" "prepare with a FIFO as meta.json"
timeout 30 "$hpctrain" train "$exp" "${tiny[@]}" --set "data.dir=$work/fifo-data" --set "job.run_dir=$work/r7" >out 2>err
clean_refusal $? err "meta.json: not a regular file, so not a meta.json" "train with a FIFO as meta.json"
mkdir -p js
mkfifo js/metrics.jsonl js/job.log
printf '{"event":"start","job_id":"local","log":"%s/js/job.log"}\nnot a record\n' "$work" >js/jobs.jsonl
timeout 30 "$jobgen" status js >out 2>err
rc=$?
((rc < 124)) && grep -q "metrics.jsonl: not a regular file" err && ok "jobgen status with a FIFO as metrics.jsonl" ||
  fail "jobgen status with a FIFO as metrics.jsonl: exit $rc: $(cat err)"
timeout 30 "$jobgen" logs js >out 2>err
rc=$?
((rc < 124)) && grep -q "job.log: not a regular file, so not a log" err && ok "jobgen logs with a FIFO as the log" ||
  fail "jobgen logs with a FIFO as the log: exit $rc: $(cat err)"
grep -q "jobs.jsonl:2: not a run record" err && ok "jobgen logs names an unreadable record line" ||
  fail "jobgen logs skipped an unreadable record line silently: $(cat err)"

# 8. Text from files reaches the terminal escaped: no C0 or C1 control, no bidi override.
has_controls() { LC_ALL=C grep -qP '[\x00-\x08\x0b-\x1f\x7f]|\xc2[\x80-\x9f]|\xe2\x80[\xa8-\xae]|\xe2\x81[\xa6-\xa9]' "$@"; }
mkdir -p js8
printf '{"event":"start","job_id":"local"}\n{"event":"end","job_id":"local","outcome":"\\u001b]0;owned\\u0007\\u009b2J\\u202eevil"}\n' \
  >js8/jobs.jsonl
printf '{"kind":"train","step":1e308,"steps_total":-1e300,"loss":1.5,"eta_s":1e300}\n' >js8/metrics.jsonl
timeout 30 "$jobgen" status js8 >out 2>err || fail "jobgen status js8: $(cat err)"
has_controls out && fail "jobgen status printed control characters from the run record: $(od -c out | head -5)"
grep -q -- "-9223372036854775808" out && fail "jobgen status printed 1e308 as an integer: $(cat out)"
grep -q 'x1b\]0;owned\\x07\\u009b2J\\u202eevil' out && ok "jobgen status escapes a record's outcome" ||
  fail "jobgen status: $(cat out)"
cp "$ckpt" hostile.h5
/usr/bin/python3 - "$work/hostile.h5" <<'EOF'
import sys, h5py, numpy
with h5py.File(sys.argv[1], "r+") as f:
    text = "\x1b]0;owned\x07\u009b2J\u202e".encode()
    del f.attrs["git_commit"]
    f.attrs.create("git_commit", numpy.bytes_(text), dtype=h5py.string_dtype("ascii", len(text)))
EOF
timeout 30 "$hpctrain" ckpt inspect hostile.h5 >out 2>err || fail "ckpt inspect hostile.h5: $(cat err)"
has_controls out && fail "ckpt inspect printed control characters from the checkpoint: $(grep -a 'git commit' out | od -c | head -3)"
grep -q 'git commit   \\x1b\]0;owned\\x07\\u009b2J\\u202e' out && ok "ckpt inspect escapes a checkpoint's strings" ||
  fail "ckpt inspect: $(grep -a 'git commit' out)"
timeout 30 "$hpctrain" ckpt verify hostile.h5 >out 2>&1
has_controls out && fail "ckpt verify printed control characters from the checkpoint"

# 9. Lesser: a directory named like a checkpoint, an index listing 700,000 shards.
train "$work/r9" 2 || fail "run r9: $(tail -3 r9.out)"
mkdir -p r9/checkpoints/step-00000004.h5
train "$work/r9" 4 || fail "a directory named like a future checkpoint stopped the run: $(tail -3 r9.out)"
[[ -f r9/checkpoints/step-00000004.h5 ]] && compgen -G "r9/checkpoints/superseded-*/step-00000004.h5" >/dev/null &&
  ok "a directory named like a checkpoint is set aside, not in the way" || fail "r9: $(ls -R r9/checkpoints)"
/usr/bin/python3 - "$work/many-shards.h5" <<'EOF'
import sys, h5py, numpy
def text(value):
    return numpy.bytes_(value.encode()), h5py.string_dtype("ascii", max(1, len(value.encode())))
with h5py.File(sys.argv[1], "w", libver=("v108", "v108")) as f:
    for name, value in {"format_version": 5, "step": 4, "world_size": 700000, "shards": 700000}.items():
        f.attrs.create(name, numpy.int64(value))
    for name, value in {"reducer": "ddp", "config": "", "tokenizer_sha256": "", "git_commit": "", "versions": ""}.items():
        data, dtype = text(value)
        f.attrs.create(name, data, dtype=dtype)
    table = "".join(f"rank-{i:05d}.h5 100 {'0' * 64}\n" for i in range(700000))
    data, dtype = text(table)
    f.attrs.create("shard_files", data, dtype=dtype)
EOF
timeout 120 "$hpctrain" ckpt verify many-shards.h5 >out 2>&1
rc=$?
longest=$(awk '{ if (length($0) > n) n = length($0) } END { print n + 0 }' out)
((rc == 1 && longest < 4096)) && grep -q "and 69999[0-9] more shards with problems" out &&
  ok "an index of 700,000 missing shards: a verdict of $longest bytes" ||
  fail "an index of 700,000 missing shards: exit $rc, a line of $longest bytes: $(head -c 300 out)"

# 10. An experiment saved with a UTF-8 byte-order mark.
printf '\xef\xbb\xbf' >bom.toml
cat "$exp" >>bom.toml
timeout 60 "$hpctrain" prepare bom.toml --set "data.dir=$data" >out 2>err && ok "hpctrain reads an experiment with a BOM" ||
  fail "hpctrain prepare bom.toml: $(cat err)"
timeout 60 "$jobgen" bom.toml >out 2>err && ok "jobgen reads an experiment with a BOM" || fail "jobgen bom.toml: $(cat err)"

((failures == 0)) || { echo "$failures failure(s)"; exit 1; }
echo "every case handled or refused cleanly"
