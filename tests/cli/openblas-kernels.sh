#!/usr/bin/env bash
# The kernels OpenBLAS runs inside hpctrain fit the CPU: where the kernel's
# /proc/cpuinfo lists AVX2, they are kernels that use it, not OpenBLAS's
# fallback for a CPU it does not recognise (runtime/openblas_kernels.h), alone
# and under mpiexec; an OPENBLAS_CORETYPE the user set is kept as it is.
# Usage: openblas-kernels.sh HPCTRAIN MPIEXEC
set -euo pipefail
hpctrain=$1 mpiexec=$2
fail() { echo "FAIL: $*" >&2; exit 1; }

kernels_of() {  # doctor's output -> the core OpenBLAS runs
  local line
  line=$(grep -E '^  kernels +OpenBLAS kernels ' <<<"$1") || fail "no kernels line in doctor's output:"$'\n'"$1"
  sed -E 's/^  kernels +OpenBLAS kernels ([A-Za-z0-9]+).*/\1/' <<<"$line"
}

flags=$(grep -m1 '^flags' /proc/cpuinfo)
alone=$(env -u OPENBLAS_CORETYPE -u HPCTRAIN_OPENBLAS_CHOSE "$hpctrain" doctor --no-bandwidth)
two=$(env -u OPENBLAS_CORETYPE -u HPCTRAIN_OPENBLAS_CHOSE "$mpiexec" -n 2 "$hpctrain" doctor --no-bandwidth)
grep -q '^  ranks      2 on' <<<"$two" || fail "mpiexec -n 2 did not make 2 ranks:"$'\n'"$two"
for out in "$alone" "$two"; do
  core=$(kernels_of "$out")
  if [[ " $flags " == *" avx2 "* ]]; then
    [[ $core =~ ^(Haswell|Zen|SkylakeX|Cooperlake|SapphireRapids|Excavator)$ ]] ||
      fail "the CPU has AVX2 (/proc/cpuinfo), OpenBLAS runs $core:"$'\n'"$out"
  fi
  echo "OpenBLAS kernels: $core"
done

mine=$(OPENBLAS_CORETYPE=Haswell "$hpctrain" doctor --no-bandwidth)
[[ $(grep -E '^  kernels ' <<<"$mine") == "  kernels    OpenBLAS kernels Haswell" ]] ||
  fail "OPENBLAS_CORETYPE=Haswell was not kept:"$'\n'"$mine"
echo "PASS"
