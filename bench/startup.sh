#!/usr/bin/env bash
# Wall time and peak RSS of `BEGIN { exit(); }` under ubtrace and, in the
# same run, Debian's bpftrace (when it can run: root).
#   bench/startup.sh [BUILD_DIR] [RUNS]
set -u
build=${1:-build}
runs=${2:-20}
prog='BEGIN { exit(); }'

tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT

measure() { # name command...
  local name=$1; shift
  local total=0 best=999999 rss=0
  for ((i = 0; i < runs; i++)); do
    local start end ms kb
    start=$(date +%s%N)
    /usr/bin/time -o "$tmp" -f '%M' "$@" >/dev/null 2>/dev/null
    kb=$(tail -1 "$tmp")
    end=$(date +%s%N)
    ms=$(( (end - start) / 1000 ))
    total=$((total + ms))
    ((ms < best)) && best=$ms
    ((kb > rss)) && rss=$kb
  done
  printf '%-10s mean %6.1f ms  best %6.1f ms  peak RSS %6.1f MB  (%d runs)\n' \
    "$name" "$(echo "$total / $runs / 1000" | bc -l)" "$(echo "$best / 1000" | bc -l)" \
    "$(echo "$rss / 1024" | bc -l)" "$runs"
}

measure ubtrace "$build/ubtrace" -q -e "$prog"
if [ "$(id -u)" -eq 0 ] && command -v bpftrace >/dev/null; then
  measure bpftrace bpftrace -e "$prog"
else
  echo "bpftrace   skipped: needs root and /usr/bin/bpftrace"
fi
