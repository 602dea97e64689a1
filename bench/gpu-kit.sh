#!/usr/bin/env bash
# bench/gpu-kit.sh [--out DIR]: the kit that bench/gpu-proof.sh needs on a GPU
# machine that has CUDA, a CUDA PyTorch, CMake, ninja and a compiler but none
# of hpctrain's other dependencies, and no network (the lent GPU machine of
# docs/gpu.md). Made on a Debian 12 machine (its packages run on any glibc
# >= 2.36), into DIR (default .gpu-kit/, git-ignored; at most 64 MiB with the
# repository, which is what the device tool carries):
#   packages.tar.xz  Debian 12's packages of MPICH (library, headers and the
#                    Hydra launcher), HDF5, SentencePiece, toml++, CLI11, fmt,
#                    nlohmann-json, OpenSSL, Google Benchmark and every library
#                    they need but glibc's and libstdc++'s, unpacked and pruned
#                    (no static libraries, docs, Fortran, C++ or high-level
#                    HDF5, programs but the launcher, or UCX's InfiniBand and
#                    RDMA-CM transports), each library's RUNPATH set to its own
#                    directory so the kit resolves inside itself wherever it is
#                    unpacked, and hints.cmake, the CMake cache that points
#                    FindMPI and FindHDF5 (neither has a wrapper to ask there)
#                    into it
#   data.tar.xz      the quickstart's prepared data set (bench/gpu-proof.sh's
#                    runs start from the tokens trained here)
#   MANIFEST         the packages and versions, and the kit's sizes
# Then the check: every NEEDED entry of every ELF file in the kit resolves
# inside the kit (through its RUNPATH) or to glibc, libstdc++ or libgcc_s,
# which every target machine has; the newest glibc symbol version the kit
# uses is printed. Needs apt-get with Debian 12 sources, patchelf (apt-get
# install patchelf), xz, and build/hpctrain (the data set). Downloads about
# 35 MB once; the .debs are kept in /var/tmp/hpctrain-gpu-kit.
set -euo pipefail
shopt -s inherit_errexit nullglob
repo=$(cd "$(dirname "$0")/.." && pwd)
out=$repo/.gpu-kit
while (($#)); do
  case $1 in
    --out) out=$2; shift ;;
    *) echo "gpu-kit: unknown argument '$1' (see the comment at the top of $0)" >&2; exit 2 ;;
  esac
  shift
done
. /etc/os-release
[[ ${VERSION_ID:-} == 12 ]] || { echo "gpu-kit: needs Debian 12's packages (this is ${PRETTY_NAME:-unknown})" >&2; exit 1; }
command -v patchelf >/dev/null || { echo "gpu-kit: needs patchelf (apt-get install patchelf)" >&2; exit 1; }
hpctrain=$repo/build/hpctrain
[[ -x $hpctrain ]] || { echo "gpu-kit: needs $hpctrain for the data set (the README's build)" >&2; exit 1; }

# What hpctrain builds against (the -dev packages, taken without their own
# dependencies: those are compilers, Fortran and tools) and what runs (the
# runtime packages, followed through their library dependencies: lib*; zlib1g
# is named, not being lib*).
dev=(libmpich-dev libhdf5-dev libsentencepiece-dev libtomlplusplus-dev libcli11-dev libfmt-dev nlohmann-json3-dev
  libssl-dev libbenchmark-dev)
runtime=(mpich libmpich12 libhdf5-103-1 libsentencepiece0 libtomlplusplus3 libfmt9 libssl3 libbenchmark1debian zlib1g)
# Every target machine has these (glibc, the compiler's runtime).
base_packages=" libc6 libgcc-s1 libstdc++6 gcc-12-base libcrypt1 "
base_libraries=" libc.so.6 libm.so.6 libpthread.so.0 libdl.so.2 librt.so.1 libresolv.so.2 libutil.so.1 \
ld-linux-x86-64.so.2 libstdc++.so.6 libgcc_s.so.1 "

# The runtime closure: Depends and Pre-Depends of each package, the first of
# each set of alternatives, libraries only (lib*), glibc's and the compiler's left out.
declare -A seen=()
queue=("${runtime[@]}")
while ((${#queue[@]})); do
  p=${queue[0]}
  queue=("${queue[@]:1}")
  [[ -n ${seen[$p]:-} || $base_packages == *" $p "* ]] && continue
  seen[$p]=1
  while read -r dep; do
    [[ $dep == lib* && -z ${seen[$dep]:-} ]] && queue+=("$dep")
  done < <(apt-cache depends --no-recommends --no-suggests --no-conflicts --no-breaks --no-replaces --no-enhances "$p" |
    awk '/^  (Pre)?Depends: [^<]/ { if (!alt) print $2; alt = 0 } /^ \|(Pre)?Depends:/ { if (!alt) print $2; alt = 1 }')
done
packages=("${dev[@]}" "${!seen[@]}")
mapfile -t packages < <(printf '%s\n' "${packages[@]}" | sort -u)

debs=/var/tmp/hpctrain-gpu-kit
mkdir -p "$debs"
echo "gpu-kit: ${#packages[@]} packages (${#dev[@]} -dev, $((${#packages[@]} - ${#dev[@]})) runtime) into $debs"
(cd "$debs" && apt-get download -q "${packages[@]}" >/dev/null)

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
root=$stage/root
mkdir -p "$root"
: >"$stage/manifest"
for p in "${packages[@]}"; do
  deb=$(ls -t "$debs/${p}"_*.deb | head -1)
  dpkg-deb -x "$deb" "$root"
  dpkg-deb -f "$deb" Package Version | paste -sd' ' >>"$stage/manifest"
done

# Merged /usr, as on every current distribution: a few libraries (zlib's, say)
# are packaged under /lib.
if [[ -d $root/lib ]]; then
  cp -a "$root/lib/." "$root/usr/lib/"
  rm -rf "${root:?}/lib"
fi

# Prune: documentation, static libraries (but one), every program but Hydra's, the
# Fortran and C++ bindings, UCX's transports that need InfiniBand or RDMA-CM
# (shared memory and TCP, built into UCX itself, remain; so does CMA).
lib=$root/usr/lib/x86_64-linux-gnu
rm -rf "${root:?}"/usr/share/{doc,man,info,lintian,locale,bug} "${root:?}"/etc "${root:?}"/usr/sbin
# (benchmark's CMake files name libbenchmark_main.a, and refuse to load without it.)
find "$root" -name '*.a' \! -name libbenchmark_main.a -delete
find "$root/usr/bin" -mindepth 1 \! -name mpiexec.hydra \! -name hydra_pmi_proxy -delete
rm -rf "$lib"/ucx/libuct_ib* "$lib"/ucx/libuct_rdmacm* "$lib"/fortran
find "$root/usr/include" -name '*.mod' -delete
# Multiarch headers (OpenSSL's opensslconf.h, MPICH's mpi.h) join the others:
# the compiler searches <prefix>/include/x86_64-linux-gnu only under /usr.
cp -a "$root/usr/include/x86_64-linux-gnu/." "$root/usr/include/"
rm -rf "${root:?}/usr/include/x86_64-linux-gnu"
# Symbolic links: relative, so the kit works wherever it is unpacked.
while IFS= read -r -d '' l; do
  t=$(readlink "$l")
  [[ $t == /* ]] && ln -sfn "$(realpath -m --relative-to="$(dirname "$l")" "$root$t")" "$l"
done < <(find "$root" -type l -print0)
ln -s mpiexec.hydra "$root/usr/bin/mpiexec"
# The linker's names hpctrain uses, each pointing straight at its library;
# every other unversioned .so goes.
keep=(libmpich.so hdf5/serial/libhdf5.so libsentencepiece.so libsentencepiece_train.so libtomlplusplus.so libfmt.so
  libcrypto.so libssl.so libbenchmark.so)
for k in "${keep[@]}"; do
  ln -sfn "$(realpath --relative-to="$(dirname "$lib/$k")" "$(realpath -e "$lib/$k")")" "$lib/$k"
done
while IFS= read -r -d '' so; do
  rel=${so#"$lib"/}
  [[ " ${keep[*]} " == *" $rel "* ]] || rm -f "$so"
done < <(find "$lib" -name '*.so' -type l -print0)

# needed FILE: its NEEDED entries.
needed() { objdump -p "$1" 2>/dev/null | awk '$1 == "NEEDED" { print $2 }'; }
is_elf() { [[ -f $1 && ! -L $1 && $(head -c 4 "$1" | od -An -c | tr -d ' ') == '177ELF' ]]; }
# Reachable from what hpctrain links and runs: keep; every other shared library goes.
declare -A reach=()
todo=()
for k in "${keep[@]}"; do todo+=("$(realpath "$lib/$k")"); done
todo+=("$root/usr/bin/mpiexec.hydra" "$root/usr/bin/hydra_pmi_proxy")
for m in "$lib"/ucx/*.so.0; do todo+=("$(realpath "$m")"); done
while ((${#todo[@]})); do
  f=${todo[0]}
  todo=("${todo[@]:1}")
  [[ -n ${reach[$f]:-} ]] && continue
  reach[$f]=1
  while read -r n; do
    [[ $base_libraries == *" $n "* ]] && continue
    [[ -e $lib/$n ]] && todo+=("$(realpath "$lib/$n")")
  done < <(needed "$f")
done
while IFS= read -r -d '' f; do
  is_elf "$f" && [[ -z ${reach[$f]:-} ]] && rm -f "$f"
done < <(find "$root" -type f -print0)
find "$root" -xtype l -delete
find "$root" -mindepth 1 -type d -empty -delete

# RUNPATH: each library finds its neighbours, the UCX modules their parent
# directory's libraries, the programs the library directory.
for f in "${!reach[@]}"; do
  case $f in
    "$lib"/ucx/*) patchelf --set-rpath '$ORIGIN/..' "$f" ;;
    "$lib"/*) patchelf --set-rpath '$ORIGIN' "$f" ;;
    "$root"/usr/bin/*) patchelf --set-rpath '$ORIGIN/../lib/x86_64-linux-gnu' "$f" ;;
  esac
done

# The check, as the dynamic loader would resolve each NEEDED entry.
elves=0 inside=0 outside=0 glibc=0
missing=()
while IFS= read -r -d '' f; do
  is_elf "$f" || continue
  elves=$((elves + 1))
  rp=$(patchelf --print-rpath "$f")
  rp=${rp//\$ORIGIN/$(dirname "$f")}
  while read -r n; do
    if [[ $base_libraries == *" $n "* ]]; then
      outside=$((outside + 1))
      continue
    fi
    found=0
    for d in ${rp//:/ }; do [[ -e $d/$n ]] && found=1; done
    if ((found)); then inside=$((inside + 1)); else missing+=("${f#"$root"/}: $n"); fi
  done < <(needed "$f")
  v=$(objdump -T "$f" | grep -o 'GLIBC_2\.[0-9]*' | sort -t. -k2 -n | tail -1 || true)
  v=${v#GLIBC_2.}
  ((${v:-0} > glibc)) && glibc=$v
done < <(find "$root" -type f -print0)
if ((${#missing[@]})); then
  printf 'gpu-kit: unresolved: %s\n' "${missing[@]}" >&2
  exit 1
fi
echo "gpu-kit: $elves ELF files; every NEEDED resolves: $inside inside the kit, $outside to glibc/libstdc++/libgcc_s; newest glibc symbol: GLIBC_2.$glibc"

# The hints for CMake: FindMPI has no mpicxx and FindHDF5 no h5cc to ask (the
# kit's would name Debian's paths), so their results are given; everything
# else the kit holds is found through CMAKE_PREFIX_PATH.
cat >"$root/hints.cmake" <<'EOF'
# cmake -C <kit>/hints.cmake: hpctrain's dependencies from bench/gpu-kit.sh's kit.
set(kit "${CMAKE_CURRENT_LIST_DIR}/usr")
set(kit_lib "${kit}/lib/x86_64-linux-gnu")
set(CMAKE_PREFIX_PATH "${kit}" CACHE STRING "")
set(MPI_CXX_SKIP_MPICXX ON CACHE BOOL "")
set(MPI_CXX_COMPILER "${kit}/bin/no-mpicxx" CACHE FILEPATH "")
set(MPI_CXX_ADDITIONAL_INCLUDE_DIRS "${kit}/include/mpich" CACHE STRING "")
set(MPI_CXX_LIB_NAMES mpich CACHE STRING "")
set(MPI_mpich_LIBRARY "${kit_lib}/libmpich.so" CACHE FILEPATH "")
set(MPIEXEC_EXECUTABLE "${kit}/bin/mpiexec" CACHE FILEPATH "")
set(HDF5_C_INCLUDE_DIR "${kit}/include/hdf5/serial" CACHE PATH "")
set(HDF5_C_LIBRARY_hdf5 "${kit_lib}/hdf5/serial/libhdf5.so" CACHE FILEPATH "")
set(HDF5_C_LIBRARY_NAMES hdf5 CACHE STRING "")
EOF

data=$stage/data
echo "gpu-kit: preparing the quickstart's data set"
"$hpctrain" prepare "$repo/jobs/quickstart.toml" --set "data.dir=$data" >"$stage/prepare.log" 2>&1 ||
  { tail -20 "$stage/prepare.log" >&2; exit 1; }

rm -rf "$out"
mkdir -p "$out"
tar -C "$root" -cf - . | xz -T0 -6 >"$out/packages.tar.xz"
tar -C "$stage" -cf - data | xz -T0 -6 >"$out/data.tar.xz"
{
  echo "# bench/gpu-kit.sh at $(git -C "$repo" rev-parse --short=12 HEAD 2>/dev/null || echo unknown), $(date -u +%F)"
  sort "$stage/manifest"
  echo "# unpacked: $(du -sb "$root" | cut -f1) bytes; packages.tar.xz $(stat -c %s "$out/packages.tar.xz")," \
    "data.tar.xz $(stat -c %s "$out/data.tar.xz") bytes"
} >"$out/MANIFEST"
tail -1 "$out/MANIFEST"
echo "gpu-kit: $out ($(du -sh "$out" | cut -f1)); the tree that travels: $(git -C "$repo" ls-files -z | du -ch --files0-from=- | tail -1 | cut -f1) tracked + the kit"
