#!/bin/sh
# Runs tests/testprogs/ticker as a container would: in a mount namespace of
# its own, pivot_root'ed into a directory holding it and its libraries, so
# that its mappings name files by paths that mean nothing outside. Then
# attaches ubtrace with -p and prints a stack-keyed map once the program
# has exited: its frames must be symbolised (through /proc/PID/root while it
# lives, through descriptors opened then after). Needs root and unshare.
# usage: in_container.sh UBTRACE TESTPROGS
set -eu
ubtrace=$(readlink -f "$1")
progs=$(readlink -f "$2")
build=$(dirname "$ubtrace")
root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
mkdir -p "$root/bin" "$root/old" "$root$build"
cp "$progs/ticker" "$root/bin/"
for f in "$progs/ticker" "$build/libubtrace_preload.so" \
         "$build/libubtrace_agent.so"; do
  for lib in $(ldd "$f" | grep -o '/[^ ]*' | grep -v "^$build"); do
    mkdir -p "$root$(dirname "$lib")"
    cp -n "$lib" "$root$lib"
  done
done
# The agent is injected by path: the build directory is bind-mounted at the
# same place inside.
unshare -m sh -c "
  mount --make-rprivate /
  mount --bind '$root' '$root'
  mount --bind '$build' '$root$build'
  cd '$root'
  pivot_root . old
  exec /bin/ticker 1500" >"${TICKER_OUT:-/dev/null}" 2>&1 &
sleep 0.3
pid=$(pgrep -n -f '^/bin/ticker 1500')
"$ubtrace" -p "$pid" -e 'config = { show_debug_info = 0 }
  uprobe:/bin/ticker:tick { @s[ustack(2)] = count(); }'
wait $! || echo "ticker exited with $?"
