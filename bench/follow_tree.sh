#!/usr/bin/env bash
# What following a process tree through exec costs each program, and how
# many of their probe hits are caught: bash runs /bin/true N times and
# times each run (fork, exec, the run, exit, wait) with $EPOCHREALTIME (a
# builtin: no program of its own). Side by side in one run:
#   untraced             bash alone
#   ubtrace -c           without --follow (bash's children are not traced)
#   ubtrace --follow     every /bin/true loads the agent, connects, is
#                        hooked, then runs
#   bpftrace             Debian's bpftrace, the same uprobe system-wide
#                        (kernel uprobes; needs root), counting /bin/true
# The probe counts exit() calls by program: with N runs, N for `true` is
# every hit caught.
#   bench/follow_tree.sh [BUILD_DIR] [N]
set -u
build=${1:-build}
n=${2:-200}
ubtrace="$build/ubtrace"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

loop="for i in \$(seq $n); do s=\$EPOCHREALTIME; /bin/true; e=\$EPOCHREALTIME; echo \${s/./} \${e/./} >> $out/times; done"
script='uprobe:libc:exit { @[comm] = count(); }'

stats() { # label: median and p99 of the run times, in ms
  sort -n "$out/us" > "$out/sorted"
  local count med p99
  count=$(wc -l < "$out/sorted")
  med=$(sed -n "$(( (count + 1) / 2 ))p" "$out/sorted")
  p99=$(sed -n "$(( (count * 99 + 99) / 100 ))p" "$out/sorted")
  printf '%-18s %5d runs  median %7.2f ms  p99 %7.2f ms  wall %6.2f s  true hits %s\n' \
    "$1" "$count" "$(echo "$med / 1000" | bc -l)" "$(echo "$p99 / 1000" | bc -l)" \
    "$(echo "$2 / 1000000000" | bc -l)" "$3"
}

run() { # label hits-file command...
  local label=$1 hits=$2; shift 2
  rm -f "$out/times"
  local start end
  start=$(date +%s%N)
  "$@" > "$out/trace" 2>&1
  end=$(date +%s%N)
  awk '{ print $2 - $1 }' "$out/times" > "$out/us"
  local caught=-
  if [ -n "$hits" ]; then
    caught=$(grep -E "$hits" "$out/trace" | sed -E 's/.*: //' | head -1)
    caught=${caught:-0}
  fi
  stats "$label" $((end - start)) "$caught"
}

echo "bash runs /bin/true $n times ($(nproc) CPUs, $(uname -r))"
run untraced "" bash -c "$loop"
run "ubtrace -c" '^@\[true\]' "$ubtrace" -q -e "$script" -c "bash -c '$loop'"
run "ubtrace --follow" '^@\[true\]' "$ubtrace" --follow -q -e "$script" -c "bash -c '$loop'"
if command -v bpftrace > /dev/null && [ "$(id -u)" = 0 ]; then
  bpftrace -e 'uprobe:/lib/x86_64-linux-gnu/libc.so.6:exit /comm == "true"/ { @[comm] = count(); }' > "$out/bt" 2>&1 &
  bt=$!
  for _ in $(seq 100); do grep -q Attaching "$out/bt" && break; sleep 0.1; done
  sleep 0.5
  run bpftrace "" bash -c "$loop"
  kill -INT $bt; wait $bt
  printf '%-18s true hits %s\n' "" "$(grep -E '^@\[true\]' "$out/bt" | sed -E 's/.*: //')"
else
  echo "bpftrace: skipped (needs root and bpftrace)"
fi
