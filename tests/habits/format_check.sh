#!/usr/bin/env bash
# habits.format: every tracked C/C++ file of the product (ast backends codegen
# parser runtime stdlib) is as clang-format-19 writes it with the root
# .clang-format. Names the files that differ, and how to fix them.
#
# usage: format_check.sh SOURCE_DIR [CLANG_FORMAT]
# Exit: 0 all formatted, 1 some differ (or clang-format failed), 77 skipped
# (no clang-format-19: CI installs it, .ci/install-deps).
set -uo pipefail
src=$1
clang_format=${2:-clang-format-19}

if ! command -v "$clang_format" >/dev/null 2>&1; then
  echo "SKIP: $clang_format is not installed (.ci/install-deps installs it)"
  exit 77
fi
cd "$src" || exit 1

dirs=(ast backends codegen parser runtime stdlib)
files=()
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  while IFS= read -r -d '' f; do
    [[ -f $f ]] && files+=("$f") # (deleted in the work tree: nothing to check)
  done < <(git ls-files -z -- "${dirs[@]}" |
             grep -zE '\.(c|cc|cpp|h|hpp)$')
else
  # An unpacked source tree: every file is what would be tracked.
  existing=()
  for d in "${dirs[@]}"; do [[ -d $d ]] && existing+=("$d"); done
  while IFS= read -r -d '' f; do
    files+=("$f")
  done < <(find "${existing[@]}" -type f \( -name '*.c' -o -name '*.cc' \
             -o -name '*.cpp' -o -name '*.h' -o -name '*.hpp' \) -print0 | sort -z)
fi
if [[ ${#files[@]} -eq 0 ]]; then
  echo "FAIL: no product C/C++ files found under $src (${dirs[*]})"
  exit 1
fi

# One run for all of them; each violation is reported as
# FILE:LINE:COL: error: code should be clang-formatted [-Wclang-format-violations]
out=$("$clang_format" --dry-run --Werror "${files[@]}" 2>&1)
rc=$?
mapfile -t differ < <(sed -nE 's/^(.*):[0-9]+:[0-9]+: error: code should be clang-formatted.*/\1/p' \
                        <<<"$out" | awk '!seen[$0]++')
if [[ ${#differ[@]} -gt 0 ]]; then
  echo "FAIL: ${#differ[@]} of ${#files[@]} product files differ from .clang-format ($clang_format):"
  printf '  %s\n' "${differ[@]}"
  echo "fix: $clang_format -i ${differ[*]}"
  exit 1
fi
if [[ $rc -ne 0 ]]; then
  echo "FAIL: $clang_format exited $rc:"
  printf '%s\n' "$out"
  exit 1
fi
echo "PASS: ${#files[@]} product files are formatted ($("$clang_format" --version))"
