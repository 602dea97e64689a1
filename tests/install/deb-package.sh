#!/usr/bin/env bash
# deb-package.sh BUILD_DIR SOURCE_DIR: the Debian package, judged by Debian's
# own tools. `cpack -G DEB` builds hpctrain_<version>_amd64.deb from the build
# tree; its Depends must name, for every library the binaries and the plugin
# load, the package dpkg says ships that library (dpkg -S), and nothing from
# CUDA; no file carries a RUNPATH; lintian reports no error. Then, as root,
# `dpkg -i` installs it, `dpkg -L` lists the expected files, jobgen and
# hpctrain run from /usr/bin with the source and build trees hidden, and
# `dpkg -r` removes every file it installed (then --purge, so dpkg forgets it). A trap removes the package if any
# step fails; a hpctrain package this test did not install is never touched.
set -euo pipefail
shopt -s inherit_errexit
build=$(cd "$1" && pwd) source_dir=$(cd "$2" && pwd)
fail() { echo "FAIL: $*"; exit 1; }
((EUID == 0)) || { echo "SKIP: dpkg -i needs root"; exit 77; }
for tool in cpack dpkg dpkg-deb dpkg-shlibdeps lintian readelf; do
  command -v "$tool" >/dev/null || { echo "SKIP: $tool is not installed (env/setup.sh installs it)"; exit 77; }
done
package_state() { dpkg-query -W -f='${db:Status-Status}' hpctrain 2>/dev/null || true; }
if [[ $(package_state) == installed ]]; then
  echo "SKIP: a hpctrain package is already installed on this machine; this test installs and removes its own"
  exit 77
fi
work=$(mktemp -d)
installed_by_us=0
cleanup() {
  if ((installed_by_us)); then dpkg --purge hpctrain >/dev/null 2>&1 || echo "WARNING: dpkg --purge hpctrain failed"; fi
  rm -rf "$work"
}
trap cleanup EXIT

version=$(sed -n 's/^CMAKE_PROJECT_VERSION:STATIC=//p' "$build/CMakeCache.txt")
deb=$work/hpctrain_${version}_amd64.deb
echo "== cpack -G DEB"
cpack -G DEB -B "$work" --config "$build/CPackConfig.cmake" >"$work/cpack.log" 2>&1 || { cat "$work/cpack.log"; fail "cpack"; }
[[ -f $deb ]] || fail "cpack made no $(basename "$deb"): $(ls "$work")"
dpkg-deb -I "$deb" | tee "$work/info.txt"
depends=$(dpkg-deb -f "$deb" Depends)
dpkg-deb -x "$deb" "$work/root"
# The package names, one a line, without version constraints.
depends_packages=$(sed 's/ ([^)]*)//g; s/, */\n/g; s/ *| */\n/g' <<<"$depends")

echo "== Depends against dpkg -S of every library loaded"
# No dependency may need CUDA or NCCL. An entry with alternatives needs one of
# them: Debian 13's LibTorch offers "libtorch2.6 | libtorch-cuda-2.6 |
# libtorch-rocm-2.6", which the CPU package satisfies.
while IFS= read -r entry; do
  grep -Eiqv "cuda|nccl|rocm" < <(tr '|' '\n' <<<"$entry") || fail "Depends needs CUDA or NCCL: $entry"
done < <(tr ',' '\n' <<<"$depends")
elves=("$work/root/usr/bin/hpctrain" "$work/root/usr/bin/jobgen" "$work/root/usr/lib/hpctrain/libhpctrain_sentencepiece.so")
for elf in "${elves[@]}"; do
  [[ -f $elf ]] || fail "the package has no ${elf#"$work/root"}"
  ! readelf -d "$elf" | grep -Eq "RPATH|RUNPATH" || fail "${elf#"$work/root"} carries a RUNPATH: $(readelf -d "$elf" | grep PATH)"
  ! readelf -d "$elf" | grep -Eq "NEEDED.*(libnccl|libcudart)" || fail "${elf#"$work/root"} links CUDA or NCCL"
  # Every NEEDED library as the loader resolves it, and the package dpkg says owns that file.
  while read -r soname path; do
    [[ -n $path && -e $path ]] || fail "${elf#"$work/root"}: the loader does not find $soname"
    owner=$(dpkg -S "$(realpath "$path")" 2>/dev/null | head -1 | cut -d: -f1) || true
    [[ -n $owner ]] || owner=$(dpkg -S "$path" 2>/dev/null | head -1 | cut -d: -f1) || true
    [[ -n $owner ]] || fail "${elf#"$work/root"}: no Debian package ships $path ($soname)"
    grep -Fqx "$owner" <<<"$depends_packages" || fail "${elf#"$work/root"} needs $soname from $owner, which Depends lacks: $depends"
    echo "  ${elf#"$work/root"}: $soname -> $owner"
  done < <(readelf -d "$elf" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | while read -r soname; do
    echo "$soname $(ldconfig -p | awk -v s="$soname" '$1 == s && /x86-64/ {print $NF; exit}')"
  done)
done

echo "== lintian"
lintian "$deb" 2>&1 | grep -v "running with root privileges" | tee "$work/lintian.txt" || true
! grep -q "^E:" "$work/lintian.txt" || fail "lintian reports errors"

echo "== dpkg -i"
installed_by_us=1
dpkg -i "$deb" >"$work/dpkg-i.log" 2>&1 || { cat "$work/dpkg-i.log"; fail "dpkg -i"; }
dpkg -L hpctrain >"$work/files.txt"
for f in /usr/bin/hpctrain /usr/bin/jobgen /usr/lib/hpctrain/libhpctrain_sentencepiece.so \
  /usr/share/hpctrain/templates/sbatch.mustache /usr/share/hpctrain/clusters/local.toml \
  /usr/share/hpctrain/jobs/quickstart.toml /usr/share/doc/hpctrain/README.md /usr/share/doc/hpctrain/copyright \
  /usr/share/doc/hpctrain/changelog.gz "/usr/share/modulefiles/hpctrain/$version.lua"; do
  grep -qx "$f" "$work/files.txt" || fail "dpkg -L hpctrain does not list $f"
done
echo "dpkg -L hpctrain: $(wc -l <"$work/files.txt") entries, the expected ones among them"

# From /usr/bin, with the trees hidden and a clean environment, as in installed-tree.sh.
mkdir "$work/user"
cat >"$work/inside.sh" <<'INSIDE'
set -euo pipefail
shopt -s inherit_errexit
fail() { echo "FAIL: $*"; exit 1; }
cd "$1"
[[ $(command -v jobgen) == /usr/bin/jobgen && $(command -v hpctrain) == /usr/bin/hpctrain ]] || fail "not /usr/bin"
jobgen --version | tee version.txt
grep -q "templates: /usr/share/hpctrain/templates$" version.txt || fail "templates not from /usr/share/hpctrain"
grep -q "profiles:  /usr/share/hpctrain/clusters$" version.txt || fail "profiles not from /usr/share/hpctrain"
hpctrain --version | tee hpctrain-version.txt
[[ $(head -1 hpctrain-version.txt) == "hpctrain $(head -1 version.txt | cut -d' ' -f2-)" ]] || fail "versions disagree"
grep -qx "SentencePiece plugin: /usr/lib/hpctrain/libhpctrain_sentencepiece.so" hpctrain-version.txt || fail "plugin"
cp /usr/share/hpctrain/jobs/quickstart.toml .
jobgen quickstart.toml >job.sh
bash -n job.sh || fail "the rendered script is not valid bash"
grep -Fq -- "-- '/usr/bin/hpctrain' train" job.sh || fail "the script does not run /usr/bin/hpctrain"
hpctrain doctor --no-bandwidth | tee doctor.txt
grep -q "^  launcher   singleton" doctor.txt || fail "hpctrain doctor"
[[ $(hpctrain hostnames 'node[01-03]' | tr '\n' ' ') == "node01 node02 node03 " ]] || fail "hpctrain hostnames"
INSIDE
unshare --mount --propagation private bash -c '
  set -euo pipefail
  for dir in "$2" "$1"; do mount -t tmpfs -o size=1m,mode=0755 hidden "$dir"; done
  exec env -i PATH=/usr/bin:/bin "HOME=$3/user" bash "$3/inside.sh" "$3/user"
' hide "$source_dir" "$build" "$work" || fail "the installed package does not run (above)"

echo "== dpkg -r"
dpkg -r hpctrain >"$work/dpkg-r.log" 2>&1 || { cat "$work/dpkg-r.log"; fail "dpkg -r"; }
[[ $(package_state) != installed ]] || fail "dpkg still lists hpctrain as installed"
left=$(while read -r f; do [[ -f $f ]] && echo "$f"; done <"$work/files.txt" || true)
[[ -z $left ]] || fail "dpkg -r left files behind: $left"
# dpkg keeps the package's maintainer scripts until a purge; leave no trace.
dpkg --purge hpctrain >/dev/null
installed_by_us=0
[[ $(package_state) == "" || $(package_state) == not-installed ]] || fail "dpkg still knows hpctrain after --purge: $(package_state)"
echo "ok: hpctrain_${version}_amd64.deb builds, passes lintian, installs, runs from /usr/bin and removes cleanly"
