#!/bin/sh
# Reads a trace of tests/testprogs/spawns whose probes print
# "exec PID TID" (an execve: the posix_spawn child's, the vfork child's,
# system()'s shell's, in that order) and "who N PID TID" (N the parent's
# pid, twice, or -1 in the vfork child), and says which ids are right.
out=$(cat)
parent=$(echo "$out" | sed -n 's/^who \([1-9][0-9]*\) .*/\1/p' | head -n 1)
spawned=$(echo "$out" | sed -n 's/^spawned //p')
vforked=$(echo "$out" | sed -n 's/^vforked //p')
execs=$(echo "$out" | sed -n 's/^exec \([0-9]*\) \([0-9]*\)$/\1 \2/p')
first=$(echo "$execs" | sed -n 1p)
second=$(echo "$execs" | sed -n 2p)
third=$(echo "$execs" | sed -n 3p)
[ -n "$spawned" ] && [ "$first" = "$spawned $spawned" ] &&
  echo "posix_spawn child: its own ids"
[ -n "$vforked" ] && [ "$second" = "$vforked $vforked" ] &&
  echo "vfork child: its own ids"
echo "$out" | grep -qx "who -1 $vforked $vforked" &&
  echo "vfork child before its exec: its own ids"
set -- $third
[ -n "$1" ] && [ "$1" = "$2" ] && [ "$1" != "$parent" ] &&
  [ "$1" != "$spawned" ] && [ "$1" != "$vforked" ] &&
  echo "system() child: its own ids"
[ "$(echo "$out" | grep -cx "who $parent $parent $parent")" = 2 ] &&
  echo "the parent: its own ids, before and after"
echo "$out" | sed -n '/^who\|^exec\|^spawned\|^vforked/!p'
