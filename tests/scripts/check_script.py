#!/usr/bin/env python3
"""Checks the runbook tools in scripts/.

  check_script.py header   BUILD SCRIPT   the shebang, the file is executable,
                                          and the header comment names the
                                          tool and has Usage:, Example: and
                                          Example output: sections
  check_script.py dryrun   BUILD SCRIPT   `ubtrace --dry-run SCRIPT ARGS` with
                                          the positional arguments of the
                                          header's Example: line (-c, -p and
                                          -o left out), which must give every
                                          $N the script uses
  check_script.py coverage BUILD SCRIPTS_DIR TESTS_DIR
                                          every tool is run by a run_*.test
Exit status 0 when the check passes, 1 with the reason otherwise.
"""
import os
import re
import shlex
import stat
import subprocess
import sys

SHEBANG = "#!/usr/bin/env ubtrace"


def header_lines(text):
    """The lines of the first /* ... */ comment, without the ' * ' prefix."""
    start = text.find("/*")
    end = text.find("*/", start)
    if start < 0 or end < 0:
        return None
    lines = []
    for line in text[start + 2:end].split("\n"):
        line = line.strip()
        if line.startswith("*"):
            line = line[1:]
            if line.startswith(" "):
                line = line[1:]
        lines.append(line)
    return lines


def example_args(lines):
    """The words of the first Example: line, after the tool's name."""
    for line in lines:
        if line.startswith("Example:"):
            words = shlex.split(line[len("Example:"):])
            return words[1:] if words else None
    return None


def check_header(script):
    name = os.path.basename(script)
    text = open(script, encoding="utf-8").read()
    problems = []
    if text.split("\n", 1)[0] != SHEBANG:
        problems.append(f"the first line is not '{SHEBANG}'")
    if not os.stat(script).st_mode & stat.S_IXUSR:
        problems.append("the file is not executable")
    lines = header_lines(text)
    if lines is None:
        return problems + ["no /* ... */ header comment"]
    body = "\n".join(lines)
    if not re.search(r"^\s*" + re.escape(name) + r"\s+\S", body, re.M):
        problems.append(f"the header does not start with '{name}  <what it shows>'")
    for section in ("Usage:", "Example:", "Example output"):
        if not any(l.startswith(section) for l in lines):
            problems.append(f"no '{section}' line in the header")
    words = example_args(lines)
    if words is not None and (not lines or
                              not any(l.startswith("Example:") and
                                      l.split()[1] == name for l in lines)):
        problems.append(f"the Example: line does not run {name}")
    return problems


def dry_run_args(words):
    """Drops the options a dry run does not need (and that would run or
    write something): -c CMD, -p PID, -o FILE."""
    out = []
    skip = False
    for w in words:
        if skip:
            skip = False
            continue
        if w in ("-c", "-p", "-o"):
            skip = True
            continue
        out.append(w)
    return out


def check_dry_run(build, script):
    text = open(script, encoding="utf-8").read()
    lines = header_lines(text) or []
    words = example_args(lines)
    if words is None:
        return ["no Example: line to take the arguments from"]
    args = dry_run_args(words)
    positional = [w for i, w in enumerate(args)
                  if not w.startswith("-") and (i == 0 or args[i - 1] != "-f")]
    # Comments aside, which $N does the program use?
    code = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    code = re.sub(r"//[^\n]*", "", code)
    used = {int(n) for n in re.findall(r"\$(\d+)", code)}
    problems = []
    if used and max(used) > len(positional):
        problems.append(f"the script uses ${max(used)} but the example gives "
                        f"{len(positional)} argument(s): {positional}")
    cmd = [os.path.join(build, "ubtrace"), "--dry-run", script] + args
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    if r.returncode != 0:
        problems.append(f"{shlex.join(cmd)} exited {r.returncode}:\n{r.stderr}")
    elif "ERROR" in r.stderr or "WARNING" in r.stderr:
        problems.append(f"{shlex.join(cmd)} printed:\n{r.stderr}")
    return problems


def check_coverage(scripts_dir, tests_dir):
    run_tests = ""
    for f in sorted(os.listdir(tests_dir)):
        if f.startswith("run_") and f.endswith(".test"):
            run_tests += open(os.path.join(tests_dir, f), encoding="utf-8").read()
    problems = []
    for f in sorted(os.listdir(scripts_dir)):
        if f.endswith(".bt") and f"scripts/{f}" not in run_tests:
            problems.append(f"no run_*.test runs scripts/{f}")
    return problems


def main():
    if len(sys.argv) < 4:
        print(__doc__, file=sys.stderr)
        return 2
    mode, build = sys.argv[1], os.path.abspath(sys.argv[2])
    if mode == "header":
        problems = check_header(sys.argv[3])
    elif mode == "dryrun":
        problems = check_dry_run(build, sys.argv[3])
    elif mode == "coverage":
        problems = check_coverage(sys.argv[3], sys.argv[4])
    else:
        print(f"unknown mode {mode}", file=sys.stderr)
        return 2
    for p in problems:
        print(f"FAIL: {p}")
    if not problems:
        print("PASS")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
