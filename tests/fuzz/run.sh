#!/usr/bin/env bash
# Runs both libFuzzer targets of a -DUBTRACE_FUZZ=ON build for SECONDS each
# (CI: 60) in one process, seeded with the checked-in inputs. The
# scratch corpora live in the build directory, so the checked-in seeds stay
# as they are. Fails on the first crash, leak, timeout or out-of-memory:
# libFuzzer leaves the input as BUILD/fuzz-out/<target>/crash-* (or leak-*,
# timeout-*, oom-*) and this script prints its path; save it under
# tests/fuzz/regressions/parser or tests/fuzz/jit_corpus with the fix.
#
#   usage: tests/fuzz/run.sh BUILD [SECONDS]
set -euo pipefail
build=$(cd "${1:?usage: run.sh BUILD [SECONDS]}" && pwd)
seconds=${2:-60}
src=$(cd "$(dirname "$0")/../.." && pwd)
out=$build/fuzz-out
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
export ASAN_OPTIONS=detect_leaks=1

run() {
  local name=$1 binary=$2
  shift 2
  if [ ! -x "$binary" ]; then
    echo "fuzz: $binary is missing: configure $build with -DUBTRACE_FUZZ=ON" >&2
    exit 1
  fi
  mkdir -p "$out/$name/corpus"
  echo "fuzz: $name for ${seconds}s"
  local log=$out/$name/log
  # -artifact_prefix: where libFuzzer writes what it found.
  if ! (cd "$out/$name" && "$binary" \
        -max_total_time="$seconds" -print_final_stats=1 \
        -artifact_prefix="$out/$name/" "$@") >"$log" 2>&1; then
    tail -n 60 "$log" >&2
    echo "fuzz: $name failed; its input:" >&2
    ls "$out/$name"/{crash,leak,timeout,oom,slow-unit}-* 2>/dev/null >&2 || true
    exit 1
  fi
  grep -E '^stat::(number_of_executed_units|average_exec_per_sec|new_units_added|peak_rss_mb)' "$log" |
    sed "s/^/fuzz: $name /"
}

run parser "$build/tests/fuzz/parser_fuzz" \
  -max_len=4096 -timeout=10 -rss_limit_mb=2048 \
  "$out/parser/corpus" "$src/tests/corpus/valid" "$src/tests/corpus/invalid" \
  "$src/tests/fuzz/regressions/parser"
run jit "$build/tests/unit/jit/jit_diff_fuzz" \
  -max_len=2048 -len_control=0 -timeout=60 -rss_limit_mb=6000 \
  "$out/jit/corpus" "$src/tests/fuzz/jit_corpus"
