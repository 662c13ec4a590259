#!/bin/sh
# system_wide.sh UBTRACE TESTPROGS FAULTPROGS SOURCE MODE
# A system-wide trace (no -c, no -p) of tick() in a private copy of
# ticker, so that no other process on the machine maps the probed file.
#   MODE both:   one ticker runs before the trace starts (A), one starts
#                after it attached (B), and one is exec'd by a shell that
#                was running before (C: the shell does not map the file,
#                the program it becomes does). All three must be traced;
#                the trace ends by exit() from an interval probe.
#   MODE churn:  as both, while a shell runs /bin/true in a loop (a fork
#                and exec every millisecond or so, none mapping the file).
#   MODE static: a statically linked copy runs: it cannot be traced (no
#                glibc to load the agent with), and is counted and named.
#   MODE sandbox: A runs under a seccomp filter that kills on socket() (as
#                the agent connects back): it is left alone, counted and
#                named, and runs to its normal end.
#   MODE kill:   the CLI is killed with SIGKILL mid-trace: the tickers run
#                on, unhooked, to their normal end (all their ticks).
#   MODE user:   the trace and ticker B run as user nobody, A as root: B
#                is traced, A is not looked at (not nobody's to read).
#   MODE short:  five tickers that live 30 ms each start one after another
#                during the trace: each is held from its exec until its
#                hooks are in (exec_hold.h), and for each one caught the
#                ticks counted run from the first caught to its last
#                ("whole"; "partial" if some were missed after it).
#   MODE holdkill STEP: the CLI SIGKILLs itself right after injection
#                step STEP (runtime/inject/inject_steps.h) while it holds
#                a ticker started during the trace (exec_hold.h): the
#                ticker runs on to its normal end, all its ticks made.
#   MODE begin:  two tickers run before the trace; the begin probe sets a
#                count that each ticker's first hit then increments: the
#                processes are hooked after begin ran, so it ends at 2.
#   MODE fork:   a private copy of bash (A), traced, forks a subshell
#                that lives a while (it inherits the hooks: traced, not
#                injected again, not counted), then execs itself anew
#                (the new program is traced again, same pid).
# Prints ubtrace's exit status and output, the tickers' pids written A, B
# and C.
set -u
ubtrace=$1 testprogs=$2 faultprogs=$3 source=$4 mode=$5
dir=$(mktemp -d)
chmod 755 "$dir"
as_user=
[ "$mode" = user ] && as_user="setpriv --reuid=65534 --regid=65534 --clear-groups"
pids=
cleanup() {
  [ -n "$pids" ] && kill -KILL $pids 2>/dev/null
  rm -rf "$dir"
}
trap cleanup EXIT
wait_for() { # PATTERN: until ubtrace's output has it (60 s at most)
  i=0
  until grep -q "$1" "$dir/out" || [ $i -ge 6000 ]; do
    sleep 0.01
    i=$((i + 1))
  done
}
if [ "$mode" = fork ]; then
  cp /bin/bash "$dir/bash"
  "$dir/bash" -c "sleep 1; (sleep 1.5; for i in 1 2 3; do /bin/true; done); exec '$dir/bash' -c 'sleep 0.5; for i in 1 2 3; do /bin/true; done; sleep 0.5'" &
  a=$!
  pids="$a"
  sh "$source/tests/runtime/engine/await_exec.sh" $a "$dir/bash"
  timeout 60 "$ubtrace" -v -e "uprobe:$dir/bash:execute_command { @cmds[pid] = count(); } interval:s:5 { exit(); }" > "$dir/out" 2>&1
  echo "rc=$?"
  sed "s/\b$a\b/A/g" "$dir/out"
  exit 0
fi
if [ "$mode" = short ]; then
  cp "$testprogs/ticker" "$dir/ticker"
  timeout 60 "$ubtrace" -v -e "uprobe:$dir/ticker:tick { @ticks[pid] = count(); @first[pid] = min(arg0); } interval:s:2 { exit(); }" > "$dir/out" 2>&1 &
  u=$!
  wait_for '^Attached'
  for i in 1 2 3 4 5; do "$dir/ticker" 30 > /dev/null; done
  wait $u
  echo "rc=$?"
  grep -v '^@' "$dir/out"
  awk -F'[][]|: ' '/^@first\[/ { first[$2] = $4 } /^@ticks\[/ { ticks[$2] = $4 }
    END { for (p in ticks) print "ticker " (first[p] + ticks[p] == 30 ? "whole" : "partial: first " first[p] ", " ticks[p] " ticks") }' "$dir/out"
  exit 0
fi
if [ "$mode" = holdkill ]; then
  cp "$testprogs/ticker" "$dir/ticker"
  UBTRACE_TEST_INJECT_STOP=$6 "$ubtrace" -v -e "uprobe:$dir/ticker:tick { @ticks[pid] = count(); }" > "$dir/out" 2>&1 &
  u=$!
  pids="$u"
  wait_for '^Attached'
  timeout 20 "$dir/ticker" 300 > "$dir/b.out"
  echo "ticker exit $? $(cat "$dir/b.out")"
  wait $u
  echo "ubtrace exit $?"
  sed -n 's/process [0-9]* (ticker) is held/process B (ticker) is held/p' "$dir/out"
  exit 0
fi
if [ "$mode" = begin ]; then
  cp "$testprogs/ticker" "$dir/ticker"
  for n in 1 2; do
    "$dir/ticker" 3000 > /dev/null &
    pids="$pids $!"
    sh "$source/tests/runtime/engine/await_exec.sh" $! "$dir/ticker"
  done
  timeout 60 "$ubtrace" -e "begin { @count = 0; } uprobe:$dir/ticker:tick { if (@seen[pid] == 0) { @count++; @seen[pid] = 1; } } interval:ms:800 { print(@count); exit(); }" 2>&1 | grep -v '^@seen'
  exit 0
fi
if [ "$mode" = static ]; then
  cp "$faultprogs/ticker_static" "$dir/ticker"
else
  cp "$testprogs/ticker" "$dir/ticker"
fi
if [ "$mode" = sandbox ]; then
  "$faultprogs/sandbox_exec" kill "$dir/ticker" 1500 > "$dir/a.out" &
else
  "$dir/ticker" 4000 > "$dir/a.out" &
fi
a=$!
pids="$a"
sh "$source/tests/runtime/engine/await_exec.sh" $a "$dir/ticker"
# A shell that becomes a ticker later: it maps the file only from its exec,
# once the trace attached and B started (told by the file go: a sleep
# would race a slow start of the CLI, as under a sanitizer).
sh -c "until [ -e '$dir/go' ]; do sleep 0.01; done; sleep 0.3; exec '$dir/ticker' 600" > "$dir/c.out" &
c=$!
pids="$pids $c"
if [ "$mode" = churn ]; then
  sh -c 'while :; do /bin/true; done' &
  pids="$pids $!"
fi
script="uprobe:$dir/ticker:tick { @ticks[pid] = count(); }"
case $mode in
  both | churn) script="$script interval:s:3 { exit(); }" ;;
  user) script="$script interval:s:2 { exit(); }" ;;
  static | sandbox) script="$script interval:ms:700 { exit(); }" ;;
esac
if [ "$mode" = kill ]; then
  # Not under timeout: the SIGKILL below must reach ubtrace itself.
  "$ubtrace" -v -e "$script" > "$dir/out" 2>&1 &
  u=$!
  pids="$pids $u"
else
  timeout 60 $as_user "$ubtrace" -v -e "$script" > "$dir/out" 2>&1 &
  u=$!
fi
wait_for '^Attached'
$as_user "$dir/ticker" 600 > "$dir/b.out" &
b=$!
pids="$pids $b"
touch "$dir/go"
if [ "$mode" = kill ]; then
  sleep 1
  kill -KILL $u
  wait $u 2>/dev/null
  kill -0 $u 2>/dev/null && echo "ubtrace still running"
  wait $a; echo "A exit $?"
  wait $b; echo "B exit $?"
  echo "A $(cat "$dir/a.out")"
  echo "B $(cat "$dir/b.out")"
  exit 0
fi
wait $u
echo "rc=$?"
if [ "$mode" = sandbox ]; then
  wait $a
  echo "A exit $? $(cat "$dir/a.out")"
fi
sed "s/\b$a\b/A/g; s/\b$b\b/B/g; s/\b$c\b/C/g" "$dir/out"
