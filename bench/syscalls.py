#!/usr/bin/env python3
"""What system call probes cost the traced program, side by side in one
run: a loop of getppid() calls (tests/testprogs/syscaller loop N) untraced,
under ubtrace with the call probed and with only another call probed,
under Debian's bpftrace (kernel tracepoint, filtered on the command's pid)
and under strace; then the same through an inline `syscall` in the
program (inlineloop: a site whose vector registers ubtrace must keep).
A row with syscall user dispatch on and nothing trapped shows the
kernel's part of ubtrace's cost (syscaller dispatchloop).

A third table runs `syscaller pairloop`: getppid() and getuid() calls in
alternating timed batches in one process, only getppid probed. The
difference of their median batches is what the probe adds to a call,
with the machine's drift (which moves a whole run by +-100 ns on a
shared VM) the same for both; the untraced row shows the calls' own
difference.

    bench/syscalls.py [BUILD_DIR] [--repeat R] [--calls N]

Prints ns per call for each (medians of R runs) and the added cost, over
the whole run and over its second half (ubtrace rewrites a call site
after the first calls there: the second half is the steady cost).
bpftrace needs root; strace needs ptrace; each is skipped otherwise.
"""
import os
import re
import shutil
import signal
import statistics
import subprocess
import time

from cli_args import build, option


repeat = int(option("--repeat", "5"))
calls = int(option("--calls", "1000000"))
ubtrace = os.path.join(build, "ubtrace")
prog = os.path.abspath(os.path.join(build, "tests", "testprogs", "syscaller"))
LINE = re.compile(r"calls \d+ ns (\d+) ns/call")
LATE = re.compile(r"second half (\d+) ns/call")
PROBED = "tracepoint:syscalls:sys_enter_getppid { @ = count(); }"
RAW = "tracepoint:raw_syscalls:sys_enter { @[args.id] = count(); }"
OTHER = "tracepoint:syscalls:sys_enter_openat { @ = count(); }"


def medians(cmd):
    """Medians over `repeat` runs of the whole run's and the second half's
    ns per call, as the program prints them."""
    whole, late = [], []
    for _ in range(repeat):
        r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           timeout=900)
        out = r.stdout.decode()
        m, n = LINE.search(out), LATE.search(out)
        if not m or not n:
            raise RuntimeError(f"{cmd[0]} failed: {out[-400:]}")
        whole.append(int(m.group(1)))
        late.append(int(n.group(1)))
    return int(statistics.median(whole)), int(statistics.median(late))


def table(mode):
    target = [prog, mode, str(calls)]
    target_cmd = " ".join(target)
    rows = [("untraced", target)]
    if mode == "loop":
        # What any use of syscall user dispatch costs, in the kernel.
        rows.append(("dispatch on, nothing trapped (kernel's part)",
                     [prog, "dispatchloop", str(calls)]))
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
    print(f"syscaller {mode} {calls}: ns per getppid(), medians of {repeat} runs\n")
    print(f"{'':42s} {'whole run':>16s}   {'second half':>16s}")
    base = None
    for name, cmd in rows:
        ns, late = medians(cmd)
        if base is None:
            base = (ns, late)
            print(f"{name:42s} {ns:7d} ns{'':9s} {late:7d} ns")
        else:
            print(f"{name:42s} {ns:7d} ns (+{ns - base[0]:4d})"
                  f" {late:7d} ns (+{late - base[1]:4d})")
    print()


PAIR = re.compile(r"pair getppid (\d+) getuid (\d+) ns/call")


def run_wide(tracer, target):
    """Runs `target` while `tracer` traces system-wide: started once the
    tracer says it attached, the tracer stopped (SIGINT) after it."""
    t = subprocess.Popen(tracer, stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT)
    seen = ""
    while "Attach" not in seen:  # ubtrace: "Attached", bpftrace: "Attaching"
        line = t.stdout.readline().decode()
        if not line:
            raise RuntimeError(f"{tracer[0]} did not attach: {seen[-400:]}")
        seen += line
    if "Attaching" in seen:
        time.sleep(2)  # bpftrace says it before its probes are in
    r = subprocess.run(target, stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, timeout=900)
    t.send_signal(signal.SIGINT)
    t.communicate(timeout=60)
    return r


def pair_table():
    """getppid's median batch less getuid's, in one process, medians of
    `repeat` runs; rows in turn, round by round."""
    target = [prog, "pairloop", str(calls)]
    target_cmd = " ".join(target)
    rows = [("untraced", target),
            ("ubtrace, sys_enter_getppid probed",
             [ubtrace, "-c", target_cmd, "-e", PROBED]),
            ("ubtrace, sys_enter_getppid, empty probe",
             [ubtrace, "-c", target_cmd, "-e",
              "tracepoint:syscalls:sys_enter_getppid { $x = 1; }"]),
            ("ubtrace, uprobe:libc:getppid (no dispatch)",
             [ubtrace, "-c", target_cmd, "-e",
              "uprobe:libc:getppid { @ = count(); }"])]
    if os.geteuid() == 0 and shutil.which("bpftrace"):
        rows.append(("bpftrace, sys_enter_getppid",
                     ["bpftrace", "-c", target_cmd, "-e",
                      "tracepoint:syscalls:sys_enter_getppid /pid == cpid/ "
                      "{ @ = count(); }"]))
    # System-wide (no -c/-p): the tracer runs apart, the program is started
    # once it has attached. ubtrace's probes then run in its CLI on the
    # kernel's raw_syscalls records; bpftrace's in the kernel.
    wide = "tracepoint:syscalls:sys_enter_getppid /comm == \"syscaller\"/ " \
           "{ @ = count(); }"
    if os.geteuid() == 0:
        rows.append(("ubtrace system-wide, sys_enter_getppid",
                     ("wide", [ubtrace, "-e", wide])))
        if shutil.which("bpftrace"):
            rows.append(("bpftrace system-wide, sys_enter_getppid",
                         ("wide", ["bpftrace", "-e", wide])))
    diffs = {name: [] for name, _ in rows}
    for _ in range(repeat):
        for name, cmd in rows:
            r = run_wide(cmd[1], target) if cmd[0] == "wide" else \
                subprocess.run(cmd, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, timeout=900)
            m = PAIR.search(r.stdout.decode())
            if not m:
                raise RuntimeError(f"{cmd[0]} failed: {r.stdout.decode()[-400:]}")
            diffs[name].append(int(m.group(1)) - int(m.group(2)))
    print(f"syscaller pairloop {calls}: getppid less getuid, ns per call "
          f"(median batches of the second half), medians of {repeat} runs\n")
    for name, _ in rows:
        d = diffs[name]
        print(f"{name:44s} {int(statistics.median(d)):5d} ns"
              f"   (runs: {' '.join(str(x) for x in d)})")
    print()


def main():
    table("loop")
    table("inlineloop")
    pair_table()


if __name__ == "__main__":
    main()
