#!/usr/bin/env python3
"""What system call probes cost the traced program, side by side in one
run: a loop of getppid() calls (tests/testprogs/syscaller loop N) untraced,
under ubtrace with the call probed and with only another call probed,
under Debian's bpftrace (kernel tracepoint, filtered on the command's pid)
and under strace.

    bench/syscalls.py [BUILD_DIR] [--repeat R] [--calls N]

Prints ns per call for each (medians of R runs) and the added cost.
bpftrace needs root; strace needs ptrace; each is skipped otherwise.
"""
import os
import re
import shutil
import sys

from cli_args import build, median_printed, option


repeat = int(option("--repeat", "5"))
calls = int(option("--calls", "1000000"))
ubtrace = os.path.join(build, "ubtrace")
prog = os.path.abspath(os.path.join(build, "tests", "testprogs", "syscaller"))
LINE = re.compile(r"calls \d+ ns (\d+) ns/call")
PROBED = "tracepoint:syscalls:sys_enter_getppid { @ = count(); }"
RAW = "tracepoint:raw_syscalls:sys_enter { @[args.id] = count(); }"
OTHER = "tracepoint:syscalls:sys_enter_openat { @ = count(); }"


def median(cmd):
    return median_printed(cmd, LINE, repeat)


def main():
    target = [prog, "loop", str(calls)]
    target_cmd = " ".join(target)
    rows = [("untraced", target)]
    rows.append(("ubtrace, sys_enter_getppid probed", [ubtrace, "-c", target_cmd, "-e", PROBED]))
    rows.append(("ubtrace, raw_syscalls:sys_enter probed", [ubtrace, "-c", target_cmd, "-e", RAW]))
    rows.append(("ubtrace, only sys_enter_openat probed", [ubtrace, "-c", target_cmd, "-e", OTHER]))
    if os.geteuid() == 0 and shutil.which("bpftrace"):
        rows.append(("bpftrace, raw_syscalls:sys_enter",
                     ["bpftrace", "-c", target_cmd, "-e",
                      "tracepoint:raw_syscalls:sys_enter /pid == cpid/ { @[args->id] = count(); }"]))
    else:
        print("bpftrace: skipped (needs root and /usr/bin/bpftrace)")
    if shutil.which("strace"):
        rows.append(("strace -f -e trace=getppid", ["strace", "-f", "-qq", "-o", "/dev/null",
                                                     "-e", "trace=getppid"] + target))
    print(f"syscaller loop {calls}: ns per getppid(), medians of {repeat} runs\n")
    base = None
    for name, cmd in rows:
        ns = median(cmd)
        if base is None:
            base = ns
            print(f"{name:42s} {ns:7d} ns")
        else:
            print(f"{name:42s} {ns:7d} ns  (+{ns - base} ns per call)")


if __name__ == "__main__":
    main()
