#!/usr/bin/env bash
# `make demo`: make has installed the dependencies and built ubtrace; this
# traces a bundled program with it.
set -euo pipefail
build=${1:-build}
here=$(cd "$(dirname "$0")" && pwd)
prog="$build/tests/testprogs/calls"
echo "+ $build/ubtrace $here/demo.bt -c '$prog 1000' $prog"
"$build/ubtrace" "$here/demo.bt" -c "$prog 1000" "$prog"
