#!/usr/bin/env bash
# Wall time of a whole trace that attaches to N running processes and ends
# at once (inject, hook, BEGIN { exit(); }, unhook, detach), for several N,
# and in the same run Debian's bpftrace with the same uprobe on the file
# (the kernel covers every process that maps it; needs root).
#   bench/attach_many.sh [BUILD_DIR] [RUNS] [N...]
set -u
build=${1:-build}
runs=${2:-5}
counts=("${@:3}")
[ ${#counts[@]} -eq 0 ] && counts=(1 10 50)
prog="$build/tests/testprogs/ticker"
script="uprobe:$prog:tick { @ = count(); } BEGIN { exit(); }"

pids=()
cleanup() { [ ${#pids[@]} -gt 0 ] && kill "${pids[@]}" 2>/dev/null; }
trap cleanup EXIT

measure() { # label command...
  local label=$1; shift
  local total=0 best=999999999 ms start end
  for ((i = 0; i < runs; i++)); do
    start=$(date +%s%N)
    "$@" >/dev/null 2>&1 || echo "$label: run $i failed" >&2
    end=$(date +%s%N)
    ms=$(( (end - start) / 1000 ))
    total=$((total + ms))
    ((ms < best)) && best=$ms
  done
  printf '%-26s mean %8.1f ms  best %8.1f ms  (%d runs)\n' "$label" \
    "$(echo "$total / $runs / 1000" | bc -l)" "$(echo "$best / 1000" | bc -l)" "$runs"
}

for n in "${counts[@]}"; do
  while [ ${#pids[@]} -lt "$n" ]; do
    "$prog" 100000000 >/dev/null &
    pids+=($!)
  done
  sleep 0.5 # every one past its exec
  list=$(IFS=,; echo "${pids[*]:0:$n}")
  measure "ubtrace -p ($n processes)" "$build/ubtrace" -q -p "$list" -e "$script"
done
if [ "$(id -u)" -eq 0 ] && command -v bpftrace >/dev/null; then
  measure "bpftrace (${#pids[@]} running)" bpftrace -e "$script"
else
  echo "bpftrace skipped: needs root and /usr/bin/bpftrace"
fi
