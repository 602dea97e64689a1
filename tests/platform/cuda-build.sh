#!/usr/bin/env bash
# tests/platform/cuda-build.sh: this commit built against a CUDA LibTorch, so
# that every CUDA code path is compiled and linked on every CI run, on
# machines without a GPU. In a Debian 13 root of its own (made and kept by
# tests/platform/debian13.sh under $HPCTRAIN_DEBIAN13_CUDA, default
# /var/tmp/hpctrain-debian13-cuda: the CUDA LibTorch conflicts with the CPU
# one): LibTorch 2.6 for CUDA 12.4 (libtorch-cuda-dev), nvcc 12.4 and NCCL
# 2.22 from contrib and non-free (env/setup.sh --build-only --cuda), the
# whole tree (hpctrain, jobgen, tests, benchmarks) configured and built with
# warnings as errors. It fails unless
#   - configure turned the NCCL backend on and found the CUDA LibTorch with
#     the toolkit's CUDA runtime (one CUDA runtime in the process);
#   - the build printed no warning;
#   - hpctrain links, and the only thing its dynamic linking lacks is cuDNN.
# What it cannot prove: that this binary runs. cuDNN (nvidia-cudnn) is an
# installer that downloads from NVIDIA, which these machines cannot reach, so
# a package that installs nothing stands in for it and the link allows
# cuDNN's symbols to stay undefined; without libcudnn.so.9 and a GPU the
# binary does not start. docs/gpu.md says how it runs on a GPU.
# The first run downloads about 3 GB; reruns reuse the root and its caches.
#   tests/platform/cuda-build.sh
set -euo pipefail
shopt -s inherit_errexit
repo=$(cd "$(dirname "$0")/../.." && pwd)
if [[ ${1:-} != --in-root ]]; then
  HPCTRAIN_DEBIAN13=${HPCTRAIN_DEBIAN13_CUDA:-/var/tmp/hpctrain-debian13-cuda} \
    exec "$repo/tests/platform/debian13.sh" "tests/platform/cuda-build.sh --in-root"
fi

fail() { echo "cuda-build: FAIL: $*" >&2; exit 1; }

# 1. The stand-in for nvidia-cudnn: installs no file, provides the version
# libtorch-cuda-2.6 depends on.
if ! dpkg-query -W -f='${Status}' nvidia-cudnn hpctrain-no-cudnn 2>/dev/null | grep -q 'install ok installed'; then
  stand_in=$(mktemp -d)
  mkdir -p "$stand_in/pkg/DEBIAN"
  cat >"$stand_in/pkg/DEBIAN/control" <<'CONTROL'
Package: hpctrain-no-cudnn
Version: 1
Architecture: all
Maintainer: hpctrain CI <ci@localhost>
Provides: nvidia-cudnn (= 9.0.0.312~cuda12), libcudnn.so.9
Description: stands in for nvidia-cudnn in hpctrain's CUDA build check
 nvidia-cudnn downloads cuDNN from NVIDIA while it installs; this machine
 cannot. Installs no file: programs linked against the CUDA LibTorch build
 and link here, and do not start.
CONTROL
  dpkg-deb --build "$stand_in/pkg" "$stand_in/hpctrain-no-cudnn.deb" >/dev/null
  dpkg -i "$stand_in/hpctrain-no-cudnn.deb" >/dev/null
  rm -rf "$stand_in"
fi

# 2. The packages.
SECONDS=0
bash env/setup.sh --build-only --cuda
echo "cuda-build: packages ready in ${SECONDS} s"

# 3. Configure. TORCH_CUDA_ARCH_LIST spares LibTorch's CMake from probing for
# a GPU; hpctrain compiles no device code, so the list only has to be valid.
# The linker may leave shared libraries' symbols undefined: cuDNN's (step 5
# checks that nothing else is). The test programs cannot start without cuDNN,
# so GoogleTest's discovery waits for ctest (PRE_TEST) instead of running them
# as they are built.
log=build/cuda-build-logs
mkdir -p "$log"
cmake --preset default -DHPCTRAIN_WERROR=ON -DTORCH_CUDA_ARCH_LIST=9.0 \
  -DCMAKE_EXE_LINKER_FLAGS=-Wl,--allow-shlib-undefined -DCMAKE_SHARED_LINKER_FLAGS=-Wl,--allow-shlib-undefined \
  -DCMAKE_GTEST_DISCOVER_TESTS_DISCOVERY_MODE=PRE_TEST \
  >"$log/configure.log" 2>&1 || { tail -40 "$log/configure.log"; fail "configure failed"; }
grep -E '^-- hpctrain:' "$log/configure.log"
grep -q 'hpctrain: NCCL backend ON' "$log/configure.log" || fail "the NCCL backend is off"
grep -q 'CUDA 12 as the toolkit' "$log/configure.log" ||
  fail "configure did not find the CUDA LibTorch with the toolkit's CUDA runtime"

# 4. Build everything, warnings as errors, and count them anyway.
SECONDS=0
cmake --build --preset default >"$log/build.log" 2>&1 || { grep -E 'error|warning' "$log/build.log" | head -40; fail "build failed"; }
warnings=$(grep -c 'warning:' "$log/build.log" || true)
grep -E 'Linking CXX executable (hpctrain|jobgen)$' "$log/build.log"
echo "cuda-build: built in ${SECONDS} s, ${warnings} warnings"
((warnings == 0)) || fail "${warnings} warnings"

# 5. hpctrain's dynamic linking: every library found but cuDNN's, and no
# undefined symbol but cuDNN's.
ldd -r build/hpctrain >"$log/ldd.txt" 2>&1 || true
missing=$(grep 'not found' "$log/ldd.txt" | awk '{print $1}' | sort -u | tr '\n' ' ')
[[ $missing == "libcudnn.so.9 " ]] || fail "hpctrain lacks ${missing:-nothing}, expected libcudnn.so.9 alone"
others=$(grep 'undefined symbol' "$log/ldd.txt" | grep -v 'undefined symbol: cudnn' || true)
[[ -z $others ]] || { echo "$others" | head; fail "undefined symbols other than cuDNN's"; }
echo "cuda-build: hpctrain needs $(grep -c '=>' "$log/ldd.txt") libraries, all found but libcudnn.so.9;" \
  "$(grep -c 'undefined symbol: cudnn' "$log/ldd.txt") undefined symbols, all cuDNN's"
echo "cuda-build: LibTorch $(dpkg-query -W -f='${Version}' libtorch-cuda-dev), CUDA" \
  "$(dpkg-query -W -f='${Version}' nvidia-cuda-toolkit), NCCL $(dpkg-query -W -f='${Version}' libnccl-dev)," \
  "$(g++ --version | head -1)"
echo "cuda-build: PASS"
