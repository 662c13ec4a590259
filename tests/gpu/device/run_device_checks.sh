#!/usr/bin/env bash
# The GPU checks of the GPU backend's offline half, in one run for the
# device machine (CUDA driver, nvcc, cuobjdump; no LLVM):
#   1. the sample apps run and agree across build variants;
#   2. cuobjdump agrees with our fatbin parser (the gtest that skips here);
#   3. the driver JITs our rewritten fatbins and the probes count right.
# Run from the repository root with the build folder carried along:
#   tests/gpu/device/run_device_checks.sh build-gpu
set -uo pipefail
build=${1:-build-gpu}
fixtures=$build/tests/gpu/fixtures
fail=0

nvidia-smi -L || { echo "no GPU visible"; exit 2; }

echo "== sample apps"
for app in vector_add matmul param_types multi_kernel; do
  want=""
  for variant in default nocompress compressall lz4; do
    for rt in static shared; do
      exe=$fixtures/${app}_${variant}_${rt}
      got=$(LD_LIBRARY_PATH=${CUDA_HOME:-/usr/local/cuda}/lib64 "$exe" 2>&1)
      rc=$?
      echo "$app $variant $rt: rc=$rc $got"
      [ $rc -eq 0 ] || fail=1
      [ -z "$want" ] && want=$got
      [ "$got" = "$want" ] || { echo "  differs from $want"; fail=1; }
    done
  done
done

echo "== cuobjdump cross-check"
UBT_GPU_FIXTURES=$fixtures "$build/tests/gpu/ubtrace_gpu_offline_test" \
  --gtest_filter='GpuFatbin.AgreesWithCuobjdump' || fail=1

echo "== driver JIT of rewritten fatbins"
check=$build/tests/gpu/ubtrace_gpu_device_check
"$check" "$fixtures"
rc=$?
if [ $rc -eq 127 ] || [ $rc -eq 126 ]; then
  # Built on another OS image and does not start here (glibc): rebuild it
  # with this machine's compiler (needs zstd and lz4 headers).
  echo "rebuilding the device check here"
  c++ -std=c++20 -O2 -I. -I"${CUDA_HOME:-/usr/local/cuda}/include" \
    tests/gpu/device/device_check.cpp runtime/gpu/*.cpp \
    -lzstd -llz4 -ldl -o /tmp/ubtrace_gpu_device_check &&
    /tmp/ubtrace_gpu_device_check "$fixtures"
  rc=$?
fi
[ $rc -eq 0 ] || fail=1
exit $fail
