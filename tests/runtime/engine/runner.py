#!/usr/bin/env python3
"""Runs ubtrace's runtime tests: a small DSL in the spirit of bpftrace's.

A test file holds tests separated by blank lines. Each test is a list of
directives, one per line:

  NAME <name>               the test's name (starts a test)
  PROG <program>            run `ubtrace -e <program>` (rest of the line;
                            further PROG lines add lines to the program)
  RUN <shell command>       or run this command; {{UBTRACE}} is the binary,
                            {{TESTPROGS}} the built test programs' folder,
                            {{FAULTPROGS}} the fault suite's hostile targets,
                            {{SOURCE}} the source tree's root
  ARGS <words>              positional parameters after the program
  FLAGS <words>             extra ubtrace flags before -e ({{...}} as RUN's)
  EXPECT <text>             a line of the output equals <text>
  EXPECT_REGEX <regex>      a line of the output matches <regex> (fullmatch)
  EXPECT_NONE <text>        no line equals <text>
  EXPECT_NONE_REGEX <regex> no line matches <regex> (fullmatch)
  EXPECT_JSON <file>        the output's JSON lines equal those of <file>
                            (relative to the test file), compared as JSON
  EXPECT_EXACT              the next lines up to `END_EXACT` are the whole
                            stdout, byte for byte
  EXIT_CODE <n>             the exit code must be n (default: 0 for PROG)
  TIMEOUT <seconds>         kill after this long (default 10) and use what
                            was printed; the test fails if it had to be
                            killed unless KILL_OK is given
  KILL_OK                   being killed by the timeout is expected (for
                            scripts that run until interrupted: the runner
                            sends SIGINT first, then SIGKILL)
  REQUIRES <shell command>  skip the test unless the command succeeds
  ENV <NAME=VALUE>          environment for the run
  STDIN <text>              feed this to standard input
  STDERR                    match EXPECT* against stderr instead of stdout
  MERGE_STDERR              match EXPECT* against stdout and stderr

Lines starting with # are comments. A test known to fail because of a bug
elsewhere carries `REQUIRES false  # why`: it reports as skipped with the
reason; --run-disabled runs those too (to recheck them). --filter REGEX runs
the tests whose name matches. Exit status: 0 all passed (or skipped, with at
least one run), 77 all skipped, 1 any failure.

ctest runs one case per test (tests/CMakeLists.txt, ubt_dsl_tests):
`runner.py --list FILE` prints each case's slug (its name in lower case,
runs of other characters than letters and digits as one `_`, made unique
in the file with `_2`, `_3`..., cut to 80 characters), one a line; `--case SLUG` runs only that
case (an error if the file has none of that slug: re-run cmake).
"""
import json
import os
import re
import shlex
import signal
import subprocess
import sys
import time


class Test:
    def __init__(self, name, path, line):
        self.name = name
        self.path = path
        self.line = line
        self.prog = None
        self.run = None
        self.args = []
        self.flags = []
        self.expects = []  # (kind, value)
        self.exact = None
        self.exit_code = None
        self.timeout = 10.0
        self.kill_ok = False
        self.requires = []
        self.env = {}
        self.stdin = None
        self.stream = "stdout"


def parse(path):
    tests = []
    cur = None
    lines = open(path, encoding="utf-8").read().split("\n")
    i = 0
    while i < len(lines):
        raw = lines[i]
        i += 1
        line = raw.rstrip("\n")
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        key, _, rest = line.partition(" ")
        if key == "NAME":
            cur = Test(rest.strip(), path, i)
            tests.append(cur)
            continue
        if cur is None:
            raise SystemExit(f"{path}:{i}: a directive before NAME")
        if key == "PROG":
            # Several PROG lines make one program of several lines.
            cur.prog = rest if cur.prog is None else cur.prog + "\n" + rest
        elif key == "RUN":
            cur.run = rest
        elif key == "ARGS":
            cur.args = shlex.split(rest)
        elif key == "FLAGS":
            cur.flags = shlex.split(rest)
        elif key in ("EXPECT", "EXPECT_REGEX", "EXPECT_NONE", "EXPECT_NONE_REGEX",
                     "EXPECT_JSON"):
            cur.expects.append((key, rest))
        elif key == "EXPECT_EXACT":
            body = []
            while i < len(lines) and lines[i] != "END_EXACT":
                body.append(lines[i])
                i += 1
            i += 1
            cur.exact = "\n".join(body) + ("\n" if body else "")
        elif key == "EXIT_CODE":
            cur.exit_code = int(rest)
        elif key == "TIMEOUT":
            cur.timeout = float(rest)
        elif key == "KILL_OK":
            cur.kill_ok = True
        elif key == "REQUIRES":
            cur.requires.append(rest)
        elif key == "ENV":
            k, _, v = rest.partition("=")
            cur.env[k] = v
        elif key == "STDIN":
            cur.stdin = rest.encode().decode("unicode_escape")
        elif key == "STDERR":
            cur.stream = "stderr"
        elif key == "MERGE_STDERR":
            cur.stream = "both"
        else:
            raise SystemExit(f"{path}:{i}: unknown directive {key}")
    return tests


SLUG_MAX = 80


def slugs(tests):
    """The case slugs of a file's tests, in order (see the docstring)."""
    out = []
    seen = set()
    for t in tests:
        base = re.sub(r"[^a-z0-9]+", "_", t.name.lower()).strip("_") or "case"
        if len(base) > SLUG_MAX:  # at a word's end where there is one
            cut = base.rfind("_", 0, SLUG_MAX + 1)
            base = base[:cut if cut > SLUG_MAX // 2 else SLUG_MAX]
        slug, n = base, 1
        while slug in seen:
            n += 1
            slug = f"{base}_{n}"
        seen.add(slug)
        out.append(slug)
    return out


SOURCE_DIR = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.dirname(os.path.abspath(__file__)))))


def substitute(text, ctx):
    return (text.replace("{{UBTRACE}}", ctx["ubtrace"])
                .replace("{{TESTPROGS}}", ctx["testprogs"])
                .replace("{{FAULTPROGS}}", ctx["build"] + "/tests/faults/progs")
                .replace("{{BUILD}}", ctx["build"])
                .replace("{{SOURCE}}", SOURCE_DIR))


def disabled_reason(req):
    """`REQUIRES false  # why` marks a test known to fail: the reason."""
    cmd, _, why = req.partition("#")
    return why.strip() if cmd.strip() == "false" else None


def run_one(t, ctx):
    for req in t.requires:
        if ctx["run_disabled"] and disabled_reason(req) is not None:
            continue
        r = subprocess.run(substitute(req, ctx), shell=True,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        if r.returncode != 0:
            return "SKIP", f"requirement failed: {req}"
    env = dict(os.environ)
    env.update({k: substitute(v, ctx) for k, v in t.env.items()})
    if t.prog is not None:
        cmd = ([ctx["ubtrace"]] + [substitute(f, ctx) for f in t.flags] +
               ["-e", t.prog] + t.args)
        shell = False
    elif t.run is not None:
        cmd = substitute(t.run, ctx)
        shell = True
    else:
        return "FAIL", "neither PROG nor RUN"
    proc = subprocess.Popen(cmd, shell=shell, env=env,
                            stdin=subprocess.PIPE if t.stdin is not None else subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            start_new_session=True)
    killed = False
    try:
        out, err = proc.communicate(input=t.stdin.encode() if t.stdin else None,
                                    timeout=t.timeout)
    except subprocess.TimeoutExpired:
        killed = True
        os.killpg(proc.pid, signal.SIGINT)
        try:
            out, err = proc.communicate(timeout=5)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            out, err = proc.communicate()
    out = out.decode(errors="replace")
    err = err.decode(errors="replace")
    detail = f"--- stdout ---\n{out}--- stderr ---\n{err}"
    if killed and not t.kill_ok:
        return "FAIL", f"timed out after {t.timeout}s\n{detail}"
    want_code = t.exit_code
    if want_code is None and t.prog is not None and not killed:
        want_code = 0
    if want_code is not None and proc.returncode != want_code:
        return "FAIL", f"exit code {proc.returncode}, expected {want_code}\n{detail}"
    text = {"stdout": out, "stderr": err, "both": out + err}[t.stream]
    lines = text.split("\n")
    for kind, value in t.expects:
        value = substitute(value, ctx)
        if kind == "EXPECT" and value not in lines:
            return "FAIL", f"no line equals: {value!r}\n{detail}"
        if kind == "EXPECT_NONE" and value in lines:
            return "FAIL", f"a line equals: {value!r}\n{detail}"
        if kind == "EXPECT_REGEX":
            rx = re.compile(value)
            if not any(rx.fullmatch(l) for l in lines):
                return "FAIL", f"no line matches: {value!r}\n{detail}"
        if kind == "EXPECT_NONE_REGEX":
            rx = re.compile(value)
            if any(rx.fullmatch(l) for l in lines):
                return "FAIL", f"a line matches: {value!r}\n{detail}"
        if kind == "EXPECT_JSON":
            want_path = os.path.join(os.path.dirname(t.path), value)
            want = [json.loads(l) for l in open(want_path) if l.strip()]
            try:
                got = [json.loads(l) for l in text.split("\n") if l.strip()]
            except json.JSONDecodeError as e:
                return "FAIL", f"output is not JSON lines: {e}\n{detail}"
            if got != want:
                return "FAIL", f"JSON differs from {value}\n{detail}"
    exact = None if t.exact is None else substitute(t.exact, ctx)
    if exact is not None and text != exact:
        return "FAIL", f"output differs:\n--- expected ---\n{exact}{detail}"
    return "PASS", ""


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--list":
        for slug in slugs(parse(sys.argv[2])):
            print(slug)
        return 0
    if len(sys.argv) < 3:
        print("usage: runner.py BUILD_DIR TEST_FILE... [--filter REGEX] [--case SLUG]"
              " [--run-disabled]\n       runner.py --list TEST_FILE", file=sys.stderr)
        return 2
    build = os.path.abspath(sys.argv[1])
    files = []
    flt = None
    case = None
    run_disabled = False
    args = sys.argv[2:]
    while args:
        a = args.pop(0)
        if a == "--filter":
            flt = re.compile(args.pop(0))
        elif a == "--case":
            case = args.pop(0)
        elif a == "--run-disabled":
            run_disabled = True
        else:
            files.append(a)
    ctx = {"ubtrace": os.path.join(build, "ubtrace"),
           "testprogs": os.path.join(build, "tests", "testprogs"),
           "build": build, "run_disabled": run_disabled}
    counts = {"PASS": 0, "FAIL": 0, "SKIP": 0}
    for f in files:
        tests = parse(f)
        if case is not None:
            chosen = [t for t, slug in zip(tests, slugs(tests)) if slug == case]
            if not chosen:
                print(f"{f}: no case {case!r} (its cases changed since cmake ran:"
                      " re-run cmake)")
                return 1
            tests = chosen
        for t in tests:
            if flt and not flt.search(t.name):
                continue
            start = time.time()
            status, why = run_one(t, ctx)
            counts[status] += 1
            took = time.time() - start
            print(f"[{status}] {os.path.basename(f)}: {t.name} ({took:.2f}s)")
            if status != "PASS":
                print("   " + why.replace("\n", "\n   "))
    print(f"{counts['PASS']} passed, {counts['FAIL']} failed, {counts['SKIP']} skipped")
    if counts["FAIL"]:
        return 1
    if counts["PASS"] == 0 and counts["SKIP"]:
        return 77
    return 0


if __name__ == "__main__":
    sys.exit(main())
