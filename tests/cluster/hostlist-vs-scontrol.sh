#!/usr/bin/env bash
# hostlist-vs-scontrol.sh HPCTRAIN: expands a broad set of hostlist expressions
# with the real `scontrol show hostnames` and with `hpctrain hostnames`, and
# fails on any difference. scontrol needs only a SLURM_CONF file, no controller.
#
# Where scontrol reports "Invalid hostlist", hpctrain must exit non-zero. Where
# scontrol turns malformed input into a mangled name, hpctrain must refuse it
# (the STRICTER list below); those are our only deliberate differences.
# Slurm 24.11 reads text after a token's last ']' as a suffix of every name
# ("tux[1-2]-ib"), which Slurm 22.05 refused; hpctrain reads it as 24.11 does.
# Those (the SUFFIXED list) are compared with the scontrol found when it reads
# them, and otherwise with what Slurm 24.11's scontrol printed for them.
set -euo pipefail
hpctrain=$1
if ! command -v scontrol >/dev/null; then
  echo "SKIP: scontrol is not installed (env/setup.sh installs slurm-client)"
  exit 77
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cat >"$work/slurm.conf" <<CONF
ClusterName=hostlistprobe
SlurmctldHost=localhost
NodeName=localhost CPUs=1 State=UNKNOWN
PartitionName=probe Nodes=ALL Default=YES
CONF
export SLURM_CONF=$work/slurm.conf

same=(
  'node[01-03,7],gpu-a[1-2]' 'n[1-2] m[3-4]' 'n[08-10]' 'n[8-10]' 'n[001-003]' 'n[01-2]' 'n[1-02]'
  'rack[1-2]n[1-3]' 'a[1-2]-b[3-4]' 'n[1-3]x[1-2]' 'n[1-2][3]' 'a[1-2]b[1-2]c[1-2]'
  'login' 'a,a,b' 'b,a' 'a b  c' 'a,,b' ',n1' 'n1,' 'n1[2-3]' 'gpu-a1,gpu-b[1-2]' 'n[1,3,5-7,2]'
  'n[9-11]' 'n[099-101]' 'n[1-]' 'x.y[1-2]' 'n[0]' 'n[00000-00002]'
  'n[1-65536]' 'n[1-65537]' 'n[3-1]' 'n[1,,2]' 'n[]' 'n[0x1]' 'n[-1]' 'n[1--2]' 'n[1-70000]' 'n[a-b]'
)
declare -A suffixed=(
  ['x[001-003]y']='x001y x002y x003y' ['tux[1-2]-ib']='tux1-ib tux2-ib'
  ['node-[0-1].cluster']='node-0.cluster node-1.cluster' ['a[1-2]b[3-4]c']='a1b3c a1b4c a2b3c a2b4c'
  ['a[1-2]-b[3-4]-c']='a1-b3-c a1-b4-c a2-b3-c a2-b4-c' ['n[1-2]0']='n10 n20' ['n[1-2]x,m']='n1x n2x m'
)
stricter=('n[1-2' 'n]' 'n[ 1-2]' 'n[+1-2]' 'n[1-2]]' 'n[[1]]' 'n[1-2]x]' 'n[1-2]]x')
# Compression: `scontrol show hostlist` against `hpctrain hostlist`.
ranged=('n1,n2,n3,n5' 'n1,n3,n2,n2' 'n9,n10,n01,n2,a,a' 'n[08-10]' 'login,n[1-2],gpu1' 'n1' 'a1-b3,a1-b4'
  'rack1n[1-3],rack2n[1-3]' 'n[099-101]' 'x,y,z' 'n01,n1' 'n7,n8,m1,n9')

# One comparison per function call, printing one line ("same ...",
# "stricter ...", or "DIFF ..."). hpctrain's start-up (LibTorch's static
# initialisers) dominates, so two comparisons run at a time.
compare_expansion() {  # EXPR
  local expr=$1 want got err=$work/err.$BASHPID
  want=$(scontrol show hostnames "$expr" 2>"$err" || true)
  if grep -q 'Invalid hostlist' "$err"; then
    if "$hpctrain" hostnames "$expr" >/dev/null 2>&1; then
      echo "DIFF '$expr': scontrol rejects it, hpctrain accepts it"
    else
      echo "same '$expr': rejected by both"
    fi
  elif ! got=$("$hpctrain" hostnames "$expr" 2>&1); then
    echo "DIFF '$expr': scontrol gives $(echo "$want" | wc -l) hosts, hpctrain fails: $got"
  elif [[ $got != "$want" ]]; then
    echo "DIFF '$expr':"
    diff <(echo "$want") <(echo "$got") | head -5
  else
    echo "same '$expr': $(echo -n "$want" | grep -c '') hosts"
  fi
}
compare_suffixed() {  # EXPR WANT (Slurm 24.11's expansion)
  local got
  if ! scontrol show hostnames "$1" 2>&1 | grep -q 'Invalid hostlist'; then
    compare_expansion "$1"
    return
  fi
  if ! got=$("$hpctrain" hostnames "$1" 2>&1); then
    echo "DIFF '$1': hpctrain fails: $got"
    return
  fi
  got=$(tr '\n' ' ' <<<"$got")
  got=${got% }
  if [[ $got != "$2" ]]; then
    echo "DIFF '$1': hpctrain gives '$got', Slurm 24.11 gives '$2'"
  else
    echo "newer '$1': this scontrol rejects it; hpctrain gives Slurm 24.11's '$2'"
  fi
}
compare_stricter() {  # EXPR
  local mangled
  mangled=$(scontrol show hostnames "$1" 2>&1 | tr '\n' ' ')
  if "$hpctrain" hostnames "$1" >/dev/null 2>&1; then
    echo "DIFF '$1': hpctrain accepts malformed input (scontrol: $mangled)"
  else
    echo "stricter '$1': hpctrain rejects it (scontrol prints: $mangled)"
  fi
}
compare_compression() {  # HOSTS
  local want got
  want=$(scontrol show hostlist "$1" 2>&1)
  got=$("$hpctrain" hostlist "$1" 2>&1 || true)
  if [[ $got != "$want" ]]; then
    echo "DIFF hostlist '$1': scontrol '$want', hpctrain '$got'"
  else
    echo "same hostlist '$1': $want"
  fi
}
jobs_started=0
start() {  # FUNCTION ARG: in the background, output to the next numbered file
  "$@" >"$work/result.$jobs_started" 2>&1 &
  jobs_started=$((jobs_started + 1))
  while (($(jobs -rp | wc -l) >= 2)); do wait -n || true; done
}
for expr in "${same[@]}"; do start compare_expansion "$expr"; done
for expr in "${!suffixed[@]}"; do start compare_suffixed "$expr" "${suffixed[$expr]}"; done
for expr in "${stricter[@]}"; do start compare_stricter "$expr"; done
for hosts in "${ranged[@]}"; do start compare_compression "$hosts"; done
wait
for ((i = 0; i < jobs_started; i++)); do cat "$work/result.$i"; done
failures=$(cat "$work"/result.* | grep -c '^DIFF' || true)
echo "$(scontrol --version): ${#same[@]} + ${#suffixed[@]} expansions and ${#ranged[@]} compressions compared, ${#stricter[@]} refused; $failures differences"
[[ $failures -eq 0 ]]
