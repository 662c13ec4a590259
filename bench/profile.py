#!/usr/bin/env python3
"""What profile probes cost a CPU-bound program: its throughput untraced,
under ubtrace's in-process sampler and under Debian's bpftrace, in one run.

The program (tests/testprogs/hotloop) calls a tiny function N times from T
threads and reports its loop's wall time; the loss is the traced loop's
time over the untraced one's, minus one (medians of R runs each). Both
tracers run `profile:hz:RATE { @[ustack] = count(); }` on the same binary
with -c (bpftrace filters on the command's pid, as its users write it).

    bench/profile.py [BUILD_DIR] [--repeat R] [--rates 99,999] [--threads 1,2]
                     [--system-wide]

--system-wide: neither tracer names the program. Each runs
`profile:hz:RATE /comm == "hotloop"/ { ... }` on every CPU (ubtrace's
CLI reads per-CPU perf events, bpftrace's BPF runs in the kernel), started
half a second before the program and stopped with SIGINT after it.

bpftrace needs root (perf events); it is skipped otherwise and says so.
"""
import os
import re
import signal
import statistics
import subprocess
import sys
import time

from cli_args import build, option


repeat = int(option("--repeat", "5"))
rates = [int(r) for r in option("--rates", "99,999").split(",")]
thread_counts = [int(t) for t in option("--threads", "1,2").split(",")]
ubtrace = os.path.join(build, "ubtrace")
hotloop = os.path.abspath(os.path.join(build, "tests", "testprogs", "hotloop"))
LINE = re.compile(r"calls (\d+) ns (\d+) ns/call")
CALLS = 1_000_000_000  # about 1.5 s of loop per thread


def loop_ns(cmd):
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=600)
    m = LINE.search(r.stdout.decode())
    if not m:
        raise RuntimeError(f"{cmd[0]} failed: {r.stderr.decode()[-400:]}")
    return int(m.group(2)), total_samples(r.stdout.decode() + r.stderr.decode())


def total_samples(text):
    samples = 0
    for line in text.splitlines():
        s = re.match(r"@total: (\d+)", line)
        if s:
            samples = int(s.group(1))
    return samples


def loop_ns_beside(tracer, prog):
    """The program's loop time with `tracer` running on every CPU."""
    t = subprocess.Popen(tracer, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    time.sleep(0.5)
    ns, _ = loop_ns(prog)
    t.send_signal(signal.SIGINT)
    out, err = t.communicate(timeout=60)
    return ns, total_samples(out.decode() + err.decode())


def median_run(cmd, beside=None):
    runs = [loop_ns_beside(cmd, beside) if beside else loop_ns(cmd)
            for _ in range(repeat)]
    return statistics.median(r[0] for r in runs), statistics.median(r[1] for r in runs)


def main():
    bpftrace = "/usr/bin/bpftrace"
    have_bpftrace = os.geteuid() == 0 and os.path.exists(bpftrace)
    print(f"hotloop: {hotloop}, {CALLS} calls per thread; medians of {repeat} runs\n")
    print(f"{'threads':>7}{'rate':>6}{'untraced ms':>13}{'ubtrace ms':>12}{'loss':>8}"
          f"{'samples':>9}{'bpftrace ms':>13}{'loss':>8}{'samples':>9}")
    system_wide = "--system-wide" in sys.argv
    if system_wide:
        print("system-wide: neither tracer names the program\n")
    for t in thread_counts:
        prog = [hotloop, str(CALLS), str(t)]
        base, _ = median_run(prog)
        for rate in rates:
            body = "{ @[ustack] = count(); @total = count(); }"
            if system_wide:
                script = f'profile:hz:{rate} /comm == "hotloop"/ {body}'
                u, us = median_run([ubtrace, "-q", "-e", script], beside=prog)
            else:
                script = f"profile:hz:{rate} {body}"
                u, us = median_run([ubtrace, "-q", "-e", script, "-c", " ".join(prog)])
            if have_bpftrace and system_wide:
                bscript = f'profile:hz:{rate} /comm == "hotloop"/ {body}'
                b, bs = median_run([bpftrace, "-e", bscript], beside=prog)
            elif have_bpftrace:
                bscript = f"profile:hz:{rate} /pid == cpid/ {body}"
                b, bs = median_run([bpftrace, "-e", bscript, "-c", " ".join(prog)])
            if have_bpftrace:
                bcols = f"{b / 1e6:13.0f}{(b / base - 1) * 100:7.2f}%{bs:9.0f}"
            else:
                bcols = f"{'skipped':>13}{'':>8}{'':>9}"
            print(f"{t:>7}{rate:>6}{base / 1e6:13.0f}{u / 1e6:12.0f}"
                  f"{(u / base - 1) * 100:7.2f}%{us:9.0f}{bcols}")
    if not have_bpftrace:
        print("bpftrace: skipped (needs root and /usr/bin/bpftrace)")


if __name__ == "__main__":
    main()
