#!/usr/bin/env bash
# The GPU probes' device check: one script, one call, on a machine with an
# NVIDIA GPU (CUDA driver and nvcc; no LLVM; nothing installable). It uses
# the bundle tests/gpu/make-device-bundle.sh made (ubtrace with its own
# loader and libraries, the agent) and the repository's sample apps, which
# it builds here with the machine's nvcc.
#
#   tests/gpu/device-check.sh BUNDLE [OUT]     (from the repository root)
#
# BUNDLE is the bundle folder or its .tar.xz; OUT defaults to $OUT (the run
# tool's folder) or /tmp/ubtrace-device-check. It writes OUT/results.txt
# (one line per check: PASS/FAIL name, expected, got; then the timings and
# ratios) and OUT/log.txt (every command and its output); exit status 0
# when every check passed.
#
# Checks (exact values, computed from each app's launch geometry):
#   start        the bundle's ubtrace runs; the agent loads into a process
#                (if not: the agent is rebuilt with this machine's compiler,
#                tests/gpu/rebuild-agent.sh, and that one is used)
#   count        kernel::vector_add count() = gridDim*blockDim x launches
#   exit-count   kernelret::vector_add count(), same number
#   block-hist   a per-block histogram of kernel durations holds one sample
#                per block and launch
#   args         param_types' arguments as the kernel got them
#   mixed        uprobe on main + GPU probes, one map shared (merged)
#   multi        every kernel of multi_kernel and matmul, counted
#   correct      each instrumented app prints what it prints untraced
# Timing (vector_add, memory-bound, GPU time by CUDA events, best of 3):
# uninstrumented, an empty probe, count(); the target is count() <= 1.2x.
set -uo pipefail

bundle_arg=${1:?usage: device-check.sh BUNDLE [OUT]}
out=${2:-${OUT:-/tmp/ubtrace-device-check}}
mkdir -p "$out"
out=$(realpath "$out")
results=$out/results.txt
log=$out/log.txt
: >"$results"
: >"$log"
repo=$(pwd)
fail=0

note() { echo "$*" | tee -a "$results"; }
run() { # run CMD...: into the log, output on stdout
  echo "\$ $*" >>"$log"
  "$@" 2>&1 | tee -a "$log"
  return "${PIPESTATUS[0]}"
}
check() { # check NAME EXPECTED GOT
  if [ "$2" = "$3" ]; then
    note "PASS $1 expected=$2 got=$3"
  else
    note "FAIL $1 expected=$2 got=$3"
    fail=1
  fi
}

# ---- the machine ------------------------------------------------------
note "machine $(uname -srm)"
note "gpu $(nvidia-smi -L 2>/dev/null | head -1)"
note "driver $(nvidia-smi --query-gpu=driver_version --format=csv,noheader 2>/dev/null | head -1)"
nvcc=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
note "nvcc $("$nvcc" --version 2>/dev/null | tail -1)"
cuda_lib=$(dirname "$(dirname "$nvcc")")/lib64

# ---- the bundle starts ----------------------------------------------------
if [ -f "$bundle_arg" ]; then
  mkdir -p "$out/bundle"
  tar -C "$out/bundle" -xJf "$bundle_arg"
  bundle=$(find "$out/bundle" -maxdepth 3 -name run-ubtrace -path '*/bin/*' |
    head -1 | xargs dirname | xargs dirname)
else
  bundle=$(realpath "$bundle_arg")
fi
ubtrace=$bundle/bin/run-ubtrace
started=$(run "$ubtrace" -e 'BEGIN { printf("started\n"); exit(); }' | grep -c '^started$')
check start-cli 1 "$started"
if [ "$started" != 1 ]; then
  note "FAIL the bundle's ubtrace does not start here; see log.txt"
  exit 1
fi
export UBTRACE_AGENT=$bundle/lib/libubtrace_preload.so
loaded=$(run env LD_PRELOAD="$UBTRACE_AGENT" /bin/true && echo yes || echo no)
if [ "$(echo "$loaded" | tail -1)" != yes ] ||
   echo "$loaded" | grep -qi 'error\|not found'; then
  note "note the bundle's agent does not load here; rebuilding it"
  if agent=$(run "$repo/tests/gpu/rebuild-agent.sh" "$bundle" "$out/agent" | tail -1) &&
     [ -f "$agent" ]; then
    export UBTRACE_AGENT=$agent
  fi
fi
loaded=$(run env LD_PRELOAD="$UBTRACE_AGENT" /bin/true && echo yes || echo no)
check start-agent yes "$(echo "$loaded" | tail -1)"

# ---- the sample apps, built here --------------------------------------
apps=$out/apps
mkdir -p "$apps"
gencode="-gencode arch=compute_90,code=[sm_90,compute_90]"
for app in vector_add matmul param_types multi_kernel; do
  for rt in static shared; do
    echo "$nvcc $gencode -O2 -cudart $rt -o $apps/${app}_$rt $repo/tests/gpu/apps/$app.cu"
  done
done | xargs -P 8 -I{} sh -c '{} >>'"$log"' 2>&1'
for rt in static shared; do
  [ -x "$apps/vector_add_$rt" ] || { note "FAIL build vector_add_$rt"; fail=1; }
done
export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}$cuda_lib

trace() { # trace SCRIPT CMD: ubtrace's output (stdout and stderr)
  run timeout 300 "$ubtrace" -e "$1" -c "$2"
}
map_value() { # map_value NAME < output: the value of a scalar map
  sed -n "s/^@$1: \([0-9-]*\)\$/\1/p" | tail -1
}
hist_total() { # hist_total NAME < output: the samples of a histogram
  awk -v m="@$1:" '$0 ~ "^"m {on=1; next} on && /^\[/ {
      sub(/.*\)/, ""); split($0, f, " "); s += f[1]; next }
    on && !/^\[/ {on=0} END {print s+0}'
}

n=$((1 << 20)) repeat=3 block=256
grid=$(((n + block - 1) / block))
threads=$((grid * block * repeat))

for rt in static shared; do
  exe="$apps/vector_add_$rt"
  plain=$(run "$exe" $n $repeat | grep '^vector_add')
  # count() at kernel entry: every thread of every launch.
  o=$(trace 'kernel::vector_add { @threads = count(); }' "$exe $n $repeat")
  check "count-$rt" "$threads" "$(echo "$o" | map_value threads)"
  check "correct-count-$rt" "$plain" "$(echo "$o" | grep '^vector_add')"
  # kernelret: every thread leaves once.
  o=$(trace 'kernelret::vector_add { @exits = count(); }' "$exe $n $repeat")
  check "exit-count-$rt" "$threads" "$(echo "$o" | map_value exits)"
  # Per-block durations: one sample per block and launch.
  o=$(trace 'kernel::vector_add /threadIdx.x == 0/ { @start[blockIdx.x] = nsecs; }
             kernelret::vector_add /threadIdx.x == 0/ {
               @block_ns = hist(nsecs - @start[blockIdx.x]); }
             END { clear(@start); }' "$exe $n $repeat")
  check "block-hist-$rt" "$((grid * repeat))" "$(echo "$o" | hist_total block_ns)"
done

# Arguments as the kernel received them: count (int), scale (float bits),
# offset (long long, 1 << 33); 64 threads in one block.
for rt in static shared; do
  exe="$apps/param_types_$rt"
  o=$(trace 'kernel::mixed_params /threadIdx.x == 0/ {
               printf("args count=%d scale=%x offset=%lld\n", arg0, arg1, arg4); }
             kernel::mixed_params { @sum = sum(arg0); @hi = max(threadIdx.x); }' "$exe 2.0")
  check "args-$rt" "args count=64 scale=40000000 offset=8589934592" \
    "$(echo "$o" | grep '^args ' | head -1)"
  check "args-sum-$rt" 4096 "$(echo "$o" | map_value sum)"
  check "args-max-$rt" 63 "$(echo "$o" | map_value hi)"
done

# A uprobe and GPU probes in one script, one map shared by both sides.
exe="$apps/vector_add_static"
o=$(trace "uprobe:$exe:main { @main = count(); @c = count(); }
           kernel::vector_add { @threads = count(); @c = count(); }" "$exe $n $repeat")
check mixed-uprobe 1 "$(echo "$o" | map_value main)"
check mixed-gpu "$threads" "$(echo "$o" | map_value threads)"
check mixed-merged "$((threads + 1))" "$(echo "$o" | map_value c)"

# Every kernel of the other apps: multi_kernel launches 5 kernels of
# 8 blocks x 128 threads (n = 1000); matmul 16 x 16 blocks of 16 x 16.
o=$(trace 'kernel::* { @calls = count(); } kernelret::* { @rets = count(); }' \
  "$apps/multi_kernel_static 1000")
check multi-entry "$((5 * 8 * 128))" "$(echo "$o" | map_value calls)"
check multi-correct "$(run "$apps/multi_kernel_static" 1000 | grep '^multi_kernel')" \
  "$(echo "$o" | grep '^multi_kernel')"
o=$(trace 'kernel::matmul_tiled { @t = count(); }' "$apps/matmul_shared 256")
check matmul-count "$((16 * 16 * 16 * 16))" "$(echo "$o" | map_value t)"
check matmul-correct "$(run "$apps/matmul_shared" 256 | grep '^matmul')" \
  "$(echo "$o" | grep '^matmul')"

# ---- overhead on the memory-bound kernel -----------------------------------
big=$((1 << 26)) reps=50
best() { # best CMD...: the least kernel_ms of 3 runs
  for i in 1 2 3; do
    UBT_KERNEL_TIME=1 run "$@" | sed -n 's/.*kernel_ms=\([0-9.]*\).*/\1/p'
  done | sort -g | head -1
}
exe="$apps/vector_add_static"
t_plain=$(best "$exe" $big $reps)
t_empty=$(best timeout 300 "$ubtrace" -e 'kernel::vector_add { }' -c "$exe $big $reps")
t_count=$(best timeout 300 "$ubtrace" -e 'kernel::vector_add { @c = count(); }' -c "$exe $big $reps")
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.3f", a / b; else print "n/a" }'; }
note "timing vector_add n=$big launches=$reps (GPU ms, best of 3)"
note "timing uninstrumented_ms=$t_plain empty_probe_ms=$t_empty count_ms=$t_count"
note "timing empty_ratio=$(ratio "$t_empty" "$t_plain") count_ratio=$(ratio "$t_count" "$t_plain") target_count_ratio<=1.2"
# Wall time with module load and the driver's JIT of the rewritten PTX.
for cfg in plain count; do
  start=$(date +%s%N)
  if [ $cfg = plain ]; then run "$exe" 1024 1 >/dev/null
  else trace 'kernel::vector_add { @c = count(); }' "$exe 1024 1" >/dev/null; fi
  note "wall ${cfg}_ms=$(( ($(date +%s%N) - start) / 1000000 ))"
done

if [ $fail -eq 0 ]; then note "RESULT PASS"; else note "RESULT FAIL"; fi
exit $fail
