#!/usr/bin/env bash
# What -c's system call probes see of a command's loader, and what
# following it costs: for each command, the calls strace lists for it
# alone, those `tracepoint:raw_syscalls:sys_enter /pid == cpid/` counts
# under ubtrace and, in the same run, under Debian's bpftrace (root); then
# ubtrace's own account (-v) of the calls it followed and how long that
# took, and the whole run's wall time, medians of RUNS.
#   bench/loader_calls.sh [BUILD_DIR] [RUNS]
set -u
build=${1:-build}
runs=${2:-11}
ubtrace="$build/ubtrace"
count='tracepoint:raw_syscalls:sys_enter /pid == cpid/ { @ = count(); }'
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT

median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

commands=("/bin/true" "/bin/ls -d /" "/usr/bin/python3.11 -c pass")
printf '%-30s %8s %8s %8s %10s %12s %10s\n' command strace ubtrace bpftrace \
  followed "follow (us)" "run (ms)"
for cmd in "${commands[@]}"; do
  # shellcheck disable=SC2086 # the command's words
  strace -qq -o "$tmp" $cmd >/dev/null 2>&1
  s=$(wc -l <"$tmp")
  u=$("$ubtrace" -q -e "$count" -c "$cmd" 2>/dev/null | sed -n 's/^@: //p')
  b=skipped
  if [ "$(id -u)" -eq 0 ] && command -v bpftrace >/dev/null; then
    b=$(bpftrace -q -e "$count" -c "$cmd" 2>/dev/null | sed -n 's/^@: //p')
  fi
  follow=() wall=() calls=""
  for ((i = 0; i < runs; i++)); do
    start=$(date +%s%N)
    line=$("$ubtrace" -v -q -e "$count" -c "$cmd" 2>&1 >/dev/null |
      grep "the command's loader:")
    end=$(date +%s%N)
    calls=$(sed -n 's/.*loader: \([0-9]*\) system calls.*/\1/p' <<<"$line")
    follow+=("$(sed -n 's/.* followed in \([0-9]*\) us.*/\1/p' <<<"$line")")
    wall+=("$(((end - start) / 1000000))")
  done
  printf '%-30s %8s %8s %8s %10s %12s %10s\n' "$cmd" "$s" "$u" "$b" "$calls" \
    "$(printf '%s\n' "${follow[@]}" | median)" \
    "$(printf '%s\n' "${wall[@]}" | median)"
done
