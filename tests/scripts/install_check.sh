#!/usr/bin/env bash
# `cmake --install` into a fresh prefix, then the installed ubtrace must
# find its agent, run a shipped tool through its #! line, and the manual
# must open with man.
#   install_check.sh BUILD_DIR
# Exit 0 passed, 1 failed, 77 skipped (the build lacks what installs).
set -uo pipefail
build=$(cd "${1:?usage: install_check.sh BUILD_DIR}" && pwd)
src=$(pwd)
for f in ubtrace libubtrace_agent.so libubtrace_preload.so tests/testprogs/calls; do
  if [[ ! -e $build/$f ]]; then
    echo "SKIP: $build/$f is not built"
    exit 77
  fi
done

prefix=$(mktemp -d)
trap 'rm -rf "$prefix"' EXIT
failures=0
fail() {
  echo "FAIL: $*"
  failures=$((failures + 1))
}
pass() { echo "ok: $*"; }

if ! cmake --install "$build" --prefix "$prefix" > "$prefix.log" 2>&1; then
  cat "$prefix.log"
  rm -f "$prefix.log"
  echo "FAIL: cmake --install"
  exit 1
fi
rm -f "$prefix.log"

# The layout.
for f in bin/ubtrace lib/ubtrace/libubtrace_agent.so lib/ubtrace/libubtrace_preload.so \
         share/man/man8/ubtrace.8 share/ubtrace/scripts/README.md; do
  [[ -f $prefix/$f ]] && pass "installed $f" || fail "$f is not installed"
done
[[ -x $prefix/bin/ubtrace ]] || fail "bin/ubtrace is not executable"
shipped=$(ls "$src"/scripts/*.bt | wc -l)
installed=0
for s in "$src"/scripts/*.bt; do
  t=$prefix/share/ubtrace/scripts/$(basename "$s")
  if [[ -x $t ]] && cmp -s "$s" "$t"; then
    installed=$((installed + 1))
  else
    fail "$(basename "$s") is not installed as an executable copy"
  fi
done
[[ $installed -eq $shipped && $shipped -gt 0 ]] && pass "$installed scripts installed, executable" \
  || fail "$installed of $shipped scripts installed"

# The installed CLI, with nothing from the build tree.
unset UBTRACE_AGENT
ver=$("$prefix/bin/ubtrace" --version) && [[ $ver == "$("$build/ubtrace" --version)" ]] \
  && pass "ubtrace --version: $ver" || fail "installed ubtrace --version: '$ver'"
"$prefix/bin/ubtrace" --info | grep -qx "    agent: $prefix/lib/ubtrace/libubtrace_preload.so" \
  && pass "the installed ubtrace finds the installed agent" \
  || fail "the installed ubtrace does not report $prefix/lib/ubtrace/libubtrace_preload.so"

# A shipped tool run as a command (#!/usr/bin/env ubtrace) against a real
# program: calls 3 calls add 3 times.
out=$(PATH="$prefix/bin:$PATH" "$prefix/share/ubtrace/scripts/funccount.bt" \
        -c "$build/tests/testprogs/calls 3" "$build/tests/testprogs/calls:add" 2>&1)
grep -qx '@calls\[add\]: 3' <<<"$out" && pass "funccount.bt ran from the installed tree" \
  || fail "funccount.bt from the installed tree printed:"$'\n'"$out"
# The agent the probes ran with was the installed one: it is in the traced
# process's memory map (read while `sleep 2` sleeps).
out=$(PATH="$prefix/bin:$PATH" ubtrace -q -e \
        'uprobe:libc:clock_nanosleep { cat("/proc/%d/maps", pid); exit(); }' -c 'sleep 2' 2>&1)
grep -q "$prefix/lib/ubtrace/libubtrace_agent.so" <<<"$out" \
  && pass "the traced process loaded the installed agent" \
  || fail "the traced process's maps do not show $prefix/lib/ubtrace/libubtrace_agent.so:"$'\n'"$out"

# The manual.
if command -v man > /dev/null; then
  MANPATH="$prefix/share/man" MANWIDTH=80 man ubtrace 2>&1 | grep -q 'DIFFERENCES FROM BPFTRACE' \
    && pass "man ubtrace opens the installed page" || fail "man ubtrace (MANPATH=$prefix/share/man) failed"
fi

if [[ $failures -gt 0 ]]; then
  echo "$failures failure(s)"
  exit 1
fi
echo "PASS"
