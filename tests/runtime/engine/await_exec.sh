#!/bin/sh
# await_exec.sh PID PROGRAM
# Waits until process PID runs PROGRAM (its /proc/PID/exe is PROGRAM's
# file), or has ended. A test that starts `PROGRAM &` and at once attaches
# `ubtrace -p $!` races the shell's exec: the pid may still be the forked
# shell, and an injection that the exec interrupts fails. A safety net of
# 10 s, not a timing: exit 1 if the exec never came.
pid=$1
want=$(readlink -f "$(command -v "$2")")
i=0
while [ $i -lt 1000 ]; do
  exe=$(readlink "/proc/$pid/exe" 2>/dev/null) || exit 0 # ended
  [ "$exe" = "$want" ] && exit 0
  sleep 0.01
  i=$((i + 1))
done
echo "await_exec.sh: process $pid never ran $2" >&2
exit 1
