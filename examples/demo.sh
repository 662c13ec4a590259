#!/usr/bin/env bash
# `make demo`: the dependencies and the build are done by make; this runs a
# real script with the freshly built ubtrace.
set -euo pipefail
build=${1:-build}
here=$(cd "$(dirname "$0")" && pwd)
echo "+ $build/ubtrace $here/demo.bt"
"$build/ubtrace" "$here/demo.bt"
