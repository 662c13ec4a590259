#!/bin/sh
# trace_held_library.sh UBTRACE PROGS ROUNDS LIBRARY SCRIPT
# `dlclose_churn held` on PROGS/LIBRARY: ubtrace -p with SCRIPT (LIB in it
# stands for the library's path) attaches while the library is loaded
# (hooked at once, nothing pending), the target then runs ROUNDS rounds of
# call, dlclose, dlopen, unloads the library for good (its place taken by
# an inaccessible mapping) and waits; ubtrace is then stopped (SIGINT) and
# detaches from a process whose hooked code is gone. Prints ubtrace's
# output, then the target's last line and its exit status.
set -u
ubtrace=$1 progs=$2 rounds=$3 lib=$2/$4 script=$5
dir=$(mktemp -d)
target=
cleanup() {
  [ -n "$target" ] && kill -KILL "$target" 2>/dev/null
  rm -rf "$dir"
}
trap cleanup EXIT
"$progs/dlclose_churn" held "$rounds" "$lib" "$dir/go" "$dir/end" > "$dir/target" &
target=$!
i=0
until grep -q loaded "$dir/target" || [ $i -ge 3000 ]; do sleep 0.01; i=$((i + 1)); done
timeout 60 "$ubtrace" -e "$(echo "$script" | sed "s|LIB|$lib|g")" -p "$target" \
  > "$dir/out" 2> "$dir/err" &
tracer=$!
i=0
until grep -q '^Attached' "$dir/err" || [ $i -ge 6000 ]; do sleep 0.01; i=$((i + 1)); done
touch "$dir/go"
i=0
until grep -q unloaded "$dir/target" || [ $i -ge 6000 ]; do sleep 0.01; i=$((i + 1)); done
kill -INT $tracer
wait $tracer
echo "rc=$?"
cat "$dir/out" "$dir/err"
touch "$dir/end"
wait $target
echo "target $? $(tail -1 "$dir/target")"
target=
