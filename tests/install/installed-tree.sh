#!/usr/bin/env bash
# installed-tree.sh BUILD_DIR SOURCE_DIR DATA_DIR: `cmake --install` into a
# temporary prefix P, then, in a private mount namespace where the source and
# build trees are empty directories and with a clean environment
# (env -i PATH=P/bin:/usr/bin:/bin), what a user of the installed tree does:
# copy an example experiment from P/share/hpctrain/jobs/ into an empty
# directory and render its batch script with jobgen (templates and profiles
# from P, the executable beside jobgen); `jobgen --version` and
# `hpctrain --version` name the same version and commit and say where
# templates, profiles and the SentencePiece plugin come from; `hpctrain
# doctor` and `hpctrain hostnames` run; a 2-step run of a tiny model trains on
# a copy of the quickstart's prepared data. Needs root (unshare -m).
set -euo pipefail
shopt -s inherit_errexit
build=$(cd "$1" && pwd) source_dir=$(cd "$2" && pwd) data=$3
fail() { echo "FAIL: $*"; exit 1; }
((EUID == 0)) || { echo "SKIP: needs root for a private mount namespace"; exit 77; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
prefix=$work/prefix
cmake --install "$build" --prefix "$prefix" >"$work/install.log" || { cat "$work/install.log"; fail "cmake --install"; }
for f in bin/hpctrain bin/jobgen lib/hpctrain/libhpctrain_sentencepiece.so share/hpctrain/templates/sbatch.mustache \
  share/hpctrain/clusters/local.toml share/hpctrain/clusters/default.toml share/hpctrain/jobs/quickstart.toml share/doc/hpctrain/README.md \
  share/modulefiles/hpctrain; do
  [[ -e $prefix/$f ]] || fail "cmake --install did not install $f"
done
mkdir -p "$work/data" "$work/user"
cp -r "$data"/. "$work/data/"

# Everything after this runs with the trees hidden: bash reads a script as it
# goes, so the part that runs there is written out first.
cat >"$work/inside.sh" <<'INSIDE'
set -euo pipefail
shopt -s inherit_errexit
prefix=$1 data=$2
fail() { echo "FAIL: $*"; exit 1; }
cd "$(dirname "$prefix")/user"
cp "$prefix/share/hpctrain/jobs/quickstart.toml" .
echo "== jobgen --version"
jobgen --version | tee version.txt
version=$(head -1 version.txt)
[[ $version =~ ^jobgen\ [0-9]+\.[0-9]+\.[0-9]+\ \(git\ ([0-9a-f]{12}|unknown)(, dirty)?\)$ ]] || fail "jobgen --version: $version"
grep -q "the installed tree $prefix/share/hpctrain" version.txt || fail "jobgen does not search $prefix/share/hpctrain"
grep -q "templates: $prefix/share/hpctrain/templates$" version.txt || fail "templates not found under $prefix"
grep -q "profiles:  $prefix/share/hpctrain/clusters$" version.txt || fail "profiles not found under $prefix"
grep -q "no executable runs $prefix/bin/hpctrain$" version.txt || fail "the default executable is not $prefix/bin/hpctrain"
echo "== hpctrain --version"
hpctrain --version | tee hpctrain-version.txt
[[ $(head -1 hpctrain-version.txt) == "hpctrain ${version#jobgen }" ]] || fail "hpctrain and jobgen disagree on the version"
grep -qx "SentencePiece plugin: $prefix/lib/hpctrain/libhpctrain_sentencepiece.so" hpctrain-version.txt ||
  fail "hpctrain does not load its plugin from $prefix/lib/hpctrain"
echo "== jobgen quickstart.toml"
jobgen quickstart.toml >job.sh
bash -n job.sh || fail "the rendered script is not valid bash"
grep -Fqx "# Rendered by jobgen ${version#jobgen } from quickstart.toml" job.sh || fail "the script's header: $(grep '^# Rendered' job.sh)"
grep -Fq -- "-- '$prefix/bin/hpctrain' train" job.sh || fail "the script does not run $prefix/bin/hpctrain"
grep -Fqx "#   cluster profile: default ($prefix/share/hpctrain/clusters/default.toml)" job.sh ||
  fail "the profile does not come from $prefix: $(grep 'cluster profile' job.sh)"
! grep -q -- "--partition" job.sh || fail "with no --cluster the script asks for a partition: $(grep -- --partition job.sh)"
echo "== hpctrain doctor"
hpctrain doctor --no-bandwidth | tee doctor.txt
grep -q "^  launcher   singleton" doctor.txt || fail "hpctrain doctor"
echo "== hpctrain hostnames"
[[ $(hpctrain hostnames 'node[01-03]' | tr '\n' ' ') == "node01 node02 node03 " ]] || fail "hpctrain hostnames"
echo "== a 2-step run"
hpctrain train quickstart.toml --set "data.dir=$data" --set training.steps=2 --set model.n_layer=1 \
  --set model.d_model=64 --set training.batch_size=4 --set training.micro_batch_size=4 --set eval.interval=0 \
  --set eval.final=sample --set eval.samples=8 --set eval.test=false --set eval.sample_tokens=8 \
  --set job.run_dir=runs/tiny | tee train.txt
[[ -f runs/tiny/checkpoints/step-00000002.h5 ]] || fail "the 2-step run wrote no final checkpoint"
hpctrain ckpt inspect runs/tiny/checkpoints/step-00000002.h5 | tee inspect.txt
number=$(cut -d' ' -f2 <<<"$version")
commit=$(sed -E 's/.*\(git ([0-9a-f]+|unknown).*/\1/' <<<"$version")
dirty=$([[ $version == *", dirty)" ]] && echo -dirty || true)
grep -Eq "^git commit   ${commit}[0-9a-f]*${dirty}$" inspect.txt && grep -q "^versions     hpctrain $number;" inspect.txt ||
  fail "the checkpoint does not record version $number and commit $commit$dirty"
echo "ok: the installed tree works with the source and build trees hidden"
INSIDE

unshare --mount --propagation private bash -c '
  set -euo pipefail
  for dir in "$2" "$1"; do mount -t tmpfs -o size=1m,mode=0755 hidden "$dir"; done
  # (a build tree inside the source tree is gone with it)
  [[ -z $(ls -A "$1") && ( ! -e $2 || -z $(ls -A "$2") ) ]] || { echo "FAIL: the trees are not hidden"; exit 1; }
  exec env -i "PATH=$3/bin:/usr/bin:/bin" "HOME=$4" bash "$4/inside.sh" "$3" "$4/data"
' hide "$source_dir" "$build" "$prefix" "$work"
