#!/usr/bin/env bash
# Three runbook tools from scripts/ against bundled and standard programs:
# call counts of every function of a program, malloc sizes of ls, and the
# files cat opens.
#   examples/runbook.sh [BUILD_DIR]
set -euo pipefail
build=${1:-build}
here=$(cd "$(dirname "$0")" && pwd)
scripts=$here/../scripts
export PATH="$build:$PATH" # the scripts' #!/usr/bin/env ubtrace finds this build
prog=$build/tests/testprogs/calls
run() {
  printf '+'
  printf ' %q' "$@"
  echo
  "$@"
  echo
}
run "$scripts/funccount.bt" -c "$prog 10" "$prog:*"
run "$scripts/mallocsize.bt" -c 'ls /'
run "$scripts/opensnoop.bt" -c 'cat /etc/hostname'
