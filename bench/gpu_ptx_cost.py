#!/usr/bin/env python3
"""What GPU probes add to a kernel, in PTX instructions each thread executes,
measured without a GPU: the driver stand-in runs every launch with ptxsim
(tests/gpu/ptxsim) and reports how many instructions its threads executed.

This is the work a probe puts on each GPU thread, not GPU time: on a
memory-bound kernel most of it hides behind the loads, and atomics cost
more than their one instruction. The device check (tests/gpu/device-check.sh)
measures time on a GPU.

    bench/gpu_ptx_cost.py [BUILD_DIR]

Needs the CUDA fixtures and the stand-in (a build with the CUDA toolkit).
"""
import os
import re
import subprocess
import sys
import tempfile

build = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "build")
ubtrace = os.path.join(build, "ubtrace")
standin = os.path.join(build, "tests", "gpu", "standin")
app = os.path.join(build, "tests", "gpu", "fixtures", "vector_add_default_static")
cuda_lib = "/usr/local/cuda/lib64"
N, LAUNCHES = 65536, 2  # 256 blocks of 256 threads, twice

SCRIPTS = [
    ("uninstrumented", None),
    ("kernel: empty probe, predicate never true",
     "kernel::vector_add /arg3 == 0/ { @never = count(); }"),
    ("kernel: @c = count()", "kernel::vector_add { @c = count(); }"),
    ("kernelret: @c = count()", "kernelret::vector_add { @c = count(); }"),
    ("kernel: @h = hist(threadIdx.x)",
     "kernel::vector_add { @h = hist(threadIdx.x); }"),
    ("kernel: @k[blockIdx.x] = count()",
     "kernel::vector_add { @k[blockIdx.x] = count(); }"),
    ("kernel: @s = sum(arg3), @m = max(arg3)",
     "kernel::vector_add { @s = sum(arg3); @m = max(arg3); }"),
    ("per-block duration (entry + exit, threadIdx.x == 0)",
     "kernel::vector_add /threadIdx.x == 0/ { @start[blockIdx.x] = nsecs; } "
     "kernelret::vector_add /threadIdx.x == 0/ "
     "{ @ns = hist(nsecs - @start[blockIdx.x]); }"),
]
EXEC = re.compile(r"^exec \S+ (\d+)$")


def instructions(script):
    with tempfile.TemporaryDirectory() as d:
        env = dict(os.environ, UBT_STANDIN_DIR=d, UBT_STANDIN_EXEC="1",
                   LD_LIBRARY_PATH=f"{standin}:{cuda_lib}")
        cmd = [app, str(N), str(LAUNCHES)]
        if script:
            cmd = [ubtrace, "-e", script, "-c", " ".join(cmd)]
        r = subprocess.run(cmd, env=env, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, timeout=600)
        if r.returncode != 0:
            raise RuntimeError(f"{script}: {r.stdout.decode()[-600:]}")
        with open(os.path.join(d, "calls.log")) as f:
            counts = [int(m.group(1)) for m in map(EXEC.match, f) if m]
    if len(counts) != LAUNCHES:
        raise RuntimeError(f"{script}: {len(counts)} launches ran")
    return sum(counts) / (N * LAUNCHES)


def main():
    if not (os.path.exists(app) and os.path.exists(standin)):
        sys.exit(f"no CUDA fixtures or stand-in in {build}")
    print(f"vector_add, {N} threads x {LAUNCHES} launches; PTX instructions "
          "each thread executes (ptxsim)\n")
    print("| probe | per thread | added |")
    print("|---|---:|---:|")
    base = None
    for name, script in SCRIPTS:
        per_thread = instructions(script)
        base = per_thread if base is None else base
        print(f"| {name} | {per_thread:.2f} | {per_thread - base:+.2f} |")


if __name__ == "__main__":
    main()
