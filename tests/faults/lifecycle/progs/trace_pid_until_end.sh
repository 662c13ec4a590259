#!/bin/sh
# trace_pid_until_end.sh UBTRACE PROGS MODE SIGNAL [UBTRACE FLAGS...]
#   (MODE exec runs $UBT_EXEC in the worker, by default /bin/sleep 120)
# Starts `ends_badly --fork MODE` (a parent that never reaps its worker),
# traces the worker with `ubtrace -p`, and once the trace is attached sends
# SIGUSR1 to the worker (which then calls work(-1) and ends by MODE); for
# another SIGNAL, once work(-1) was traced, sends SIGNAL too. Prints ubtrace's exit status, stdout and stderr,
# the worker's pid as "worker PID". ubtrace must end by itself when the
# worker dies: `timeout` is only the safety net (a hang prints rc=124).
set -u
ubtrace=$1 progs=$2 mode=$3 sig=$4
shift 4
ulimit -c 0
dir=$(mktemp -d)
parent= worker=
cleanup() {
  [ -n "$parent" ] && kill "$parent" 2>/dev/null
  [ -n "$worker" ] && kill -KILL "$worker" 2>/dev/null
  rm -rf "$dir"
}
trap cleanup EXIT
"$progs/ends_badly" --fork "$mode" ${UBT_EXEC:-/bin/sleep 120} > "$dir/pid" &
parent=$!
i=0
until [ -s "$dir/pid" ] || [ $i -ge 3000 ]; do sleep 0.01; i=$((i + 1)); done
worker=$(cat "$dir/pid")
echo "worker $worker"
timeout 60 "$ubtrace" "$@" -e "uprobe:$progs/ends_badly:work { @hits = count();
  if ((int32)arg0 == -1) { printf(\"after USR1\\n\"); } }" \
  -p "$worker" > "$dir/out" 2> "$dir/err" &
tracer=$!
i=0
until grep -q -e '^Attached' -e '"attached_probes"' "$dir/err" "$dir/out" ||
  [ $i -ge 6000 ]; do sleep 0.01; i=$((i + 1)); done
kill -USR1 "$worker"
if [ "$sig" != USR1 ]; then
  i=0
  until grep -q 'after USR1' "$dir/out" || [ $i -ge 6000 ]; do sleep 0.01; i=$((i + 1)); done
  kill -"$sig" "$worker"
fi
wait $tracer
echo "rc=$?"
cat "$dir/out" "$dir/err"
