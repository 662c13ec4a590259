#!/usr/bin/env python3
"""habits.werror: product code builds with warnings as errors, tests do not,
and a switch over an enum class that misses a case fails to compile.

From the build's compile_commands.json:
  - every translation unit of the product (SOURCE_DIR's ast backends codegen
    parser runtime stdlib, and the generated parser in BUILD_DIR/gen) is
    compiled with each of the FLAGS;
  - no translation unit of tests/ or bench/ is compiled with -Werror;
  - the command line of one product file, run on a snippet whose switch over
    an enum class misses an enumerator, fails with -Wswitch; the same snippet
    with the case added compiles.

usage: werror_check.py SOURCE_DIR BUILD_DIR FLAG...
"""
import json
import os
import shlex
import subprocess
import sys
import tempfile

PRODUCT = ("ast", "backends", "codegen", "parser", "runtime", "stdlib")
NOT_PRODUCT = ("tests", "bench")

SNIPPET = """
enum class Kind { A, B, C };
int pick(Kind k) {
  switch (k) {
  case Kind::A:
    return 1;
  case Kind::B:
    return 2;
  %s
  }
  return 0;
}
"""


def command(entry):
    if "arguments" in entry:
        return list(entry["arguments"])
    return shlex.split(entry["command"])


def syntax_only(args, file, source):
    """The product file's compile command, checking `source` instead."""
    out = []
    skip = False
    for a in args:
        if skip:
            skip = False
            continue
        if a in ("-o", "-MF", "-MT", "-MQ"):
            skip = True
            continue
        if a in ("-c", "-MD", "-MMD", file):
            continue
        out.append(a)
    if out and os.path.basename(out[0]) == "ccache":
        out = out[1:]
    return out + ["-fsyntax-only", "-x", "c++", source]


def main():
    if len(sys.argv) < 4:
        print("usage: werror_check.py SOURCE_DIR BUILD_DIR FLAG...", file=sys.stderr)
        return 2
    src = os.path.realpath(sys.argv[1])
    build = os.path.realpath(sys.argv[2])
    flags = sys.argv[3:]
    db = os.path.join(build, "compile_commands.json")
    entries = json.load(open(db))
    product, missing, test_werror = [], [], []
    for e in entries:
        path = os.path.realpath(os.path.join(e["directory"], e["file"]))
        args = command(e)
        if path.startswith(os.path.join(build, "gen") + os.sep):
            top = "parser" if "/gen/parser/" in path else None
        elif path.startswith(src + os.sep):
            top = os.path.relpath(path, src).split(os.sep)[0]
        else:
            top = None
        rel = os.path.relpath(path, src)
        if top in PRODUCT:
            product.append((e, args))
            lacking = [f for f in flags if f not in args]
            if lacking:
                missing.append(f"{rel}: without {' '.join(lacking)}")
        elif top in NOT_PRODUCT and "-Werror" in args:
            test_werror.append(rel)
    ok = True
    if not product:
        print(f"FAIL: no product file in {db}")
        return 1
    if missing:
        ok = False
        print(f"FAIL: {len(missing)} of {len(product)} product files are compiled"
              " without the product warning flags:")
        for m in missing:
            print(f"  {m}")
    if test_werror:
        ok = False
        print(f"FAIL: {len(test_werror)} test or benchmark files are compiled with -Werror:")
        for t in test_werror:
            print(f"  {t}")

    # A C++ product file's own command line, on the snippet.
    cxx = [(e, a) for e, a in product if e["file"].endswith(".cpp")]
    entry, args = cxx[0]
    with tempfile.TemporaryDirectory() as tmp:
        results = {}
        for name, case in (("missing", ""), ("exhaustive", "case Kind::C:\n    return 3;")):
            path = os.path.join(tmp, f"switch_{name}.cpp")
            with open(path, "w") as f:
                f.write(SNIPPET % case)
            r = subprocess.run(syntax_only(args, entry["file"], path), cwd=entry["directory"],
                               capture_output=True, text=True)
            results[name] = (r.returncode, r.stdout + r.stderr)
    rc, out = results["missing"]
    if rc == 0 or "-Wswitch" not in out:
        ok = False
        print(f"FAIL: with {entry['file']}'s flags, a switch missing an enumerator"
              f" {'compiles' if rc == 0 else 'fails without -Wswitch'}:\n{out}")
    rc, out = results["exhaustive"]
    if rc != 0:
        ok = False
        print(f"FAIL: with {entry['file']}'s flags, the exhaustive switch does not"
              f" compile:\n{out}")
    if ok:
        print(f"PASS: {len(product)} product files built with {' '.join(flags)};"
              f" no test file with -Werror; a switch missing an enumerator fails"
              f" ({os.path.relpath(entry['file'], src)}'s flags)")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
