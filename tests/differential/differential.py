#!/usr/bin/env python3
"""Differential test: runs one .bt script under Debian's bpftrace (the
oracle) and under ubtrace, and compares what they print.

usage: differential.py BUILD_DIR SCRIPT.bt [--show]

ubtrace matches bpftrace 0.26; the oracle installed here is bpftrace 0.17.
Before comparing, the oracle's standard output is rewritten by the rules in
normalise() below, which undo the 0.17/0.26 differences we know of and
nothing else. Anything else that differs is a failure: either a ubtrace bug
or a 0.17/0.26 difference the scripts must avoid (README.md lists them).

Compared: standard output (after normalising the oracle's) and the exit
code. Not compared: standard error (0.17 writes RLIMIT_MEMLOCK noise there,
0.26 writes "Attached N probes" there).

A script may start with header comments:
  // ARGS: words...      positional parameters after the script
  // TIMEOUT: seconds    kill both after this long (default 10)
  // CMD: command        run both with -c command (user-space probes: the
                         oracle uses kernel uprobes, ubtrace its agent)
{{TESTPROGS}} in the script or its headers is a private copy of the build's
test programs folder (a copy of the script with it replaced is what both
run). Private, because kernel uprobes count every process that runs the
same file: another test running the same program in parallel would show
up in the oracle's counts.

Exit status: 0 same output, 1 different, 77 skipped (the oracle cannot run
here: not root, not installed, or the kernel refuses it), 2 usage.
"""
import atexit
import difflib
import os
import re
import shlex
import subprocess
import sys

ORACLE = os.environ.get("UBTRACE_ORACLE", "/usr/bin/bpftrace")
SKIP = 77


def skip(reason):
    print(f"SKIPPED: {reason}")
    sys.exit(SKIP)


def oracle_unavailable():
    """Why the oracle cannot run here, or None when it can."""
    if not os.path.exists(ORACLE):
        return f"{ORACLE} is not installed"
    if os.geteuid() != 0:
        return "bpftrace needs root"
    try:
        r = subprocess.run([ORACLE, "-e", 'BEGIN { printf("ok\\n"); exit(); }'],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           timeout=30)
    except subprocess.TimeoutExpired:
        return "bpftrace hangs on a trivial BEGIN probe"
    if r.returncode != 0 or b"ok" not in r.stdout:
        err = r.stderr.decode(errors="replace").strip().splitlines()
        err = [l for l in err if "RLIMIT_MEMLOCK" not in l]
        return "the kernel refuses bpftrace: " + (err[-1] if err else f"exit {r.returncode}")
    return None


def header(script_text, key):
    for line in script_text.splitlines():
        m = re.match(r"\s*//\s*" + key + r":\s*(.*)$", line)
        if m:
            return m.group(1).strip()
    return None


# ---- The normaliser: bpftrace 0.17's output in bpftrace 0.26's form. ----

BUCKET_LINE = re.compile(r"^(\(\.\.\., [^)]*\)|\[[^\]]*\]|\[[^)]*\))(\s*)(\d+) \|([@ ]*)\|$")
STATS_VALUE = re.compile(r"^(@.*: )count (-?\d+), average (-?\d+), total (-?\d+)$")
AGG_CALL = re.compile(r"(@[A-Za-z0-9_]*)\s*(?:\[[^\]]*\])?\s*=\s*(avg|stats)\s*\(")


def stats_maps(script_text):
    """Names of the maps the script fills with avg() or stats()."""
    return {m.group(1) for m in AGG_CALL.finditer(script_text)}


def map_of_line(line):
    """The map a printed map line belongs to ("@x: 1", "@x[k]: 1"), or None."""
    m = re.match(r"^(@[A-Za-z0-9_]*)(?:\[|: |:$)", line)
    return m.group(1) if m else None


def normalise(text, script_text):
    lines = text.split("\n")

    # Rule 1: 0.17 announces "Attaching N probes..." on stdout; 0.26 says
    # "Attached N probes" on stderr, which is not compared.
    lines = [l for l in lines if not re.fullmatch(r"Attaching \d+ probes?\.\.\.", l)]

    # Rule 2: stats values print as "count N, average N, total N" in 0.17 and
    # as a record "{ .count = N, .average = N, .total = N }" in 0.26.
    lines = [STATS_VALUE.sub(r"\1{ .count = \2, .average = \3, .total = \4 }", l)
             for l in lines]

    # Rule 3: 0.17 ends a histogram's header line ("@h: ", "@h[k]: ") with a
    # space; 0.26 does not. Only headers followed by a bucket line are
    # touched, so an empty string value ("@s: ") is left alone.
    for i in range(len(lines) - 1):
        if lines[i].startswith("@") and lines[i].endswith(": ") and \
                BUCKET_LINE.match(lines[i + 1]):
            lines[i] = lines[i][:-1]

    # Rule 4: 0.17 prints lhist buckets one value wide as "[4, 5)"; 0.26
    # prints them as "[4]". The label column is 16 wide, so the line is laid
    # out again.
    def one_wide(line):
        m = BUCKET_LINE.match(line)
        if not m:
            return line
        label = m.group(1)
        r = re.fullmatch(r"\[(-?\d+), (-?\d+)\)", label)
        if not r or int(r.group(2)) != int(r.group(1)) + 1:
            return line
        return f"{'[' + r.group(1) + ']':<16}{m.group(3):>8} |{m.group(4)}|"
    lines = [one_wide(l) for l in lines]

    # Rule 5: 0.17 prints an empty line after every avg() or stats() map (at
    # exit and in print()); 0.26 does not. The maps are found in the script.
    agg = stats_maps(script_text)
    out = []
    dropped = False
    for i, l in enumerate(lines):
        # Drop the first empty line right after a line of such a map (not
        # the text's end: the last element only says it ended with "\n").
        if l == "" and not dropped and out and map_of_line(out[-1]) in agg and \
                i + 1 < len(lines):
            dropped = True
            continue
        dropped = False
        out.append(l)
    return "\n".join(out)


ENTRY_LINE = re.compile(r"^(@[A-Za-z0-9_]*)\[(.*)\]: (.*)$")


def order_ties(text):
    """Rule 6 (applied to both outputs): entries of a map with equal values
    print in hash-table order in bpftrace (0.17 and 0.26 alike), so runs of
    one-line entries of the same map with the same value are put in key
    order. Nothing else moves."""
    lines = text.split("\n")
    out = []
    i = 0
    while i < len(lines):
        m = ENTRY_LINE.match(lines[i])
        if not m:
            out.append(lines[i])
            i += 1
            continue
        j = i + 1
        while j < len(lines):
            n = ENTRY_LINE.match(lines[j])
            if not n or n.group(1) != m.group(1) or n.group(3) != m.group(3):
                break
            j += 1

        def key(line):
            k = ENTRY_LINE.match(line).group(2)
            return (0, int(k), "") if re.fullmatch(r"-?\d+", k) else (1, 0, k)
        out.extend(sorted(lines[i:j], key=key))
        i = j
    return "\n".join(out)


def run(cmd, timeout):
    try:
        r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           stdin=subprocess.DEVNULL, timeout=timeout)
        return r.returncode, r.stdout.decode(errors="replace"), r.stderr.decode(errors="replace")
    except subprocess.TimeoutExpired as e:
        out = (e.stdout or b"").decode(errors="replace")
        err = (e.stderr or b"").decode(errors="replace")
        return None, out, err


def main():
    if len(sys.argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    build, script = sys.argv[1], sys.argv[2]
    show = "--show" in sys.argv[3:]
    ubtrace = os.path.join(build, "ubtrace")
    import shutil
    import tempfile
    text = open(script, encoding="utf-8").read()
    if "{{TESTPROGS}}" in text:
        built = os.path.join(os.path.abspath(build), "tests", "testprogs")
        testprogs = tempfile.mkdtemp(prefix="ubt-diff-progs-")
        atexit.register(shutil.rmtree, testprogs, True)
        for name in os.listdir(built):
            path = os.path.join(built, name)
            if os.path.isfile(path):
                shutil.copy2(path, testprogs)  # a new inode, not a link
        text = text.replace("{{TESTPROGS}}", testprogs)
    args = shlex.split(header(text, "ARGS") or "")
    timeout = float(header(text, "TIMEOUT") or 10)
    cmd = header(text, "CMD")
    flags = ["-c", cmd] if cmd else []
    if "{{" not in open(script, encoding="utf-8").read():
        run_script = script
    else:
        tmp = tempfile.NamedTemporaryFile("w", suffix=".bt", delete=False)
        tmp.write(text)
        tmp.close()
        run_script = tmp.name

    why = oracle_unavailable()
    if why:
        skip(why)
    if not os.access(ubtrace, os.X_OK):
        print(f"FAIL: {ubtrace} is not built")
        return 1

    o_rc, o_out, o_err = run([ORACLE] + flags + [run_script] + args, timeout)
    if o_rc is None:
        skip(f"bpftrace did not finish within {timeout}s")
    u_rc, u_out, u_err = run([ubtrace] + flags + [run_script] + args, timeout)
    want = order_ties(normalise(o_out, text))
    u_out = order_ties(u_out) if u_out is not None else u_out
    if show:
        print(f"--- bpftrace (exit {o_rc}, normalised) ---\n{want}--- ubtrace (exit {u_rc}) ---\n{u_out}")
    if u_rc is None:
        print(f"FAIL: ubtrace did not finish within {timeout}s\n{u_out}{u_err}")
        return 1
    problems = []
    if u_out != want:
        diff = difflib.unified_diff(want.splitlines(True), u_out.splitlines(True),
                                    "bpftrace 0.17 (normalised)", "ubtrace")
        problems.append("stdout differs:\n" + "".join(diff))
    if u_rc != o_rc:
        problems.append(f"exit code {u_rc}, bpftrace {o_rc}")
    if problems:
        print(f"FAIL: {os.path.basename(script)}")
        for p in problems:
            print(p)
        print(f"--- ubtrace stderr ---\n{u_err}")
        return 1
    print(f"PASS: {os.path.basename(script)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
