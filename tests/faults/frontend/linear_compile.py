#!/usr/bin/env python3
"""Compile work must grow linearly with the size of a probe (issue 11,
defect 13: 4000 statements took 3.6 s, 16000 more than 2 minutes).

Counts the instructions compile_work (parse, passes, BPF code generation,
verification, the x86-64 compile of the agent's image) executes, under
valgrind (cachegrind, no cache simulation): a deterministic measure, not a
timing. With W(n) the count for a probe of n statements and W(1) the fixed
cost, (W(4n) - W(1)) / (W(n) - W(1)) is 4 for linear work and 16 for
quadratic; the test fails above 4.5 (the old code: 8.2 for map updates,
5.3 for repeated tests; now about 2.9 for both).

usage: linear_compile.py COMPILE_WORK SHAPE N
Exit status 77 (skipped) without valgrind or objcopy.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

SHAPES = {
    # One block of map updates: the scheduler's node heights and machine
    # CSE were quadratic in it.
    "updates": lambda i: f"@a{i % 10} = {i};",
    # The same test over and over: O2's value propagation was quadratic.
    "tests": lambda i: "if (arg0 == 7) { @a = 1; }",
}

LIMIT = 4.5


def work(binary, script_dir, shape, n):
    path = os.path.join(script_dir, f"{shape}_{n}.bt")
    with open(path, "w") as f:
        body = " ".join(SHAPES[shape](i) for i in range(n))
        f.write("uprobe:/bin/true:main { " + body + " }\n")
    r = subprocess.run(
        ["valgrind", "--tool=cachegrind", "--cache-sim=no",
         "--cachegrind-out-file=/dev/null", binary, path],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=600)
    if r.returncode != 0:
        sys.exit(f"compile_work failed on {n} statements:\n{r.stdout}{r.stderr}")
    m = re.search(r"I\s+refs:\s+([\d,]+)", r.stderr)
    if not m:
        sys.exit(f"no instruction count from valgrind:\n{r.stderr}")
    return int(m.group(1).replace(",", ""))


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    compile_work, shape, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
    for tool in ("valgrind", "objcopy"):
        if not shutil.which(tool):
            print(f"SKIP: {tool} is not installed")
            return 77
    with tempfile.TemporaryDirectory() as tmp:
        # Valgrind 3.19 cannot read clang-19's DWARF 5: count on a copy
        # without debug information (the same code).
        binary = os.path.join(tmp, "compile_work")
        subprocess.run(["objcopy", "--strip-debug", compile_work, binary], check=True)
        base = work(binary, tmp, shape, 1)
        small = work(binary, tmp, shape, n)
        large = work(binary, tmp, shape, 4 * n)
    ratio = (large - base) / max(small - base, 1)
    print(f"{shape}: W(1)={base} W({n})={small} W({4 * n})={large} "
          f"growth for 4x the statements: {ratio:.2f} (limit {LIMIT})")
    return 0 if ratio <= LIMIT else 1


if __name__ == "__main__":
    sys.exit(main())
