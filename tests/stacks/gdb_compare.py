#!/usr/bin/env python3
"""ubtrace's user stacks against gdb's, for the same stops in real programs.

For each program (Debian's ls, python3, sqlite3 in C, ninja in C++, and a
Rust program built here without frame pointers), gdb stops at the first
instruction of libc's malloc (`break *malloc`) every time it is called and
takes a backtrace; ubtrace runs the same command with
`uprobe:libc:malloc { @[ustack(build_id)] = count(); }`. Both stacks are
reduced to (file, file offset) per frame, so ASLR and symbol aliases do
not matter: gdb's addresses through its process mappings, ubtrace's
through each module's build id. The programs are deterministic enough
that the distinct stacks of one run are those of the other. gdb reads no
separate debug files here: with them it also shows frames for tail calls
(from DWARF call-site information), which no walk of the stack can see.

Reports, per program, the share of gdb's distinct stacks (those through
the program's own code: the trace's hooks go in before main, not before
the libraries' constructors) that ubtrace printed frame for frame, to the
last frame gdb found.
Exit status 1 when a share is below --min (default 0.95).

    tests/stacks/gdb_compare.py --ubtrace build/ubtrace [--min 0.95]
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

PROGRAMS = [
    ("ls", ["/usr/bin/ls", "-l", "/usr"]),
    ("python3", ["/usr/bin/python3.11", "-S", "-c", "print(sum(range(100)))"]),
    ("sqlite3", ["/usr/bin/sqlite3", ":memory:",
                 "create table t(a); insert into t values (1); select * from t;"]),
    # C++: Debian's ninja, a dry run of a small build (build.ninja is
    # written into the run's temporary directory, see main).
    ("ninja", ["/usr/bin/ninja", "-C", "{tmp}", "-n"]),
]

NINJA_FILE = "rule cc\n  command = cc -c $in -o $out\n" + "".join(
    f"build o{i}.o: cc s{i}.c\n" for i in range(30)) + "default " + " ".join(
    f"o{i}.o" for i in range(30)) + "\n"


# Rust: built here (when rustc is there) -O without frame pointers; its
# allocations go through std's System allocator to libc's malloc.
RUST_SOURCE = r'''
use std::collections::BTreeMap;
#[inline(never)]
fn words(text: &str) -> BTreeMap<String, usize> {
    let mut m = BTreeMap::new();
    for w in text.split_whitespace() {
        *m.entry(w.to_lowercase()).or_insert(0) += 1;
    }
    m
}
#[inline(never)]
fn report(m: &BTreeMap<String, usize>) -> String {
    m.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join(",")
}
fn main() {
    let text = std::hint::black_box("the quick brown fox jumps over the lazy dog The End");
    println!("{}", report(&words(text)));
}
'''


def rust_program(tmp):
    rustc = shutil.which("rustc") or os.path.expanduser("~/.cargo/bin/rustc")
    if not os.path.exists(rustc):
        return None
    src = os.path.join(tmp, "wordcount.rs")
    with open(src, "w") as f:
        f.write(RUST_SOURCE)
    out = os.path.join(tmp, "wordcount")
    r = subprocess.run([rustc, "-O", "-C", "force-frame-pointers=no", "-o",
                        out, src], capture_output=True, text=True)
    return out if r.returncode == 0 else None


def build_id(path):
    out = subprocess.run(["readelf", "-n", path], capture_output=True,
                         text=True).stdout
    m = re.search(r"Build ID: ([0-9a-f]+)", out)
    return m.group(1) if m else None


def gdb_stacks(argv, stops):
    """Distinct stacks as tuples of (path, offset), and the mappings."""
    script = tempfile.NamedTemporaryFile("w", suffix=".gdb", delete=False)
    # Without separate debug files gdb unwinds with .eh_frame as ubtrace
    # does; with them it adds frames for tail calls from DWARF call-site
    # information (a jmp leaves nothing on the stack to walk).
    script.write("set debug-file-directory /nonexistent\n"
                 "set pagination off\nset confirm off\n"
                 "set print frame-arguments none\nset print address on\n"
                 "set startup-with-shell off\n"
                 # Whole stacks, as ubtrace prints them, for programs with
                 # a symbol for main too.
                 "set backtrace past-main on\n"
                 # malloc's address once libc is loaded: programs that
                 # do not name it themselves (Rust's) have no symbol for
                 # it before.
                 "catch load libc.so\nrun\ndelete 1\n"
                 "break *malloc\ncontinue\ninfo proc mappings\n")
    for _ in range(stops):
        script.write("bt\ncontinue\n")
    script.close()
    try:
        out = subprocess.run(["gdb", "-nx", "-batch", "-x", script.name,
                              "--args"] + argv, capture_output=True, text=True,
                             timeout=600, env=dict(os.environ, PYTHONHASHSEED="0")).stdout
    finally:
        os.unlink(script.name)
    maps = []
    for line in out.splitlines():
        m = re.match(r"\s+0x([0-9a-f]+)\s+0x([0-9a-f]+)\s+0x[0-9a-f]+\s+"
                     r"0x([0-9a-f]+)\s+(?:\S+\s+)?(/\S+)$", line)
        if m:
            maps.append((int(m.group(1), 16), int(m.group(2), 16),
                         int(m.group(3), 16), m.group(4)))

    def locate(addr):
        for lo, hi, off, path in maps:
            if lo <= addr < hi:
                return (path, addr - lo + off)
        return ("?", addr)

    stacks, current = set(), []
    for line in out.splitlines():
        m = re.match(r"#(\d+)\s+(?:0x([0-9a-f]+) in )?(\S+)", line)
        if not m:
            continue
        if m.group(1) == "0":
            if current:
                stacks.add(tuple(current))
            current = []
            pc = None  # frame 0 is malloc's entry: no address printed
            current.append(("malloc-entry", 0))
            continue
        if not m.group(2):
            continue  # an inlined frame shares its caller's pc
        current.append(locate(int(m.group(2), 16)))
    if current:
        stacks.add(tuple(current))
    # gdb lists inlined frames with the pc of the frame that holds them:
    # keep one entry per pc, as ubtrace's build_id frames are.
    deduped = set()
    for s in stacks:
        out_s = []
        for f in s:
            if not out_s or out_s[-1] != f:
                out_s.append(f)
        deduped.add(tuple(out_s))
    return deduped


def ubtrace_stacks(ubtrace, argv):
    prog = "uprobe:libc:malloc { @[ustack(build_id)] = count(); }"
    out = subprocess.run([ubtrace, "-q", "-e", prog, "-c",
                          " ".join(shlex_quote(a) for a in argv)],
                         capture_output=True, text=True, timeout=600,
                         env=dict(os.environ, PYTHONHASHSEED="0")).stdout
    stacks, current, inside = set(), [], False
    for line in out.splitlines():
        if line.startswith("@["):
            inside, current = True, []
            continue
        if inside and line.startswith("]:"):
            inside = False
            if current:
                current[0] = ("malloc-entry", 0)
                stacks.add(tuple(current))
            continue
        if inside:
            m = re.match(r"\s*([0-9a-f]+) 0x([0-9a-f]+)$", line.strip())
            if m:
                current.append((m.group(1), int(m.group(2), 16)))
            elif line.strip():
                current.append(("?", line.strip()))
    return stacks


def common_prefix(a, b):
    n = 0
    while n < len(a) and n < len(b) and a[n] == b[n]:
        n += 1
    return n


def shlex_quote(s):
    import shlex
    return shlex.quote(s)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ubtrace", required=True)
    ap.add_argument("--min", type=float, default=0.95)
    ap.add_argument("--stops", type=int, default=400)
    ap.add_argument("--only", help="comma-separated program names")
    args = ap.parse_args()
    if not shutil.which("gdb"):
        print("SKIP: gdb is not installed")
        return 77
    ok = True
    tmp = tempfile.mkdtemp()
    with open(os.path.join(tmp, "build.ninja"), "w") as f:
        f.write(NINJA_FILE)
    for i in range(30):
        open(os.path.join(tmp, f"s{i}.c"), "w").close()
    programs = [(n, [a.replace("{tmp}", tmp) for a in argv])
                for n, argv in PROGRAMS]
    rust = rust_program(tmp)
    if rust:
        programs.append(("rust", [rust]))
    else:
        print("rust: no rustc, skipped")
    if args.only:
        programs = [p for p in programs if p[0] in args.only.split(",")]
    for name, argv in programs:
        if not os.path.exists(argv[0]):
            print(f"{name}: not installed, skipped")
            continue
        g = gdb_stacks(argv, args.stops)
        ids = {}
        for stack in g:
            for path, _ in stack:
                if path.startswith("/") and path not in ids:
                    ids[path] = build_id(path)
        # gdb's frames as (build id, offset)
        g_ids = set()
        for stack in g:
            g_ids.add(tuple((ids.get(p) or p, off) if p.startswith("/") else (p, off)
                            for p, off in stack))
        # Only stops the trace can see: ubtrace's hooks go in before main
        # runs, not before the libraries' constructors (libselinux
        # allocates in its own, under ld.so): a stack through the program's
        # own code.
        own = build_id(os.path.realpath(argv[0]))
        g_ids = {s for s in g_ids if any(p == own for p, _ in s)}
        u = ubtrace_stacks(args.ubtrace, argv)
        if not g_ids or not u:
            print(f"{name}: no stacks (gdb {len(g_ids)}, ubtrace {len(u)})")
            ok = False
            continue
        found = sum(1 for s in g_ids if s in u)
        share = found / len(g_ids)
        depth_g = sum(len(s) for s in g_ids) / len(g_ids)
        print(f"{name}: {found} of {len(g_ids)} distinct gdb stacks equal "
              f"ubtrace's frame for frame ({share:.1%}); mean depth "
              f"{depth_g:.1f}; ubtrace printed {len(u)} distinct stacks")
        if share < args.min:
            ok = False
            for s in [s for s in g_ids if s not in u][:5]:
                best = max(u, key=lambda t: common_prefix(s, t))
                k = common_prefix(s, best)
                print(f"  gdb only ({len(s)} frames), ubtrace's closest "
                      f"agrees on {k}: gdb {s[k:k + 2]} ubtrace {best[k:k + 2]}")
                if os.environ.get("UBT_GDB_COMPARE_VERBOSE"):
                    print("    gdb:    ", [hex(o) for _, o in s])
                    print("    ubtrace:", [hex(o) if isinstance(o, int) else o
                                          for _, o in best])
    shutil.rmtree(tmp, ignore_errors=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
