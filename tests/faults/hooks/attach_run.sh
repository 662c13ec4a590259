#!/bin/sh
# attach_run.sh UBTRACE PROGRAM -- TARGET [ARGS...]   (UBTRACE: a command
# line, split at spaces: "path --unsafe")
# Starts TARGET with UBT_WAIT_STDIN set (it waits for a line on stdin),
# attaches `UBTRACE -p` with PROGRAM, lets the target go once ubtrace says
# it attached, and prints what both printed. Exit status: ubtrace's.
ubtrace=$1
program=$2
shift 3
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
mkfifo "$dir/go"
UBT_WAIT_STDIN=1 "$@" < "$dir/go" > "$dir/target.out" 2>&1 &
target=$!
exec 3> "$dir/go" # keeps the fifo open: the target blocks in its read
# Attach once the target runs its program, not while it is still the shell.
sh "$(dirname "$0")/await_exec.sh" "$target" "$1"
$ubtrace -p "$target" -e "$program" > "$dir/ubtrace.out" 2> "$dir/ubtrace.err" &
tracer=$!
# Until ubtrace attached (or gave up): a safety net of 30 s, not a timing.
i=0
while ! grep -q "Attached" "$dir/ubtrace.err" 2>/dev/null; do
  if ! kill -0 "$tracer" 2>/dev/null || [ $i -ge 300 ]; then
    break
  fi
  sleep 0.1
  i=$((i + 1))
done
echo go >&3
exec 3>&-
wait "$target"
echo "target exit: $?"
wait "$tracer"
status=$?
cat "$dir/target.out" "$dir/ubtrace.out"
cat "$dir/ubtrace.err" >&2
exit $status
