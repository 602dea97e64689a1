#!/usr/bin/env bash
# tests/platform/gpu-rehearsal.sh [KIT]: bench/gpu-proof.sh --cpu in a Debian
# 13 root that has only what the lent GPU machine's image has of what
# hpctrain needs: a C++ compiler, CMake, ninja, and python3 with torch and
# safetensors (Debian's python3-torch 2.6 standing in for the pip wheel, with
# libtorch-dev, which holds the headers and CMake files a wheel carries
# inside it), and xz. No MPI, HDF5, SentencePiece, toml++, CLI11, fmt, nlohmann-json,
# OpenSSL headers or Google Benchmark: those come from the kit (KIT, default
# .gpu-kit/, made by bench/gpu-kit.sh), so a pass proves the kit carries
# them. The root is made once under $HPCTRAIN_GPU_REHEARSAL (default
# /var/tmp/hpctrain-debian13-bare) by tests/platform/debian13.sh and kept;
# the proof's work directory is new each run. Prints the proof's table, the
# kit's size, the size of the tree that travels with it, and the time.
# Needs root and debootstrap; the first run downloads about 1 GB.
set -euo pipefail
shopt -s inherit_errexit
repo=$(cd "$(dirname "$0")/../.." && pwd)
kit=$(realpath "${1:-$repo/.gpu-kit}")
[[ -f $kit/packages.tar.xz ]] || { echo "gpu-rehearsal: no kit at $kit (bench/gpu-kit.sh makes it)" >&2; exit 1; }
export HPCTRAIN_DEBIAN13=${HPCTRAIN_GPU_REHEARSAL:-/var/tmp/hpctrain-debian13-bare}
# (libopenblas0-openmp: the optimised BLAS a torch wheel carries inside it;
# without it apt picks the reference BLAS, and the CPU timings mean nothing.)
image=(g++ cmake ninja-build python3-torch libtorch-dev python3-safetensors xz-utils libopenblas0-openmp)

# The root and the clone of HEAD; then the image's packages, and a check
# that nothing the kit must carry came with them.
"$repo/tests/platform/debian13.sh" "apt-get -q update >/dev/null && DEBIAN_FRONTEND=noninteractive \
apt-get -q install -y --no-install-recommends ${image[*]} >/dev/null && echo 'gpu-rehearsal: installed ${image[*]}' && \
for h in mpi.h hdf5.h sentencepiece_processor.h toml++/toml.hpp CLI/CLI.hpp fmt/core.h nlohmann/json.hpp \
openssl/evp.h benchmark/benchmark.h; do \
  if find /usr/include -path \"*/\$h\" | grep -q .; then echo \"gpu-rehearsal: the root has \$h\" >&2; exit 1; fi; \
done; ! command -v mpiexec >/dev/null || { echo 'gpu-rehearsal: the root has mpiexec' >&2; exit 1; }"

root=$HPCTRAIN_DEBIAN13/fs
rm -rf "$root/root/gpu-kit"
cp -r "$kit" "$root/root/gpu-kit"
kit_bytes=$(du -sb "$kit" | cut -f1)
tree_bytes=$(git -C "$repo" ls-files -z | du -cb --files0-from=- | tail -1 | cut -f1)
"$repo/tests/platform/debian13.sh" "rm -rf /root/gpu-proof-work /root/gpu-proof-out && bash bench/gpu-proof.sh --cpu --kit /root/gpu-kit --work /root/gpu-proof-work \
--out /root/gpu-proof-out --rounds 2"
echo "gpu-rehearsal: kit $((kit_bytes / 1048576)) MiB; the tree that travels $(((tree_bytes + kit_bytes) / 1048576)) MiB" \
  "(tracked files $((tree_bytes / 1048576)) MiB + the kit; the device tool carries at most 64 MiB)"
