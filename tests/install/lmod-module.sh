#!/usr/bin/env bash
# lmod-module.sh BUILD_DIR: the modulefile `cmake --install` puts at
# P/share/modulefiles/hpctrain/VERSION.lua, under real Lmod (Debian's lmod):
# `module use P/share/modulefiles; module load hpctrain` puts P/bin's jobgen
# and hpctrain first on PATH and sets HPCTRAIN_ROOT and JOBGEN_HOME (where
# jobgen then finds its templates and profiles); `module unload hpctrain`
# takes all of it back. The same after moving the tree to another prefix:
# the modulefile works its prefix out from its own path.
set -euo pipefail
shopt -s inherit_errexit
build=$(cd "$1" && pwd)
fail() { echo "FAIL: $*"; exit 1; }
init=/usr/share/lmod/lmod/init/bash
[[ -f $init ]] || { echo "SKIP: Lmod is not installed ($init; env/setup.sh installs it)"; exit 77; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cmake --install "$build" --prefix "$work/first" >"$work/install.log" || { cat "$work/install.log"; fail "cmake --install"; }

check_module() {  # PREFIX
  local prefix=$1
  # A login shell's environment as Lmod expects it, without this machine's PATH.
  env -i HOME="$work" PATH=/usr/bin:/bin bash -c '
    set -euo pipefail
    prefix=$1
    fail() { echo "FAIL ($prefix): $*"; exit 1; }
    source '"$init"'
    ! command -v jobgen >/dev/null || fail "jobgen is on PATH before module load"
    module use "$prefix/share/modulefiles"
    module load hpctrain
    module list 2>&1 | grep -q "hpctrain/" || fail "module list does not show hpctrain"
    [[ $(command -v jobgen) == "$prefix/bin/jobgen" ]] || fail "jobgen is $(command -v jobgen)"
    [[ $(command -v hpctrain) == "$prefix/bin/hpctrain" ]] || fail "hpctrain is $(command -v hpctrain)"
    [[ $HPCTRAIN_ROOT == "$prefix" ]] || fail "HPCTRAIN_ROOT is $HPCTRAIN_ROOT"
    [[ $JOBGEN_HOME == "$prefix/share/hpctrain" ]] || fail "JOBGEN_HOME is $JOBGEN_HOME"
    jobgen --version | grep -q "^  1. \$JOBGEN_HOME (named by you)$" || fail "jobgen does not search JOBGEN_HOME first"
    jobgen --version | grep -qx "       templates: $prefix/share/hpctrain/templates" || fail "jobgen --version"
    hpctrain --version | grep -q "^hpctrain " || fail "hpctrain --version"
    module unload hpctrain
    ! command -v jobgen >/dev/null || fail "jobgen is still on PATH after module unload"
    [[ -z ${HPCTRAIN_ROOT:-} && -z ${JOBGEN_HOME:-} ]] || fail "module unload left HPCTRAIN_ROOT or JOBGEN_HOME set"
    echo "ok: module load and unload of $prefix"
  ' check "$prefix"
}

check_module "$work/first"
mv "$work/first" "$work/moved"
check_module "$work/moved"
