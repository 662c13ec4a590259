#!/usr/bin/env bash
# A flame graph of a bundled program's calls: stackcount.bt with -f folded
# counts the stacks that call fib() in tests/testprogs/calls, writes them to
# fib.folded, and turns them into fib.svg when flamegraph.pl is on PATH.
#   examples/flamegraph.sh [BUILD_DIR] [OUT_DIR]
set -euo pipefail
build=${1:-build}
out=${2:-.}
here=$(cd "$(dirname "$0")" && pwd)
prog=$build/tests/testprogs/calls
echo "+ $build/ubtrace -f folded -o $out/fib.folded $here/../scripts/stackcount.bt -c '$prog 1' $prog:fib"
"$build/ubtrace" -f folded -o "$out/fib.folded" "$here/../scripts/stackcount.bt" \
  -c "$prog 1" "$prog:fib"
echo "$out/fib.folded: $(wc -l < "$out/fib.folded") stacks"
head -3 "$out/fib.folded"
if command -v flamegraph.pl > /dev/null; then
  flamegraph.pl "$out/fib.folded" > "$out/fib.svg"
  echo "$out/fib.svg written"
else
  echo "(flamegraph.pl is not on PATH: see https://github.com/brendangregg/FlameGraph)"
fi
