#!/usr/bin/env bash
# bench/gpu-proof.sh [--cpu | --dry-run] [--kit DIR] [--work DIR] [--out DIR] [--rounds N]
#
# The GPU proof in one command, on a machine that has a GPU, CUDA, a CUDA
# PyTorch (pip wheels, NCCL among them), CMake, ninja and a C++ compiler, and
# none of hpctrain's other dependencies nor a network: the lent GPU machine
# of docs/gpu.md. Those come in the kit that bench/gpu-kit.sh makes (DIR,
# default .gpu-kit/). Steps, each PASS or FAIL in the table at the end:
#   found       what is here: OS, glibc, compiler, CMake, ninja, nvcc, the
#               GPU and its driver, python3's torch with its CUDA, cuDNN and
#               NCCL, where NCCL's library and header are, this host's name
#   kit         the kit unpacked under the work directory (nothing is
#               installed: its libraries find each other through RUNPATH);
#               where the machine has a newer build of one of them (the
#               same soname, every symbol version), the machine's is used
#   hosts       this host's name must resolve (MPICH's launcher and
#               hpctrain's bootstrap both look it up); where it does not, a
#               line for it is added to /etc/hosts, and the note says so
#   configure   hpctrain against python3's torch (torch.utils.cmake_prefix_path),
#               the kit and NCCL's wheel, tests off (-DBUILD_TESTING=OFF):
#               must report a CUDA LibTorch and the NCCL backend on
#   build       hpctrain, build/bench/train_step_bench and build/bench/model_logits
#   smoke       bench/gpu-smoke.sh on the build: doctor --nccl, 30 bf16 steps
#               of DDP, the same again bit for bit, ZeRO-1, DDAP, and the
#               stop/resume that must end at the uninterrupted weights hash
#   throughput  the GPT-2-small shape (L12 d768 H12, V50304, T1024) in bf16:
#               hpctrain's training step against PyTorch eager (SDPA, foreach
#               AdamW) and torch.compile, alternated for N rounds (default
#               3), with MFU against the bf16 matmul peak hpctrain measures on
#               this GPU at start-up
#   logits      the smoke's DDP run: hpctrain's bf16 logits for one batch
#               against PyTorch's from the same weights, exported through
#               safetensors (tests/reference/compare_logits.py states the
#               tolerance)
#   hf          the smoke's DDP run (gpt), and a llama and a post-LayerNorm
#               bert trained here for 4 steps, each exported with `ckpt export
#               --format hf`: transformers' AutoModelForCausalLM
#               (AutoModelForMaskedLM for bert).from_pretrained must give
#               hpctrain's float32 logits within 1e-5 (tests/reference/
#               hf_check.py); SKIP where transformers is not installed
# Everything it writes goes under the work directory (default a new one under
# /tmp), and 8 files under DIR of --out (default $OUT, where the device tool
# collects at most 8): summary.txt, found.txt, configure.txt, build.log,
# smoke.txt, throughput.txt, logits.txt and logs.tar.gz (every step's log).
#
# --cpu rehearses the same steps on a machine without a GPU (a Debian 13 root
# with only a compiler, CMake, ninja and python3-torch: tests/platform/
# gpu-rehearsal.sh): the CPU LibTorch, 2 ranks and a tiny model in the smoke,
# a small shape and no torch.compile in the throughput. --dry-run prints every
# step's commands and runs none.
set -euo pipefail
shopt -s inherit_errexit
repo=$(cd "$(dirname "$0")/.." && pwd)
mode=gpu kit=$repo/.gpu-kit work="" out=${OUT:-} rounds=3
while (($#)); do
  case $1 in
    --cpu) mode=cpu ;;
    --dry-run) mode=dry ;;
    --kit) kit=$2; shift ;;
    --work) work=$2; shift ;;
    --out) out=$2; shift ;;
    --rounds) rounds=$2; shift ;;
    *) echo "gpu-proof: unknown argument '$1' (see the comment at the top of $0)" >&2; exit 2 ;;
  esac
  shift
done
[[ $rounds =~ ^[1-9][0-9]?$ ]] || { echo "gpu-proof: --rounds takes 1 to 99" >&2; exit 2; }
kit=$(realpath -m "$kit")
work=${work:-$(mktemp -d /tmp/gpu-proof.XXXXXX)}
work=$(realpath -m "$work")
out=${out:-$work/out}
mkdir -p "$work" "$out"
build=$work/build
unpacked=$work/kit
cores=$(nproc)
started=$SECONDS

declare -a names results notes seconds
blocked=0
record() { names+=("$1"); results+=("$2"); notes+=("$3"); seconds+=("$4"); }

# run CMD...: prints CMD under --dry-run, runs it otherwise.
run() {
  if [[ -n ${DRY:-} ]]; then
    printf '%q ' "$@"
    echo
  else
    "$@"
  fi
}

# run_into FILE CMD...: runs CMD with its output appended to FILE (prints both
# under --dry-run).
run_into() {
  local file=$1
  shift
  if [[ -n ${DRY:-} ]]; then
    printf '%q ' "$@"
    echo ">>$file"
  else
    "$@" >>"$file"
  fi
}

# step NAME FUNCTION: runs it into $work/NAME.log. Once the kit, the configure
# or the build has failed, later steps are NOT RUN (they need what it made);
# the others run whatever failed before them, so that one lease shows all it
# can. A function runs where errexit does not apply (a || list), so each says
# where it fails.
step() {
  local name=$1 started_step=$SECONDS rc=0 note
  shift
  if [[ $mode == dry ]]; then
    echo "# $name"
    DRY=1 "$@"
    return 0
  fi
  if ((blocked)); then
    record "$name" "NOT RUN" "an earlier step failed" 0
    return 0
  fi
  "$@" >"$work/$name.log" 2>&1 || rc=$?
  note=$(grep -v '^$' "$work/$name.log" | tail -1 | cut -c1-120)
  if ((rc == 0)); then
    record "$name" PASS "$note" $((SECONDS - started_step))
  elif ((rc == 77)); then
    record "$name" SKIP "$note" $((SECONDS - started_step))
  else
    record "$name" FAIL "$note" $((SECONDS - started_step))
    [[ " kit configure build " == *" $name "* ]] && blocked=1
  fi
  return 0
}

python_facts() {
  python3 - "$mode" <<'EOF'
import os, sys
try:
    import torch
except ImportError as e:
    print(f"torch: cannot import ({e})"); sys.exit(1)
print(f"torch: {torch.__version__} at {os.path.dirname(torch.__file__)}")
print(f"torch cmake prefix: {torch.utils.cmake_prefix_path}")
print(f"torch CUDA: {torch.version.cuda}; available: {torch.cuda.is_available()}")
if torch.cuda.is_available():
    p = torch.cuda.get_device_properties(0)
    print(f"GPU 0: {p.name}, {p.total_memory / 2**30:.1f} GiB, {p.multi_processor_count} SMs, "
          f"capability {p.major}.{p.minor}; {torch.cuda.device_count()} GPU(s)")
    print(f"torch cuDNN: {torch.backends.cudnn.version()}; torch NCCL: {torch.cuda.nccl.version()}")
try:
    import nvidia.nccl
    home = list(nvidia.nccl.__path__)[0]
    print(f"NCCL wheel: {home} ({', '.join(sorted(os.listdir(os.path.join(home, 'lib'))))})")
except ImportError:
    print("NCCL wheel: none (nvidia.nccl not importable)")
EOF
}

found() {
  if [[ -n ${DRY:-} ]]; then
    echo "# /etc/os-release, ldd --version, c++/cmake/ninja/nvcc --version, nvidia-smi, python3's torch and NCCL"
    return 0
  fi
  {
    echo "os: $(. /etc/os-release && echo "${PRETTY_NAME:-?}"), kernel $(uname -r), $cores cores"
    echo "glibc: $(ldd --version | head -1)"
    echo "c++: $(c++ --version | head -1)"
    echo "cmake: $(cmake --version | head -1); ninja $(ninja --version)"
    if command -v nvcc >/dev/null; then echo "nvcc: $(nvcc --version | tail -2 | head -1)"; else echo "nvcc: none on PATH"; fi
    if command -v nvidia-smi >/dev/null; then
      echo "nvidia-smi: $(nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv,noheader | head -4 | paste -sd';')"
    else
      echo "nvidia-smi: none"
    fi
    python_facts
    echo "host: $(hostname); resolves to: $(getent hosts "$(hostname)" | head -1 || echo nothing)"
  } | tee "$out/found.txt" || return 1
  [[ $mode == cpu ]] || grep -q '^torch CUDA: [0-9].*available: True' "$out/found.txt" ||
    { echo "python3's torch has no CUDA or sees no GPU"; return 1; }
  echo "found: $(grep -c . "$out/found.txt") facts (found.txt)"
}

# untar ARCHIVE DIR: with xz where there is one, else through Python's lzma.
untar() {
  if command -v xz >/dev/null; then
    run tar -C "$2" -xJf "$1"
  else
    run python3 -c 'import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2], filter="tar")' "$1" "$2"
  fi
}

# exports FILE: the symbols a shared library defines, each with its version.
exports() { objdump -T "$1" | awk '/^[0-9a-f]+ / && !/\*UND\*/ { v = $(NF - 1); gsub(/[()]/, "", v); print v, $NF }' | sort -u; }

# prefer_machine: where this machine has a library of the same soname that
# defines every symbol, with its version, that the kit's does (a newer build of
# it: the kit is Debian 12's), the machine's is used, to link and to run, so
# that the process holds one copy, the one the machine's other libraries were
# built against (Debian 13's libssl.so.3 needs OPENSSL_3.2.0, which the kit's
# libcrypto.so.3 lacks). Not where the machine's copy needs a library the kit
# keeps (Debian 13's libgnutls.so.30 needs a newer libnettle.so.8 than the
# kit's, which the machine's cannot replace: it dropped internal symbols the
# kit's gnutls uses): then the kit's pair stays. Taken out of the kit, a library's file goes to
# replaced/, outside every RUNPATH and every link.
prefer_machine() {
  local lib=$unpacked/usr/lib/x86_64-linux-gnu f n soname changed=1 cache
  declare -A kit_file=() host=()
  cache=$(ldconfig -p)
  for f in "$lib"/*.so.*; do
    [[ -L $f ]] && continue
    soname=$(objdump -p "$f" | awk '$1 == "SONAME" { print $2 }')
    [[ -n $soname ]] && kit_file[$soname]=$f
  done
  for soname in "${!kit_file[@]}"; do
    f=$(awk -v s="$soname" '$1 == s && /x86-64/ { print $NF; exit }' <<<"$cache")
    [[ -n $f ]] || continue
    [[ -z $(comm -23 <(exports "${kit_file[$soname]}") <(exports "$f")) ]] && host[$soname]=$f
  done
  while ((changed)); do
    changed=0
    for soname in "${!host[@]}"; do
      for n in $(objdump -p "${host[$soname]}" | awk '$1 == "NEEDED" { print $2 }'); do
        if [[ -n ${kit_file[$n]:-} && -z ${host[$n]:-} ]]; then
          echo "the machine's $soname needs $n, which stays the kit's: the kit's $soname stays too"
          unset "host[$soname]"
          changed=1
          break
        fi
      done
    done
  done
  mkdir -p "$lib/replaced"
  for soname in "${!host[@]}"; do
    f=${kit_file[$soname]}
    mv "$f" "$lib/replaced/"
    rm -f "$lib/$soname"
    for n in "$lib"/*.so; do
      [[ -L $n && $(readlink "$n") == "$(basename "$f")" ]] && ln -sfn "${host[$soname]}" "$n"
    done
    echo "the machine's $soname (${host[$soname]}) defines every symbol the kit's does: it is used instead"
  done
}

unpack_kit() {
  [[ -n ${DRY:-} || -f $kit/packages.tar.xz ]] || { echo "no kit at $kit (make it with bench/gpu-kit.sh)"; return 1; }
  run rm -rf "$unpacked" "$work/data"
  run mkdir -p "$unpacked" || return 1
  untar "$kit/packages.tar.xz" "$unpacked" || return 1
  untar "$kit/data.tar.xz" "$work" || return 1
  [[ -n ${DRY:-} ]] && { echo "# prefer_machine: the machine's build of a library where it is at least the kit's"; return 0; }
  prefer_machine || return 1
  echo "kit: $(du -sh "$unpacked" | cut -f1) unpacked into $unpacked; data set $(du -sh "$work/data" | cut -f1)"
}

hosts() {
  local name
  name=$(hostname)
  if [[ -n ${DRY:-} ]]; then
    echo "getent hosts $name || echo \"127.0.1.1 $name\" >>/etc/hosts"
    return 0
  fi
  if getent hosts "$name" >/dev/null; then
    echo "$name resolves to $(getent hosts "$name" | awk '{print $1; exit}')"
  elif [[ $mode == gpu && -w /etc/hosts ]]; then
    echo "127.0.1.1 $name" >>/etc/hosts
    echo "$name did not resolve: added '127.0.1.1 $name' to /etc/hosts (a lent machine is thrown away after)"
  else
    echo "$name does not resolve, and this is no throwaway machine: add it to /etc/hosts"
    return 1
  fi
}

configure() {
  local torch_query='import torch; print(torch.utils.cmake_prefix_path)'
  local nccl_query='import nvidia.nccl; print(list(nvidia.nccl.__path__)[0])'
  local prefix nccl="" args=()
  if [[ -n ${DRY:-} ]]; then
    echo "TORCH_PREFIX=\$(python3 -c '$torch_query')"
    echo "NCCL_WHEEL_DIR=\$(python3 -c '$nccl_query')"
    prefix='$TORCH_PREFIX' nccl='$NCCL_WHEEL_DIR'
  else
    prefix=$(python3 -c "$torch_query")
    # Debian's python3-torch names a cmake directory it does not ship (its
    # LibTorch config is libtorch-dev's, found by CMake itself); a wheel's is there.
    [[ -f $prefix/Torch/TorchConfig.cmake ]] || prefix=""
    [[ $mode == cpu ]] || nccl=$(python3 -c "$nccl_query" 2>/dev/null || true)
  fi
  if [[ $mode != cpu ]]; then
    args+=(-DTORCH_CUDA_ARCH_LIST=9.0)
    [[ -d /usr/local/cuda ]] && args+=(-DCUDAToolkit_ROOT=/usr/local/cuda)
  fi
  run env ${nccl:+NCCL_HOME=$nccl} cmake -S "$repo" -B "$build" -G Ninja -C "$unpacked/hints.cmake" \
    -DCMAKE_BUILD_TYPE=Release -DBUILD_TESTING=OFF -DHPCTRAIN_CLUSTER_TESTS=OFF -DHPCTRAIN_BENCH=ON \
    "-DCMAKE_PREFIX_PATH=$unpacked/usr${prefix:+;$prefix}" "${args[@]}"
}

# configure_checked: configure, then (on a GPU) what it must have found.
configure_checked() {
  [[ -n ${DRY:-} ]] && { configure; return 0; }
  configure | tee "$work/cmake.txt" || return 1
  grep '^-- hpctrain: ' "$work/cmake.txt" >"$out/configure.txt" || true
  [[ $mode == cpu ]] && return 0
  grep -q 'hpctrain: NCCL backend ON' "$work/cmake.txt" || { echo "the NCCL backend is off"; return 1; }
  if grep -q 'LibTorch is CPU-only' "$work/cmake.txt"; then echo "configured against a CPU-only LibTorch"; return 1; fi
  echo "a CUDA LibTorch and the NCCL backend: $(grep -o 'hpctrain: NCCL [0-9.]* ([^)]*)' "$work/cmake.txt")"
}

build_targets() {
  run cmake --build "$build" -j "$cores" --target hpctrain train_step_bench model_logits || return 1
  [[ -z ${DRY:-} ]] || return 0
  "$build/hpctrain" --version
}

smoke() {
  # The kit's data set was prepared on the machine that made the kit, from its
  # Python standard library; this machine's (if any) is another corpus, and
  # hpctrain would refuse the data set as prepared from other sources. Named
  # as sources that are not here, it is trained on as prepared, and the run
  # says so.
  local args=(--prebuilt --build-dir "$build" --data "$work/data" --work "$work/smoke"
    --set "data.sources=[\"$kit/the-corpus-stayed-on-the-machine-that-made-the-kit\"]")
  [[ $mode == cpu ]] && args=(--cpu "${args[@]}")
  if [[ -n ${DRY:-} ]]; then
    run bash "$repo/bench/gpu-smoke.sh" "${args[@]}"
    bash "$repo/bench/gpu-smoke.sh" --dry-run "${args[@]}" | sed 's/^/#   /'
    return 0
  fi
  local rc=0
  PATH=$unpacked/usr/bin:$PATH bash "$repo/bench/gpu-smoke.sh" "${args[@]}" >"$out/smoke.txt" 2>&1 || rc=$?
  cat "$out/smoke.txt"
  echo "gpu-smoke: $(awk '$2 ~ /^(PASS|FAIL|SKIP|NOT)$/ { n[$2]++ } END { for (r in n) printf "%s %d, ", r, n[r] }' \
    "$out/smoke.txt" | sed 's/, $//') (smoke.txt)"
  return "$rc"
}

throughput() {
  local shape device=cuda precision=bf16 steps=20 warmup=5 compile=1
  shape=(--layers 12 --d-model 768 --heads 12 --vocab 50304 --batch 8 --seq 1024)
  if [[ $mode == cpu ]]; then
    # fp32 on CPUs: their bf16 matmul peak is an emulation's, far under the
    # fp32 one, and MFU against it means nothing.
    shape=(--layers 2 --d-model 64 --heads 2 --vocab 512 --batch 4 --seq 64)
    device=cpu precision=fp32 steps=5 warmup=1 compile=0
  fi
  local common=("${shape[@]}" --steps "$steps" --warmup "$warmup" --device "$device" --precision "$precision")
  local r
  for r in $(seq "$rounds"); do
    if [[ -n ${DRY:-} ]] && ((r > 1)); then
      echo "# the same, $rounds rounds in all"
      break
    fi
    run_into "$work/throughput.hpctrain.jsonl" "$build/bench/train_step_bench" "${common[@]}" --threads "$cores" ||
      return 1
    run_into "$work/throughput.eager.jsonl" python3 "$repo/bench/bench_pytorch.py" "${common[@]}" \
      --threads "$cores" --optimizer foreach --sdpa || return 1
    if ((compile)); then
      run_into "$work/throughput.compile.jsonl" python3 "$repo/bench/bench_pytorch.py" "${common[@]}" \
        --threads "$cores" --optimizer foreach --sdpa --compile || return 1
    fi
  done
  [[ -z ${DRY:-} ]] || return 0
  python3 - "$work" "$compile" <<'EOF' | tee "$out/throughput.txt"
import json, statistics, sys
work, compiled = sys.argv[1], sys.argv[2] == "1"
# one JSON line per run (train_step_bench prints its log before it)
runs = {n: [json.loads(l) for l in open(f"{work}/throughput.{n}.jsonl") if l.startswith("{")]
        for n in (["hpctrain", "eager"] + (["compile"] if compiled else []))}
h = runs["hpctrain"]
peaks = [r["sgemm_peak_gflops"] * 1e9 for r in h]  # this GPU's bf16 matmul peak, measured each round
print(f"shape: L{h[0]['layers']} d{h[0]['d_model']} H{h[0]['heads']} V{h[0]['vocab']} B{h[0]['batch']} "
      f"T{h[0]['seq']}, {h[0]['params']} parameters, {h[0]['device']} {h[0]['precision']}, {len(h)} round(s)")
peak = statistics.median(peaks)
rate = f"{peak / 1e12:.1f} TFLOP/s" if peak >= 1e12 else f"{peak / 1e9:.1f} GFLOP/s"
print(f"peak: {rate} ({h[0]['precision']} matmul, measured by hpctrain each round)")
print(f"{'contender':<34} {'tokens/s':>10} {'ms/step':>8} {'MFU':>6} {'hpctrain/x':>10}")
for name, rs in runs.items():
    label = "hpctrain" if name == "hpctrain" else \
        f"PyTorch {rs[0]['torch_version']} " + ("eager (SDPA)" if name == "eager" else "torch.compile")
    tps = statistics.median(r["tokens_per_s"] for r in rs)
    mfu = statistics.median(r["tokens_per_s"] * r["flops_per_token"] / p for r, p in zip(rs, peaks))
    ratio = statistics.median(a["tokens_per_s"] / b["tokens_per_s"] for a, b in zip(h, rs))
    print(f"{label:<34} {tps:>10.0f} {statistics.median(r['step_ms_median'] for r in rs):>8.1f} "
          f"{100 * mfu:>5.1f}% {ratio:>10.2f}")
EOF
}

logits() {
  local run_dir=$work/smoke/ddp device=cuda
  [[ $mode == cpu ]] && device=cpu
  run "$build/hpctrain" ckpt export "$run_dir" --out "$work/weights.safetensors" || return 1
  run "$build/bench/model_logits" "$run_dir" "$work/logits" --device "$device" --precision bf16 || return 1
  if [[ -n ${DRY:-} ]]; then
    run python3 "$repo/tests/reference/compare_logits.py" "$work/logits" "$work/weights.safetensors"
    return 0
  fi
  python3 "$repo/tests/reference/compare_logits.py" "$work/logits" "$work/weights.safetensors" | tee "$out/logits.txt"
}

hf() {
  if [[ -z ${DRY:-} ]] && ! python3 -c 'import transformers' 2>/dev/null; then
    echo "transformers is not installed here: the HF export was not loaded by from_pretrained"
    return 77
  fi
  local run_dir kind
  for kind in llama bert; do
    # shellcheck disable=SC2046  # the kind's --set pairs
    run "$build/hpctrain" train "$repo/jobs/quickstart.toml" --set "data.dir=$work/data" \
      --set "data.sources=[\"$kit/the-corpus-stayed-on-the-machine-that-made-the-kit\"]" --set model.kind=$kind \
      $([[ $kind == llama ]] && echo --set model.n_kv_head=2 || echo --set model.norm_position=post) \
      --set model.n_layer=2 --set model.d_model=128 --set training.steps=4 \
      --set training.micro_batch_size=4 --set eval.interval=0 --set eval.samples=16 --set eval.final=sample \
      --set eval.test=false --set eval.sample_tokens=0 --set "job.run_dir=$work/hf-$kind" || return 1
  done
  for run_dir in "$work/smoke/ddp" "$work/hf-llama" "$work/hf-bert"; do
    run "$build/hpctrain" ckpt export "$run_dir" --format hf --out "$run_dir-hf" || return 1
    run "$build/bench/model_logits" "$run_dir" "$run_dir-logits" --device cpu --precision fp32 || return 1
    run python3 "$repo/tests/reference/hf_check.py" transformers "$run_dir-hf" "$run_dir-logits" || return 1
  done
}

# summarize: the table and the logs under $out, after every step, so that a
# run stopped at its time limit still brings back what it did.
summarize() {
  local commit
  commit=$(git -C "$repo" rev-parse --short=12 HEAD 2>/dev/null || echo "unknown (no git here)")
  {
    echo "gpu-proof ($mode, commit $commit, kit of $(sed -n '1s/.* at \([^,]*\),.*/\1/p' "$kit/MANIFEST" 2>/dev/null)," \
      "$((SECONDS - started)) s)"
    printf '%-10s %-7s %5s  %s\n' step result s note
    for i in "${!names[@]}"; do
      printf '%-10s %-7s %5s  %s\n' "${names[$i]}" "${results[$i]}" "${seconds[$i]}" "${notes[$i]}"
    done
  } >"$out/summary.txt"
  cp "$work/build.log" "$out/build.log" 2>/dev/null || true
  tar -C "$work" --exclude=./build --exclude=./kit --exclude=./data --exclude=./out --exclude='*.safetensors' \
    --exclude='checkpoints' -czf "$out/logs.tar.gz" . 2>/dev/null || true
}

for s in found:found kit:unpack_kit hosts:hosts configure:configure_checked build:build_targets smoke:smoke \
  throughput:throughput logits:logits hf:hf; do
  step "${s%%:*}" "${s#*:}"
  [[ $mode == dry ]] || summarize
done
[[ $mode == dry ]] && exit 0

failed=0
for i in "${!names[@]}"; do
  [[ ${results[$i]} == FAIL ]] || continue
  failed=1
  echo "--- ${names[$i]}: the last lines of its output"
  tail -n 25 "$work/${names[$i]}.log"
done
[[ -f $out/throughput.txt ]] && { echo; cat "$out/throughput.txt"; }
echo
cat "$out/summary.txt"
exit "$failed"
