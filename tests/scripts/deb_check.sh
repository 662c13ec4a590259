#!/usr/bin/env bash
# `cpack -G DEB`, then checks the package:
#   - its control fields, and that Depends names the Debian package of every
#     shared library the packaged binaries need (ldd + dpkg -S);
#   - its files: the CLI, the agent, every shipped script (executable), the
#     manual;
#   - unpacked into a fresh directory, its ubtrace runs, finds its agent and
#     traces a program with a shipped tool;
#   - with UBTRACE_DEB_ROOT set to a Debian 12 root (made with
#     `debootstrap --variant=minbase bookworm DIR`), it installs there with
#     apt-get (Depends resolved from the root's sources, so this needs the
#     Debian mirror) and runs inside it with chroot.
#   deb_check.sh BUILD_DIR
# Exit 0 passed, 1 failed, 77 skipped (no cpack/dpkg, or nothing built).
set -uo pipefail
build=$(cd "${1:?usage: deb_check.sh BUILD_DIR}" && pwd)
src=$(pwd)
for tool in cpack dpkg-deb dpkg-shlibdeps dpkg; do
  if ! command -v $tool > /dev/null; then
    echo "SKIP: $tool is not installed"
    exit 77
  fi
done
for f in ubtrace libubtrace_agent.so libubtrace_preload.so tests/testprogs/calls CPackConfig.cmake; do
  if [[ ! -e $build/$f ]]; then
    echo "SKIP: $build/$f is not built"
    exit 77
  fi
done

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
fail() {
  echo "FAIL: $*"
  failures=$((failures + 1))
}
pass() { echo "ok: $*"; }

# cpack stages and writes everything under $work, not in the build tree.
if ! (cd "$build" && cpack -G DEB -B "$work/pkg") > "$work/cpack.log" 2>&1; then
  cat "$work/cpack.log"
  echo "FAIL: cpack -G DEB"
  exit 1
fi
deb=$(ls "$work"/pkg/ubtrace_*.deb 2>/dev/null | head -1)
if [[ -z $deb ]]; then
  cat "$work/cpack.log"
  echo "FAIL: cpack wrote no ubtrace_*.deb"
  exit 1
fi
pass "built $(basename "$deb") ($(du -k "$deb" | cut -f1) KiB)"

# Control fields.
field() { dpkg-deb -f "$deb" "$1"; }
[[ $(field Package) == ubtrace ]] && pass "Package: ubtrace" || fail "Package: $(field Package)"
version=$("$build/ubtrace" --version | sed 's/^ubtrace v//')
[[ $(field Version) == "$version" ]] && pass "Version: $version" || fail "Version: $(field Version), ubtrace says $version"
[[ $(field Architecture) == "$(dpkg --print-architecture)" ]] && pass "Architecture: $(field Architecture)" \
  || fail "Architecture: $(field Architecture)"
depends=$(field Depends)
echo "   Depends: $depends"
[[ -n $(field Maintainer) && -n $(field Description) ]] && pass "Maintainer and Description are set" \
  || fail "Maintainer or Description is empty"

# Every library the binaries link directly (NEEDED; what they need in turn
# is their packages' business) comes from a package that Depends names.
dpkg-deb -x "$deb" "$work/root"
depends_names=$(sed 's/([^)]*)//g; s/|/,/g' <<<"$depends" | tr ',' '\n' | tr -d ' ')
for bin in "$work/root/usr/bin/ubtrace" "$work/root"/usr/lib/ubtrace/*.so; do
  resolved=$(LD_LIBRARY_PATH="$work/root/usr/lib/ubtrace" ldd "$bin")
  for needed in $(readelf -d "$bin" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'); do
    # "libx.so.1 => /path (0x...)", or the loader's "/path/ld-linux... (0x...)".
    lib=$(awk -v n="$needed" '{ if ($1 == n && $2 == "=>") print $3;
                                else { k = split($1, p, "/"); if (k > 1 && p[k] == n) print $1 } }' \
            <<<"$resolved" | head -1)
    case $lib in "$work"/*) continue ;; esac # the agent, shipped in the package
    if [[ -z $lib ]]; then
      fail "$(basename "$bin") needs $needed, which ldd cannot find"
      continue
    fi
    pkg=$(dpkg -S "$(readlink -f "$lib")" 2>/dev/null | head -1 | cut -d: -f1)
    [[ -z $pkg ]] && pkg=$(dpkg -S "$lib" 2>/dev/null | head -1 | cut -d: -f1)
    if [[ -z $pkg ]]; then
      fail "$(basename "$bin") needs $lib, which no Debian package holds"
    elif grep -qxF -- "$pkg" <<<"$depends_names"; then
      pass "$(basename "$bin"): $needed from $pkg is in Depends"
    else
      fail "$(basename "$bin") needs $needed from $pkg, which Depends lacks"
    fi
  done
done

# Files.
listing=$(dpkg-deb -c "$deb")
for f in ./usr/bin/ubtrace ./usr/lib/ubtrace/libubtrace_agent.so ./usr/lib/ubtrace/libubtrace_preload.so \
         ./usr/share/man/man8/ubtrace.8 ./usr/share/ubtrace/scripts/README.md; do
  grep -qE " $f\$" <<<"$listing" && pass "has $f" || fail "lacks $f"
done
n=0
for s in "$src"/scripts/*.bt; do
  if grep -qE "^-rwxr-xr-x .* ./usr/share/ubtrace/scripts/$(basename "$s")\$" <<<"$listing"; then
    n=$((n + 1))
  else
    fail "lacks ./usr/share/ubtrace/scripts/$(basename "$s") (mode 755)"
  fi
done
pass "$n scripts packaged, executable"

# Unpacked anywhere, it runs with its own agent.
unset UBTRACE_AGENT
"$work/root/usr/bin/ubtrace" --version | grep -qx "ubtrace v$version" \
  && pass "unpacked ubtrace --version" || fail "unpacked ubtrace --version"
"$work/root/usr/bin/ubtrace" --info | grep -qx "    agent: $work/root/usr/lib/ubtrace/libubtrace_preload.so" \
  && pass "unpacked ubtrace finds the packaged agent" || fail "unpacked ubtrace does not find its agent"
out=$(PATH="$work/root/usr/bin:$PATH" "$work/root/usr/share/ubtrace/scripts/funccount.bt" \
        -c "$build/tests/testprogs/calls 4" "$build/tests/testprogs/calls:add" 2>&1)
grep -qx '@calls\[add\]: 4' <<<"$out" && pass "a packaged tool traced a program" \
  || fail "the packaged funccount.bt printed:"$'\n'"$out"

# Installed into a Debian root, with its dependencies from the mirror.
root=${UBTRACE_DEB_ROOT:-}
if [[ -n $root ]]; then
  if [[ ! -x $root/usr/bin/apt-get ]]; then
    fail "UBTRACE_DEB_ROOT=$root is not a Debian root"
  else
    cp "$deb" "$root/tmp/ubtrace.deb"
    cp "$build/tests/testprogs/calls" "$root/tmp/calls"
    mount --bind /proc "$root/proc" 2>/dev/null
    if chroot "$root" sh -c 'apt-get update -qq && apt-get install -y -qq /tmp/ubtrace.deb' \
         > "$work/apt.log" 2>&1; then
      pass "apt-get install ubtrace.deb in $root"
      chroot "$root" ubtrace --version | grep -qx "ubtrace v$version" \
        && pass "ubtrace --version in $root" || fail "ubtrace --version in $root"
      out=$(chroot "$root" /usr/share/ubtrace/scripts/funccount.bt -c '/tmp/calls 2' /tmp/calls:add 2>&1)
      grep -qx '@calls\[add\]: 2' <<<"$out" && pass "funccount.bt traced a program in $root" \
        || fail "funccount.bt in $root printed:"$'\n'"$out"
      chroot "$root" sh -c 'dpkg -P ubtrace' > /dev/null 2>&1
    else
      cat "$work/apt.log"
      fail "apt-get install ubtrace.deb in $root"
    fi
    umount "$root/proc" 2>/dev/null
    rm -f "$root/tmp/ubtrace.deb" "$root/tmp/calls"
  fi
else
  echo "note: UBTRACE_DEB_ROOT is not set: the install into a fresh Debian root is not tested"
fi

if [[ $failures -gt 0 ]]; then
  echo "$failures failure(s)"
  exit 1
fi
echo "PASS"
