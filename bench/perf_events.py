#!/usr/bin/env python3
"""What software-event probes cost the traced program, side by side in one
run: tests/testprogs/page_faults touching N fresh pages (a page fault
each) untraced, under ubtrace with software:faults sampled every fault and
every 100th, and under Debian's bpftrace (its kernel perf event, filtered
on the command's pid).

    bench/perf_events.py [BUILD_DIR] [--repeat R] [--pages N]

Prints ns per page for each (medians of R runs) and the added cost per
page fault. bpftrace needs root; it is skipped otherwise.
"""
import os
import re
import shutil

from cli_args import build, median_printed, option


repeat = int(option("--repeat", "5"))
pages = int(option("--pages", "200000"))
ubtrace = os.path.join(build, "ubtrace")
prog = os.path.abspath(os.path.join(build, "tests", "testprogs", "page_faults"))
LINE = re.compile(r"ns per page (\d+)")


def main():
    target = [prog, str(pages)]
    target_cmd = " ".join(target)
    rows = [("untraced", target)]
    for count in (1, 100):
        rows.append((f"ubtrace, software:faults:{count}",
                     [ubtrace, "-c", target_cmd, "-e",
                      f"software:faults:{count} {{ @ = count(); }}"]))
    if os.geteuid() == 0 and shutil.which("bpftrace"):
        for count in (1, 100):
            rows.append((f"bpftrace, software:faults:{count}",
                         ["bpftrace", "-c", target_cmd, "-e",
                          f"software:faults:{count} /pid == cpid/ {{ @ = count(); }}"]))
    else:
        print("bpftrace: skipped (needs root and /usr/bin/bpftrace)")
    base = None
    print(f"{pages} page faults, median of {repeat} runs")
    for name, cmd in rows:
        ns = median_printed(cmd, LINE, repeat)
        if base is None:
            base = ns
        print(f"{name:36s} {ns:6d} ns/page  (+{ns - base} ns)")


if __name__ == "__main__":
    main()
