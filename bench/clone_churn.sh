#!/usr/bin/env bash
# What a tracer costs a program that makes tasks: bench/clone_churn.c
# times N pthread_create+join, vfork+_exit+waitpid and fork+_exit+waitpid
# (ns per call). Side by side, ROUNDS rounds in turn, medians printed:
#   untraced          the program alone
#   ubtrace uprobe    -c with a uprobe that does not fire in the loops
#                     (the agent is in; libc's clone sites rewritten)
#   ubtrace syscall   -c with a system call probe on a call the loops do
#                     not make (dispatch on: every clone goes through it)
#   bpftrace uprobe   Debian's bpftrace, the same uprobe (root)
# Run with a high soft RLIMIT_NOFILE (containers often have 1048576): the
# program's descriptor table, which every fork copies, grows to the
# highest descriptor in use.
#   bench/clone_churn.sh [BUILD_DIR] [N] [ROUNDS]
set -u
build=${1:-build}
n=${2:-2000}
rounds=${3:-5}
ubtrace="$build/ubtrace"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
cc -O2 -o "$out/clone_churn" "$(dirname "$0")/clone_churn.c" -lpthread || exit 1
prog="$out/clone_churn $n"
uprobe="uprobe:$out/clone_churn:marker { @ = count(); }"
syscall='tracepoint:syscalls:sys_enter_getppid { @ = count(); }'

measure() { # label command...
  local label=$1
  shift
  "$@" 2>/dev/null | sed -n 's/^thread \([0-9]*\) vfork \([0-9]*\) fork \([0-9]*\)$/\1 \2 \3/p' >> "$out/$label"
}

labels=("untraced" "ubtrace uprobe" "ubtrace syscall")
have_bpftrace=0
if [ "$(id -u)" -eq 0 ] && command -v bpftrace >/dev/null; then
  have_bpftrace=1
  labels+=("bpftrace uprobe")
fi
for ((r = 0; r < rounds; r++)); do
  measure "untraced" $prog
  measure "ubtrace uprobe" "$ubtrace" -q -e "$uprobe" -c "$prog"
  measure "ubtrace syscall" "$ubtrace" -q -e "$syscall" -c "$prog"
  if [ "$have_bpftrace" = 1 ]; then
    measure "bpftrace uprobe" bpftrace -q -e "$uprobe" -c "$prog"
  fi
done

median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
printf 'clone_churn %d, RLIMIT_NOFILE %s, ns per call, medians of %d rounds\n' \
  "$n" "$(ulimit -n)" "$rounds"
printf '%-18s %12s %12s %12s\n' "" "thread" "vfork" "fork"
for label in "${labels[@]}"; do
  f="$out/$label"
  printf '%-18s %12s %12s %12s\n' "$label" \
    "$(cut -d' ' -f1 "$f" | median)" "$(cut -d' ' -f2 "$f" | median)" \
    "$(cut -d' ' -f3 "$f" | median)"
done
