#!/usr/bin/env bash
# Installs the Debian packages hpctrain needs, on Debian 12 ("bookworm", the
# reference platform: LibTorch 1.13) or Debian 13 ("trixie": LibTorch 2.6,
# HDF5 1.14, MPICH 4.2, Slurm 24.11); the package names are the same on both.
#   bash env/setup.sh               everything: build, run, every test, lint
#   bash env/setup.sh --build-only  what building hpctrain and jobgen and running
#                                   the quickstart need (the README's main command)
#   bash env/setup.sh --cuda ...    Debian 13 only: LibTorch 2.6 for CUDA 12.4
#                                   (libtorch-cuda-dev), nvcc 12.4 and NCCL 2.22 in
#                                   place of the CPU LibTorch; needs the contrib and
#                                   non-free sections (docs/gpu.md)
# Safe to run repeatedly: apt skips what is already there, and the BLAS
# alternative is only switched when it does not already point at OpenBLAS.
set -euo pipefail

build_packages=(
  # toolchain
  build-essential cmake ninja-build ccache git pkg-config
  # trainer
  libtorch-dev libopenblas0-openmp
  mpich libmpich-dev
  libhdf5-dev
  libsentencepiece-dev libssl-dev python3
  # config, jobgen, CLI, logging
  libtomlplusplus-dev libkainjow-mustache-dev
  libcli11-dev libspdlog-dev libfmt-dev nlohmann-json3-dev
  # found when the build is configured, even if no test is built
  libgtest-dev libgmock-dev libbenchmark-dev
)
test_packages=(
  # clang: .ci/tidy-cached preprocesses with it to key clang-tidy's results;
  # libomp-dev: clang's omp.h, which LibTorch's headers include
  clang-format clang-tidy clang libomp-dev cppcheck hdf5-tools
  # strace: a file system that fails half-way, injected into one syscall (tests/cli/hostile-review.sh)
  strace
  # python3-torch: the PyTorch reference the models are checked against
  python3-torch gnuplot-nox
  # python3-h5py: checkpoints read by the HDF5 project's own Python binding
  # (a DDAP checkpoint merged by numpy, for resuming at another world size)
  python3-h5py
  # the real SLURM cluster the cluster tests bring up, with accounting
  # (slurmdbd storing into its own MariaDB) where a test asks for it
  slurmctld slurmd slurm-client munge iproute2 util-linux procps slurmdbd mariadb-server
  # the installed tree: loaded through Lmod as users of a cluster load it;
  # the Debian package: dpkg-shlibdeps (dpkg-dev) for its Depends, lintian to check it
  lmod dpkg-dev lintian
)
# Which Debian: another distribution, or another release, may well have these
# packages under other names or versions hpctrain was never built against.
os_field() { sed -n "s/^$1=\"\{0,1\}\([^\"]*\)\"\{0,1\}\$/\1/p" /etc/os-release 2>/dev/null; }
version=""
[[ $(os_field ID) == debian ]] && version=$(os_field VERSION_ID)
case "$version" in
  12) ;;
  13) test_packages+=(
        # HF's safetensors, which reads hpctrain's exported weights (Debian 12 has no package)
        python3-safetensors) ;;
  *)
    echo "setup: warning: this is not Debian 12 or 13 ($(os_field PRETTY_NAME)): trying Debian 12's package" \
      "names; where apt lacks one, install its equivalent yourself" >&2 ;;
esac
build_only=0 cuda=0
for arg in "$@"; do
  case "$arg" in
    --build-only) build_only=1 ;;
    --cuda) cuda=1 ;;
    *) echo "usage: bash env/setup.sh [--build-only] [--cuda]" >&2; exit 2 ;;
  esac
done
packages=("${build_packages[@]}")
((build_only)) || packages+=("${test_packages[@]}")
if ((cuda)); then
  [[ $version == 13 ]] || { echo "setup: --cuda needs Debian 13 (libtorch-cuda-dev 2.6, CUDA 12.4, NCCL 2.22)" >&2; exit 2; }
  # The CUDA LibTorch conflicts with the CPU one (and python3-torch with it);
  # nvidia-cudnn, which it depends on, downloads cuDNN from NVIDIA while it
  # installs. objdump (binutils) reads which CUDA runtime LibTorch needs.
  cpu_only=(libtorch-dev python3-torch)
  for i in "${!packages[@]}"; do
    [[ " ${cpu_only[*]} " == *" ${packages[i]} "* ]] && unset "packages[i]"
  done
  packages+=(libtorch-cuda-dev nvidia-cuda-toolkit libnccl-dev binutils)
fi

if [[ $(id -u) -ne 0 ]]; then
  sudo_cmd=(sudo)
else
  sudo_cmd=()
fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done

if ((${#missing[@]})); then
  echo "setup: installing ${#missing[@]} packages: ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  # The SLURM and munge daemons are started by the test harness with its own
  # configuration, never by the packages' scripts: a policy-rc.d (only while we
  # install, and only if the machine has none) stops apt from launching them.
  policy=/usr/sbin/policy-rc.d
  if [[ ! -e $policy ]]; then
    printf '#!/bin/sh\nexit 101\n' | "${sudo_cmd[@]}" tee "$policy" >/dev/null
    "${sudo_cmd[@]}" chmod +x "$policy"
    trap '"${sudo_cmd[@]}" rm -f "$policy"' EXIT
  fi
  log=$(mktemp)
  if ! { "${sudo_cmd[@]}" apt-get update -qq && "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"; } >"$log" 2>&1; then
    tail -n 40 "$log" >&2
    echo "setup: apt-get failed (full log: $log)" >&2
    ((cuda)) && echo "setup: --cuda: are the contrib and non-free sections in apt's sources?" >&2
    exit 1
  fi
  rm -f "$log"
else
  echo "setup: all ${#packages[@]} packages already installed"
fi

# LibTorch resolves libblas.so.3 through Debian's alternatives; make sure it is
# OpenBLAS (openmp flavour), never the ~30x slower reference BLAS.
arch=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || echo x86_64-linux-gnu)
for lib in libblas.so.3 liblapack.so.3; do
  want=/usr/lib/$arch/openblas-openmp/$lib
  link=/usr/lib/$arch/$lib
  if [[ -e $want && $(readlink -f "$link") != "$(readlink -f "$want")" ]]; then
    "${sudo_cmd[@]}" update-alternatives --set "$lib-$arch" "$want"
  fi
  echo "setup: $lib -> $(readlink -f "$link")"
done
