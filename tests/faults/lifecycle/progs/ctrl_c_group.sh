#!/bin/sh
# ctrl_c_group.sh UBTRACE: ubtrace -c and its command in one process group
# of their own, as a terminal runs them, and the group gets SIGINT (what
# Ctrl-C does). Prints ubtrace's exit status and output.
set -u
dir=$(mktemp -d)
setsid sh -c "exec \"$1\" -e 'uprobe:libc:nanosleep { @naps = count(); }' -c 'sleep 30'" \
  > "$dir/out" 2>&1 &
leader=$!
i=0
until grep -q '^Attached' "$dir/out" || [ $i -ge 6000 ]; do sleep 0.01; i=$((i + 1)); done
# The command starts after the attach: let it reach its nanosleep (a
# sanitizer build once took longer than the signal did).
sleep 0.5
kill -INT -"$leader"
wait "$leader"
echo "rc=$?"
cat "$dir/out"
rm -rf "$dir"
