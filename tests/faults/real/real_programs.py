#!/usr/bin/env python3
"""Differential stress on real Debian programs: each workload runs untraced
and then under libc-wide probes, and must write byte-identical output and
end the same way; the trace must have counted the hits.

  real_programs.py BUILD_DIR [--filter REGEX]

Exit status: 0 all agreed, 1 any difference, 77 nothing could run (a
program missing)."""
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))

# Probes spanning every exported function of libc, entry and return.
SCRIPTS = {
    "uprobe": "uprobe:libc:* { @hits = count(); }",
    "uretprobe": "uretprobe:libc:* { @hits = count(); }",
    "both": "uprobe:libc:* { @hits = count(); } uretprobe:libc:* { @ret[probe] = count(); }",
}


def workloads():
    python = shutil.which("python3")
    sqlite = shutil.which("sqlite3")
    if python:
        yield "python3", lambda out: [python, os.path.join(HERE, "workload.py"), out]
    if sqlite:
        yield "sqlite3", lambda out: [sqlite, ":memory:", ".output " + out,
                                      ".read " + os.path.join(HERE, "workload.sql")]


def run_plain(argv):
    p = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, timeout=300)
    return p.returncode


def run_traced(ubtrace, script, argv):
    cmd = [ubtrace, "-q", "-e", script, "-c", " ".join(shlex_quote(a) for a in argv)]
    p = subprocess.run(cmd, stdin=subprocess.DEVNULL, capture_output=True, timeout=600)
    return p.returncode, p.stdout.decode(errors="replace"), p.stderr.decode(errors="replace")


def shlex_quote(word):
    import shlex
    return shlex.quote(word)


def main():
    build = sys.argv[1]
    flt = None
    if len(sys.argv) > 3 and sys.argv[2] == "--filter":
        flt = re.compile(sys.argv[3])
    ubtrace = os.path.join(build, "ubtrace")
    ran = 0
    failures = []
    tmp = tempfile.mkdtemp(prefix="ubt-real-")
    try:
        for name, make_argv in workloads():
            plain_out = os.path.join(tmp, name + ".plain")
            plain_rc = run_plain(make_argv(plain_out))
            expected = open(plain_out, "rb").read()
            for sname, script in SCRIPTS.items():
                case = f"{name} under {sname}"
                if flt and not flt.search(case):
                    continue
                ran += 1
                traced_out = os.path.join(tmp, f"{name}.{sname}")
                rc, stdout, stderr = run_traced(ubtrace, script, make_argv(traced_out))
                problems = []
                if rc != 0:
                    problems.append(f"ubtrace exited {rc}")
                if not os.path.exists(traced_out):
                    problems.append("the program wrote no output")
                elif open(traced_out, "rb").read() != expected:
                    diff = subprocess.run(["diff", plain_out, traced_out],
                                          capture_output=True, text=True).stdout
                    problems.append("output differs:\n" + diff[:2000])
                m = re.search(r"^@hits: (\d+)$", stdout, re.M)
                if not m or int(m.group(1)) < 1000:
                    problems.append("the trace did not count the hits (@hits missing or < 1000)")
                if plain_rc != 0:
                    problems.append(f"the untraced program itself exited {plain_rc}")
                if problems:
                    failures.append(case)
                    print(f"FAIL {case}:\n  " + "\n  ".join(problems))
                    print("  ubtrace stderr (tail):\n    " +
                          "\n    ".join(stderr.strip().splitlines()[-15:]))
                else:
                    print(f"ok   {case}: identical output, {m.group(1)} hits")
                sys.stdout.flush()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if ran == 0:
        print("SKIP: neither python3 nor sqlite3 is installed")
        return 77
    print(f"{ran - len(failures)} of {ran} agreed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
