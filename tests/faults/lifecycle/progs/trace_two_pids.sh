#!/bin/sh
# trace_two_pids.sh UBTRACE PROGS MODE_A MODE_B FORM [UBTRACE FLAGS...]
#   FORM: list (-p A,B) or repeat (-p A --pid B)
# Starts two `ends_badly --fork` workers A and B (parents that never reap
# them; MODE exec runs $UBT_EXEC in the worker, by default /bin/sleep 120)
# and traces both with
# one ubtrace. Once attached: SIGUSR1 to A (it calls work(-1), then ends by
# MODE_A); once ubtrace has said A is done (its end, or its agent's
# hangup), SIGUSR1 to B, whose work(-1) must still be traced. Prints
# ubtrace's exit status, stdout and stderr with the workers' pids written
# as A and B. ubtrace must end by itself once B is done: `timeout` is only
# the safety net (a hang prints rc=124).
set -u
ubtrace=$1 progs=$2 mode_a=$3 mode_b=$4 form=$5
shift 5
ulimit -c 0
dir=$(mktemp -d)
parents= a= b=
cleanup() {
  [ -n "$parents" ] && kill $parents 2>/dev/null
  [ -n "$a" ] && kill -KILL "$a" 2>/dev/null
  [ -n "$b" ] && kill -KILL "$b" 2>/dev/null
  rm -rf "$dir"
}
trap cleanup EXIT
wait_for() { # PATTERN...: until ubtrace's output has one (60 s at most)
  i=0
  until cat "$dir/out" "$dir/err" | grep -q "$@" || [ $i -ge 6000 ]; do
    sleep 0.01
    i=$((i + 1))
  done
}
"$progs/ends_badly" --fork "$mode_a" ${UBT_EXEC:-/bin/sleep 120} > "$dir/a" &
parents="$!"
"$progs/ends_badly" --fork "$mode_b" ${UBT_EXEC:-/bin/sleep 120} > "$dir/b" &
parents="$parents $!"
i=0
until { [ -s "$dir/a" ] && [ -s "$dir/b" ]; } || [ $i -ge 3000 ]; do
  sleep 0.01
  i=$((i + 1))
done
a=$(cat "$dir/a") b=$(cat "$dir/b")
if [ "$form" = list ]; then
  pids="-p $a,$b"
else
  pids="-p $a --pid $b"
fi
timeout 60 "$ubtrace" "$@" $pids -e "uprobe:$progs/ends_badly:work {
  @hits[pid] = count();
  if ((int32)arg0 == -1) { printf(\"after USR1 %d\\n\", pid); } }" \
  > "$dir/out" 2> "$dir/err" &
tracer=$!
wait_for -e '^Attached' -e '"attached_probes"'
kill -USR1 "$a"
wait_for -e "Process $a " -e "agent in process $a " -e "\"pid\": $a,"
kill -USR1 "$b"
wait $tracer
echo "rc=$?"
cat "$dir/out" "$dir/err" | sed "s/\b$a\b/A/g; s/\b$b\b/B/g"
