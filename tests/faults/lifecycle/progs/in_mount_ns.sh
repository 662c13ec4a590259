#!/bin/sh
# in_mount_ns.sh DIR PROGRAM ARGS...
# Runs a copy of PROGRAM in a new mount namespace where a tmpfs is mounted
# on DIR (an empty directory here): the copy, DIR/NAME, exists only in
# there. Prints "pid PID" once the copy runs (for a tracer outside),
# then waits for it. Needs root (unshare -m).
set -eu
dir=$1 prog=$2
shift 2
exec unshare -m --propagation private sh -c '
  mount -t tmpfs ubtrace-test "$1"
  cp "$2" "$1/"
  copy="$1/$(basename "$2")"
  shift 2
  "$copy" "$@" &
  echo "pid $!"
  wait $!' sh "$dir" "$prog" "$@"
