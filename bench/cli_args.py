"""The command line the bench scripts share: `SCRIPT [BUILD] [--NAME VALUE]...`,
and how they time a command: the median of what it prints, over runs."""
import statistics
import subprocess
import sys

build = sys.argv[1] if len(sys.argv) > 1 and not sys.argv[1].startswith("-") else "build"


def option(name, default):
    """The value after --NAME on the command line, or default."""
    if name in sys.argv:
        return sys.argv[sys.argv.index(name) + 1]
    return default


def printed_number(cmd, pattern):
    """Runs cmd; the integer its output's first match of pattern captures."""
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=900)
    out = r.stdout.decode() + r.stderr.decode()
    m = pattern.search(out)
    if not m:
        raise RuntimeError(f"{cmd[0]} failed: {out[-400:]}")
    return int(m.group(1))


def median_printed(cmd, pattern, repeat):
    """The median of printed_number over repeat runs."""
    return statistics.median(printed_number(cmd, pattern) for _ in range(repeat))
