#!/usr/bin/env bash
# Rebuilds the in-target agent (libubtrace_agent.so, libubtrace_preload.so)
# with this machine's own C++ compiler, for a device machine whose glibc is
# older than the one the bundle's agent was linked against. The agent runs
# inside the traced program, on the machine's glibc; the CLI does not need
# this (it runs on the bundle's own loader and libraries).
#
# Usage: tests/gpu/rebuild-agent.sh BUNDLE_DIR OUT_DIR   (repository root)
# Needs: c++ with C++20 (g++ >= 10), the repository's sources, and what the
# bundle carries (headers and libraries of Zydis, zstd, lz4). Prints the
# path of the new preload library on success.
set -euo pipefail
bundle=$(realpath "$1")
out=$(realpath -m "$2")
mkdir -p "$out/obj"
cxx=${CXX:-c++}
cc=${CC:-cc}
jobs=$(nproc 2>/dev/null || echo 4)

flags=(-std=c++20 -O2 -fPIC -fvisibility=hidden -fvisibility-inlines-hidden
       -fno-exceptions -D_GNU_SOURCE -DNDEBUG -I. -I"$bundle/include" -w)
sources=$(awk '$1 == "object" || $1 == "archive" {print $2}' "$bundle/agent-sources.txt")
obj_of() { echo "$out/obj/$(echo "$1" | tr / _).o"; }
for src in $sources; do
  echo "$cxx ${flags[*]} -c $src -o $(obj_of "$src")"
done | xargs -P "$jobs" -I{} sh -c '{}' || {
  echo "rebuild-agent: compiling the agent failed" >&2
  exit 1
}
# Archive members are linked only when referenced, as in the build.
objects=$(awk '$1 == "object" {print $2}' "$bundle/agent-sources.txt" |
  while read -r s; do obj_of "$s"; done)
rm -f "$out/libdeps.a"
awk '$1 == "archive" {print $2}' "$bundle/agent-sources.txt" |
  while read -r s; do obj_of "$s"; done | xargs ar rcs "$out/libdeps.a"
"$cxx" -shared -o "$out/libubtrace_agent.so" $objects "$out/libdeps.a" \
  -Wl,-soname,libubtrace_agent.so -static-libstdc++ -static-libgcc \
  -Wl,--exclude-libs,ALL -Wl,--as-needed -Wl,-z,now -Wl,-rpath,'$ORIGIN' \
  "$bundle/lib/libZydis.so.4.0" "$bundle/lib/libzstd.a" "$bundle/lib/liblz4.a" \
  -ldl -lpthread -lrt
cp "$bundle/lib/libZydis.so.4.0" "$out/"
preload_sources=$(sed -n 's/^preload //p' "$bundle/agent-sources.txt")
"$cc" -O2 -fPIC -shared -o "$out/libubtrace_preload.so" \
  $preload_sources -L"$out" -l:libubtrace_agent.so -Wl,-rpath,'$ORIGIN' -ldl
echo "$out/libubtrace_preload.so"
