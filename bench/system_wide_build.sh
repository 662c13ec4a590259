#!/bin/sh
# A build under a system-wide trace: what share of its malloc calls is
# caught, and what the trace costs it, side by side with bpftrace.
#
#   sh bench/system_wide_build.sh [BUILD_DIR] [FILES]
#
# make -j2 compiles FILES (default 30) small C files with gcc (each a
# gcc driver, a cc1 and an as: short programs, started three at a time),
# untraced, then under `uprobe:libc:malloc { @[comm] = count(); }` run
# system-wide by ubtrace and by bpftrace (root, kernel uprobes: every
# call). Prints each build's wall time and the calls counted for make,
# gcc, cc1 and as. Needs root for both tracers' system-wide view.
set -u
build=${1:-build}
files=${2:-30}
ubtrace=$(readlink -f "$build/ubtrace")
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
i=1
while [ $i -le "$files" ]; do
  printf '#include <stdio.h>\nint f%d(void) { return %d; }\n' $i $i > "$dir/f$i.c"
  i=$((i + 1))
done
printf 'all: $(patsubst %%.c,%%.o,$(wildcard f*.c))\n%%.o: %%.c\n\tgcc -O1 -c $< -o $@\n' > "$dir/Makefile"
libc=$(ldd /bin/true | sed -n 's/.*libc.so.6 => \([^ ]*\).*/\1/p')
script="uprobe:$libc:malloc { @[comm] = count(); }"

build_once() { # LABEL
  rm -f "$dir"/*.o
  start=$(date +%s.%N)
  make -s -j2 -C "$dir" > /dev/null
  end=$(date +%s.%N)
  echo "$1 build $(echo "$end - $start" | bc) s"
}
counts() { # LABEL OUT
  for comm in make gcc cc1 as; do
    n=$(sed -n "s/^@\[$comm\]: //p" "$2")
    printf '%s   %-5s %s calls\n' "$1" "$comm" "${n:-0}"
  done
}
trace() { # LABEL READY-PATTERN COMMAND...
  label=$1 ready=$2
  shift 2
  "$@" -e "$script" > "$dir/$label.out" 2>&1 &
  pid=$!
  i=0
  until grep -q "$ready" "$dir/$label.out" || [ $i -ge 3000 ]; do
    sleep 0.01
    i=$((i + 1))
  done
  build_once "$label"
  sleep 0.5
  kill -INT $pid
  wait $pid
  counts "$label" "$dir/$label.out"
  grep "system-wide: traced" "$dir/$label.out"
}

build_once untraced
build_once untraced
trace ubtrace "^Attached" "$ubtrace" -v
if command -v bpftrace > /dev/null && [ "$(id -u)" = 0 ]; then
  trace bpftrace "^Attaching" bpftrace
else
  echo "bpftrace: not run (needs bpftrace and root)"
fi
