#!/usr/bin/env python3
"""Per-hit cost of user-space probes, ubtrace and Debian's bpftrace side by
side in one run.

The traced program (tests/testprogs/hotloop) calls a tiny function N times
from T threads and reports the loop's wall time. A probe's cost per hit is
the slope of that time over two values of N, less the slope of the same
program untraced (so start-up, attach and printing drop out).

    bench/uprobe.py [BUILD_DIR] [--repeat R]

bpftrace needs root (kernel uprobes); it is skipped otherwise and says so.
"""
import os
import re
import statistics
import subprocess
import sys

build = sys.argv[1] if len(sys.argv) > 1 and not sys.argv[1].startswith("-") else "build"
repeat = 3
if "--repeat" in sys.argv:
    repeat = int(sys.argv[sys.argv.index("--repeat") + 1])
ubtrace = os.path.join(build, "ubtrace")
hotloop = os.path.abspath(os.path.join(build, "tests", "testprogs", "hotloop"))
LINE = re.compile(r"calls (\d+) ns (\d+) ns/call [\d.]+ rss_kb (\d+)")

SCRIPTS = {
    "count": "uprobe:{p}:hot {{ @c = count(); }}",
    "hist(arg0)": "uprobe:{p}:hot {{ @h = hist(arg0); }}",
    "keyed count": "uprobe:{p}:hot {{ @k[tid] = count(); }}",
    "uretprobe count": "uretprobe:{p}:hot {{ @c = count(); }}",
    "ustack count": "uprobe:{p}:hot {{ @s[ustack] = count(); }}",
}
# --only NAME[,NAME...]: just those rows (and the untraced baselines).
if "--only" in sys.argv:
    keep = sys.argv[sys.argv.index("--only") + 1].split(",")
    SCRIPTS = {k: v for k, v in SCRIPTS.items() if k in keep}


def run(cmd):
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=600)
    m = LINE.search(r.stdout.decode())
    if not m:
        raise RuntimeError(f"{cmd[0]} failed: {r.stderr.decode()[-400:]}")
    return int(m.group(2)), int(m.group(3))


def loop_ns(tracer, script, n, threads):
    prog = [hotloop, str(n), str(threads)]
    if tracer is None:
        return run(prog)
    cmd = [tracer, "-q", "-e", script, "-c", " ".join(prog)] if tracer == ubtrace else \
          [tracer, "-e", script, "-c", " ".join(prog)]
    return run(cmd)


def slope(tracer, script, n1, n2, threads):
    """ns per call over [n1, n2], median of `repeat` runs."""
    vals = []
    for _ in range(repeat):
        t1, _ = loop_ns(tracer, script, n1, threads)
        t2, _ = loop_ns(tracer, script, n2, threads)
        vals.append((t2 - t1) / (n2 - n1))
    return statistics.median(vals)


def main():
    bpftrace = "/usr/bin/bpftrace"
    have_bpftrace = os.geteuid() == 0 and os.path.exists(bpftrace)
    print(f"hotloop: {hotloop}; slopes are medians of {repeat} runs\n")

    # Baselines (untraced) per thread count.
    base = {t: slope(None, None, 20_000_000, 40_000_000, t) for t in (1, 2, 8)}
    rows = []
    for name, tmpl in SCRIPTS.items():
        script = tmpl.format(p=hotloop)
        # Spans long enough (hundreds of ms) that start-up jitter is noise.
        u = slope(ubtrace, script, 10_000_000, 30_000_000, 1) - base[1]
        b = (slope(bpftrace, script, 1_000_000, 3_000_000, 1) - base[1]) if have_bpftrace else None
        rows.append((name, 1, u, b))
    script = SCRIPTS.get("count", next(iter(SCRIPTS.values()))).format(p=hotloop)
    for t in (2, 8) if "count" in SCRIPTS else ():
        u = slope(ubtrace, script, 20_000_000, 60_000_000, t) - base[t]
        b = (slope(bpftrace, script, 2_000_000, 6_000_000, t) - base[t]) if have_bpftrace else None
        rows.append(("count", t, u, b))

    print(f"{'probe body':<18}{'threads':>8}{'ubtrace ns/hit':>16}{'bpftrace ns/hit':>17}{'ratio':>9}")
    for name, t, u, b in rows:
        bs = f"{b:17.0f}" if b is not None else f"{'skipped':>17}"
        ratio = f"{b / u:8.0f}x" if b is not None and u > 0 else f"{'-':>9}"
        print(f"{name:<18}{t:>8}{u:16.1f}{bs}{ratio}")
    for t in (1, 2, 8):
        print(f"untraced call, {t} thread(s): {base[t]:.2f} ns (wall time per call)")

    # Memory the agent adds to the traced process.
    _, rss_plain = loop_ns(None, None, 1_000_000, 1)
    _, rss_traced = loop_ns(ubtrace, script, 1_000_000, 1)
    print(f"agent RSS added to the target: {(rss_traced - rss_plain) / 1024:.1f} MB "
          f"({rss_plain} KB untraced, {rss_traced} KB traced)")
    if not have_bpftrace:
        print("bpftrace: skipped (needs root and /usr/bin/bpftrace)")


if __name__ == "__main__":
    main()
