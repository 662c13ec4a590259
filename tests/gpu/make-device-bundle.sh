#!/usr/bin/env bash
# Builds the folder the GPU device check carries to the device machine
# (another OS image: CUDA driver and nvcc, no LLVM, nothing installable):
#
#   device-bundle/
#     bin/ubtrace              the CLI (static LLVM), stripped
#     lib/ld-linux-x86-64.so.2 and every shared library the CLI needs,
#                              glibc included: the CLI runs through this
#                              loader (bin/run-ubtrace), whatever the
#                              device's glibc is
#     lib/libubtrace_preload.so, lib/libubtrace_agent.so
#                              the agent, relinked with RPATH $ORIGIN, and
#                              the libraries it needs (Zydis, zstd, lz4);
#                              it runs inside the traced program, on the
#                              device's own glibc
#     include/                 Zydis, Zycore, zstd and lz4 headers, and
#     agent-sources.txt        the agent's sources and flags, for
#                              tests/gpu/rebuild-agent.sh should the agent
#                              not load there (glibc too old)
#     MANIFEST                 what is in it, with sizes
#
# Usage: tests/gpu/make-device-bundle.sh [BUILD_DIR] [OUT_DIR]
# (defaults: build-gpu2, device-bundle; run from the repository root). The
# build directory must be configured with static LLVM (the default). Also
# writes OUT_DIR.tar.xz. Refuses a bundle over 60 MiB.
set -euo pipefail
build=$(realpath "${1:-build-gpu2}")
out=${2:-device-bundle}
root=$(pwd)
limit=$((60 * 1024 * 1024))

ninja -C "$build" ubtrace ubtrace_agent ubtrace_preload >/dev/null
if ldd "$build/ubtrace" | grep -q libLLVM; then
  echo "make-device-bundle: $build/ubtrace links the shared libLLVM;" \
       "configure with -DUBTRACE_LLVM_STATIC=ON" >&2
  exit 1
fi

rm -rf "$out"
mkdir -p "$out/bin" "$out/lib" "$out/include"
out=$(realpath "$out")

# --- the CLI and everything it loads, glibc and its loader included ----
cp "$build/ubtrace" "$out/bin/ubtrace"
strip "$out/bin/ubtrace"
unused=$(ldd -u "$build/ubtrace" 2>/dev/null | awk '/^\t/ {print $1}' || true)
while read -r name path; do
  [ -z "$path" ] && continue
  if grep -qx "$path" <<<"$unused"; then
    # Linked but never used (LLVM's optional Z3): an empty library with
    # the same soname satisfies the loader.
    echo 'void ubtrace_unused_dependency(void) {}' |
      cc -shared -fPIC -x c - -Wl,-soname,"$name" -o "$out/lib/$name"
    continue
  fi
  cp -L "$path" "$out/lib/$name"
done < <(ldd "$build/ubtrace" | awk '/=>/ {print $1, $3} /ld-linux/ {print "ld-linux-x86-64.so.2", $1}')

cat >"$out/bin/run-ubtrace" <<'EOF'
#!/bin/sh
# ubtrace through the bundle's own loader and libraries.
here=$(cd "$(dirname "$0")/.." && pwd)
export UBTRACE_AGENT="${UBTRACE_AGENT:-$here/lib/libubtrace_preload.so}"
exec "$here/lib/ld-linux-x86-64.so.2" --library-path "$here/lib" \
  "$here/bin/ubtrace" "$@"
EOF
chmod +x "$out/bin/run-ubtrace"

# --- the agent, relinked to find its libraries next to itself ----------
link=$(ninja -C "$build" -t commands libubtrace_agent.so | tail -1)
link=${link#*&& }
link=${link% && :}
link=${link/-o libubtrace_agent.so/-o $out/lib/libubtrace_agent.so}
(cd "$build" && eval "$link -Wl,-rpath,'\$ORIGIN'")
cp "$build/libubtrace_preload.so" "$out/lib/"
strip --strip-unneeded "$out/lib/libubtrace_agent.so" \
  "$out/lib/libubtrace_preload.so"
for lib in $(ldd "$build/libubtrace_agent.so" | awk '/=>/ {print $3}'); do
  case $(basename "$lib") in
  libc.so.* | libm.so.* | libgcc_s.so.* | libdl.so.* | libpthread.so.*) ;;
  *) cp -L "$lib" "$out/lib/" ;; # real ones, over any unused-dependency stub
  esac
done

# --- what rebuilding the agent on the device takes ----------------------
for dir in Zydis Zycore; do
  [ -d "/usr/include/$dir" ] && cp -r "/usr/include/$dir" "$out/include/"
done
for h in zstd.h zstd_errors.h zdict.h lz4.h lz4hc.h lz4frame.h; do
  [ -f "/usr/include/$h" ] && cp "/usr/include/$h" "$out/include/"
done
for a in libzstd.a liblz4.a; do
  f=$(cc -print-file-name="$a")
  [ -f "$f" ] && cp "$f" "$out/lib/"
done
# The agent's sources: those of every object and archive in its link, from
# the build's own compile commands (paths relative to the repository).
python3 - "$build" "$root" "$link" >"$out/agent-sources.txt" <<'EOF'
import json, os, re, sys
build, root, link = sys.argv[1], sys.argv[2], sys.argv[3]
commands = json.load(open(os.path.join(build, "compile_commands.json")))
by_object = {}
for c in commands:
    m = re.search(r"-o (\S+)", c["command"])
    if m:
        by_object[os.path.normpath(os.path.join(c["directory"], m.group(1)))] = c["file"]
objects = [t for t in link.split() if t.endswith(".o")]
archives = [t for t in link.split() if t.endswith(".a") and not t.startswith("/")]
# "object SRC": linked whole; "archive SRC": in an archive, linked only if
# referenced (as the build links them).
for o in objects:
    f = by_object.get(os.path.normpath(os.path.join(build, o)))
    if f:
        print("object", os.path.relpath(f, root))
archived = set()
for a in archives:
    d = os.path.dirname(os.path.normpath(os.path.join(build, a)))
    name = os.path.basename(a)[3:-2]
    prefix = os.path.join(d, "CMakeFiles", name + ".dir") + os.sep
    archived |= {f for o, f in by_object.items() if o.startswith(prefix)}
for f in sorted(archived):
    print("archive", os.path.relpath(f, root))
EOF
for f in runtime/agent/preload.c runtime/agent/gpu/preload_interpose.c; do
  echo "preload $f" >>"$out/agent-sources.txt"
done

# --- size check, manifest, tarball --------------------------------------
size=$(du -sb "$out" | cut -f1)
(cd "$out" && find . -type f -printf '%s %p\n' | sort -k2) >"$out/MANIFEST"
echo "total $size bytes" >>"$out/MANIFEST"
if [ "$size" -gt "$limit" ]; then
  echo "make-device-bundle: $size bytes, over the 60 MiB limit" >&2
  exit 1
fi
tar -C "$(dirname "$out")" -cJf "$out.tar.xz" "$(basename "$out")"
echo "device bundle: $out ($((size / 1024 / 1024)) MiB), $out.tar.xz"
