#!/usr/bin/env python3
"""habits.agent_deps: the libraries loaded into traced programs (the agent,
libubtrace_agent.so, and what LD_PRELOAD names, libubtrace_preload.so) need
no LLVM, no libbpf and, in a sanitizer build too, no sanitizer runtime.

Checked with readelf, for each library:
  - NEEDED entries: none names LLVM, clang or libbpf;
  - undefined dynamic symbols: none is LLVM's (a name with "llvm" in it: the
    C++ namespace, the C API's LLVM*) or libbpf's (bpf_*, btf_*, libbpf_*,
    {ring,perf,user_ring}_buffer__*);
  - the static symbol table (when the library has one): no such symbol
    either, so that LLVM or libbpf linked in statically and hidden
    (--exclude-libs) is caught too;
  - no undefined symbol of a sanitizer runtime (__asan_*, __ubsan_*,
    __sanitizer_*, __sancov_*, ...): in a -DUBTRACE_SANITIZE or
    -DUBTRACE_FUZZ build the agent must still be built from the
    uninstrumented copies of its libraries (cmake/Sanitizers.cmake).
The agent's own ubt_bpf_* helpers do not match: only names that start with
libbpf's prefixes do.

usage: agent_deps.py [--readelf PROGRAM] LIBRARY...
Exit: 0 none found, 1 some found (each is named), 2 bad usage or readelf
failed.
"""
import re
import subprocess
import sys

NEEDED_BAD = re.compile(r"llvm|clang|bpf", re.IGNORECASE)
SYMBOL_BAD = [
    ("LLVM", re.compile(r"llvm", re.IGNORECASE)),
    ("libbpf", re.compile(r"^(lib)?(bpf|btf)_|^(ring|perf|user_ring)_buffer__")),
]
# Only undefined: the agent defines none of these itself.
SANITIZER = re.compile(r"^__(asan|ubsan|lsan|msan|tsan|sanitizer|sancov)_")


def readelf(program, *args):
    r = subprocess.run([program, "-W", *args], capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit(f"{program} {' '.join(args)}: {r.stderr.strip()}")
    return r.stdout


def needed(program, lib):
    return re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]",
                      readelf(program, "-d", lib))


def symbols(program, lib, table_flag):
    """(name, section index) of each symbol of one table, but the names of
    source files and sections."""
    out = []
    for line in readelf(program, table_flag, lib).splitlines():
        # Num: Value Size Type Bind Vis Ndx Name
        f = line.split()
        if (len(f) >= 8 and f[0].endswith(":") and f[0][:-1].isdigit()
                and f[3] not in ("FILE", "SECTION")):
            out.append((f[7].split("@")[0], f[6]))
    return out


def check(program, lib):
    problems = []
    for n in needed(program, lib):
        if NEEDED_BAD.search(n):
            problems.append(f"NEEDED {n}")
    for name, ndx in symbols(program, lib, "--dyn-syms"):
        if ndx != "UND":
            continue
        for what, rx in SYMBOL_BAD:
            if rx.search(name):
                problems.append(f"undefined dynamic symbol {name} ({what})")
        if SANITIZER.search(name):
            problems.append(f"undefined dynamic symbol {name} (sanitizer runtime)")
    # The full symbol table (absent once stripped; then only the above).
    for name, ndx in symbols(program, lib, "--syms"):
        if ndx == "UND":
            continue
        for what, rx in SYMBOL_BAD:
            if rx.search(name):
                problems.append(f"symbol {name} defined in it ({what}, linked in)")
    return sorted(set(problems))


def main():
    args = sys.argv[1:]
    program = "readelf"
    if args[:1] == ["--readelf"]:
        program = args[1]
        args = args[2:]
    if not args:
        print("usage: agent_deps.py [--readelf PROGRAM] LIBRARY...", file=sys.stderr)
        return 2
    failed = False
    for lib in args:
        problems = check(program, lib)
        if problems:
            failed = True
            print(f"FAIL: {lib} needs LLVM, libbpf or a sanitizer runtime "
                  f"({len(problems)}):")
            for p in problems[:40]:
                print(f"  {p}")
            if len(problems) > 40:
                print(f"  ... and {len(problems) - 40} more")
        else:
            print(f"PASS: {lib}: NEEDED "
                  f"{', '.join(needed(program, lib))}; no LLVM, libbpf or "
                  f"sanitizer symbol")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
