#!/usr/bin/python3
"""How much of a short-lived program a system-wide trace catches.

A system-wide trace (no -c, no -p) of tick() in a private copy of
tests/testprogs/ticker, which calls tick(i) once a millisecond (i = 0, 1,
...) for as many milliseconds as it is told, then prints how many times it
did. Programs that live 10 ms, 100 ms and 1 s are started one after
another while the trace runs. For each lifetime:

  caught   hits counted / ticks the programs made (all of them: 100%)
  late     the first tick caught (ticks missed from main on, ~1.07 ms
           each): how long after main the hooks were live, median and p99
           of the programs caught at all
  missed   programs with no hit at all
  run      each program's wall time, fork to exit (median, ms): what
           holding a new program until its hooks are in costs it

Side by side in one run: the programs untraced, ubtrace as root (new programs learnt from the
kernel's process events), ubtrace as user nobody ("ub-user": from the
probed file's opens, inotify; the programs run as nobody too) and
Debian's bpftrace (kernel uprobes on the file, live before the program
starts; needs root).

  bench/system_wide.py [BUILD_DIR] [RUNS_OF_10MS]
"""
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

build = sys.argv[1] if len(sys.argv) > 1 else "build"
runs10 = int(sys.argv[2]) if len(sys.argv) > 2 else 40
LIFETIMES = [(10, runs10), (100, max(runs10 // 4, 1)), (1000, max(runs10 // 10, 1))]


def pct(values, p):
    if not values:
        return -1
    s = sorted(values)
    return s[min(len(s) - 1, (len(s) * p + 99) // 100 - 1)]


def trace(label, argv, attached, work, user=()):
    prog = os.path.join(work, "ticker")
    script = ("uprobe:%s:tick { @hits[pid] = count(); @first[pid] = min(arg0); }" % prog)
    path = os.path.join(work, label + ".out")
    tracer = None
    with open(path, "w") as out:
        if argv:
            tracer = subprocess.Popen(list(user) + argv + ["-e", script], stdout=out,
                                      stderr=subprocess.STDOUT)
    deadline = time.time() + 60
    while tracer and time.time() < deadline and attached not in open(path).read():
        time.sleep(0.01)
    made = {}
    for ms, n in LIFETIMES:
        for _ in range(n):
            start = time.monotonic()
            p = subprocess.Popen(list(user) + [prog, str(ms)], stdout=subprocess.PIPE,
                                 text=True)
            text, _ = p.communicate()
            wall = (time.monotonic() - start) * 1000.0
            made[p.pid] = (ms, int(text.split()[1]), wall)
            time.sleep(0.02)
    if not tracer:
        for ms, _ in LIFETIMES:
            walls = [w for (l, _, w) in made.values() if l == ms]
            print("%-9s %5d ms x %3d  run median %7.2f ms" %
                  (label, ms, len(walls), pct(walls, 50)))
        return
    time.sleep(0.5)
    tracer.send_signal(signal.SIGINT)
    tracer.wait(timeout=60)
    text = open(path).read()
    hits = {int(k): int(v) for k, v in re.findall(r"^@hits\[(\d+)\]: (\d+)", text, re.M)}
    first = {int(k): int(v) for k, v in re.findall(r"^@first\[(\d+)\]: (\d+)", text, re.M)}
    for ms, _ in LIFETIMES:
        pids = [p for p, (l, _, _) in made.items() if l == ms]
        ticks = sum(made[p][1] for p in pids)
        caught = sum(hits.get(p, 0) for p in pids)
        late = [first[p] for p in pids if p in first]
        missed = sum(1 for p in pids if p not in hits)
        walls = [made[p][2] for p in pids]
        print("%-9s %5d ms x %3d  caught %6.2f%% (%d/%d)  late median %4d p99 %4d ticks"
              "  missed %d  run median %7.2f ms" %
              (label, ms, len(pids), 100.0 * caught / max(ticks, 1), caught, ticks,
               pct(late, 50), pct(late, 99), missed, pct(walls, 50)))


def main():
    work = tempfile.mkdtemp()
    os.chmod(work, 0o755)
    try:
        shutil.copy(os.path.join(build, "tests/testprogs/ticker"), os.path.join(work, "ticker"))
        ubtrace = [os.path.abspath(os.path.join(build, "ubtrace"))]
        trace("untraced", None, None, work)
        trace("ubtrace", ubtrace, "Attached", work)
        if os.geteuid() == 0 and shutil.which("setpriv"):
            # An ordinary user: no process events; the files' opens tell.
            trace("ub-user", ubtrace, "Attached", work,
                  ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"])
        if shutil.which("bpftrace") and os.geteuid() == 0:
            trace("bpftrace", ["bpftrace"], "Attaching", work)
        else:
            print("bpftrace: not run (needs bpftrace and root)")
    finally:
        shutil.rmtree(work)


main()
