#!/usr/bin/env python3
"""go tool pprof reading ubtrace's -f pprof profiles.

tests/testprogs/hot_cold calls work() from hot() 900 times and from cold()
100 times (1000 rounds). ubtrace traces it with stack-keyed maps written as
a pprof profile, and Debian's `go tool pprof` reads the file:

  * -top: work is the hottest function (all 1000 calls, flat), and among
    its callers hot has 90% and cold 10%;
  * -traces: every stack with its count equals what -f folded writes for
    the same script on the same program;
  * -raw: the program's mapping carries its ELF build id and says it has
    functions, files and lines; work's location names hot_cold.c;
  * -tagfocus: the label a `// ubtrace:metric` comment names filters
    samples;
  * sum(arg0) is its own sample type;
  * a program no one here wrote (Debian's sqlite3, stripped: frames in
    it have no symbols) traced with a one-liner: -traces again equals
    -f folded, unsymbolised frames named by their file in both;
  * a CPU profile made with a profile probe (tests/testprogs/spinners: two
    threads and then main burn 300 ms each): -top puts spin_worker first
    with about two thirds of the samples and spin_main next, and the
    samples add up to 499 Hz over the 0.9 s of CPU (within 25%).

Exit status 77 (skip) without go.

    tests/metrics/pprof_check.py --ubtrace build/ubtrace \\
        --testprogs build/tests/testprogs
"""
import argparse
import collections
import os
import re
import shutil
import subprocess
import sys
import tempfile

SCRIPT = """// ubtrace:metric @by_comm labels(process, stack)
uprobe:$1:work { @calls[ustack] = count(); @arg_sum[ustack] = sum(arg0);
                 @by_comm[comm, ustack] = count(); }"""


def run(cmd, **kw):
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True, timeout=120, **kw)
    if r.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)}: rc {r.returncode}\n{r.stderr}")
    return r.stdout


def pprof(go, profile, *flags):
    # pprof keeps nothing of its own; HOME only has to be writable.
    env = dict(os.environ, HOME=os.path.dirname(profile),
               PPROF_TMPDIR=os.path.dirname(profile))
    return run([go, "tool", "pprof", *flags, profile], env=env)


def top_rows(text):
    """-top's rows: name -> (flat, cum)."""
    rows = {}
    for line in text.splitlines():
        m = re.match(r"\s*(\d+)\s+[\d.]+%\s+[\d.]+%\s+(\d+)\s+[\d.]+%\s+(.+)$",
                     line)
        if m:
            rows[m.group(3).strip()] = (int(m.group(1)), int(m.group(2)))
    return rows


def traces_as_folded(text):
    """-traces' stacks (leaf first) as folded lines (root first)."""
    out = collections.Counter()
    for block in text.split("-----------+")[1:]:
        lines = [l for l in block.splitlines()[1:] if l.strip()]
        frames, value = [], None
        for l in lines:
            if re.match(r"\s+\S+:\s", l) and value is None:
                continue  # a label line
            m = re.match(r"\s*(\d+)\s+(.+)$", l)
            if m and value is None:
                value = int(m.group(1))
                frames.append(m.group(2).strip())
            else:
                frames.append(l.strip())
        if value:
            frames = [f.removesuffix(" (inline)") for f in frames]
            out[";".join(reversed(frames))] += value
    return out


def read_folded(path):
    """A -f folded file: stack -> count."""
    out = collections.Counter()
    with open(path) as f:
        for line in f:
            stack, _, n = line.rstrip("\n").rpartition(" ")
            out[stack] += int(n)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ubtrace", required=True)
    ap.add_argument("--testprogs", required=True)
    args = ap.parse_args()
    go = shutil.which("go")
    if not go:
        print("SKIP: go (Debian's golang-go) is not installed")
        return 77
    prog = os.path.join(args.testprogs, "hot_cold")
    tmp = tempfile.mkdtemp()
    ok = True

    def check(what, got, want):
        nonlocal ok
        good = want(got) if callable(want) else got == want
        print(f"{'ok' if good else 'MISMATCH'}: {what}: {got}")
        ok &= good

    try:
        profile = os.path.join(tmp, "hot_cold.pb.gz")
        run([args.ubtrace, "-q", "-f", "pprof", "-o", profile, "-e", SCRIPT,
             "-c", f"{prog} 1000", prog])
        with open(profile, "rb") as f:
            check("the file is gzip", f.read(2), b"\x1f\x8b")

        rows = top_rows(pprof(go, profile, "-top", "-sample_index=calls"))
        check("work: flat and cum of all 1000 calls", rows.get("work"),
              (1000, 1000))
        check("hot: 900 calls below it", rows.get("hot"), (0, 900))
        check("cold: 100 calls below it", rows.get("cold"), (0, 100))
        callers = {n: c for n, (f, c) in rows.items() if n in ("hot", "cold")}
        check("the hottest caller", max(callers, key=callers.get)
              if callers else None, "hot")

        rows = top_rows(pprof(go, profile, "-top", "-sample_index=arg_sum"))
        # hot: args 100 + i % 7 over 900 rounds; cold: 1000 each.
        want_hot = sum(100 + i % 7 for i in range(1000) if i % 10 != 9)
        check("sum(arg0) below hot", rows.get("hot", (0, 0))[1], want_hot)
        check("sum(arg0) below cold", rows.get("cold", (0, 0))[1], 100000)

        folded_out = os.path.join(tmp, "folded")
        run([args.ubtrace, "-q", "-f", "folded", "-o", folded_out, "-e",
             "uprobe:$1:work { @calls[ustack] = count(); }",
             "-c", f"{prog} 1000", prog])
        folded = read_folded(folded_out)
        traced = traces_as_folded(
            pprof(go, profile, "-traces", "-sample_index=calls"))
        check("pprof -traces equals -f folded", traced == folded,
              True)
        if traced != folded:
            print("  pprof: ", dict(traced), "\n  folded:", dict(folded))

        raw = pprof(go, profile, "-raw")
        notes = run(["readelf", "-n", prog])
        m = re.search(r"Build ID: ([0-9a-f]+)", notes)
        build_id = m.group(1) if m else "?"
        mapping = [l for l in raw.splitlines()
                   if l.rstrip().endswith("[FN][FL][LN]") and prog in l]
        check("the program's mapping with its build id and flags",
              bool(mapping) and build_id in mapping[0], True)
        check("work's location has its source file",
              re.search(r"M=\d+ work \S*hot_cold\.c:\d+", raw) is not None,
              True)

        rows = top_rows(pprof(go, profile, "-top", "-sample_index=by_comm",
                              "-tagfocus=process=hot_cold"))
        check("-tagfocus on the annotated label keeps every sample",
              rows.get("work"), (1000, 1000))
        rows = top_rows(pprof(go, profile, "-top", "-sample_index=by_comm",
                              "-tagfocus=process=nobody"))
        check("-tagfocus on another value keeps none", rows.get("work"), None)
        sqlite3 = shutil.which("sqlite3")
        if sqlite3:
            one_liner = "uprobe:libc:malloc { @[ustack] = count(); }"
            cmd = (f"{sqlite3} :memory: \"create table t(a); insert into t "
                   "values (1),(2); select sum(a) from t;\"")
            run([args.ubtrace, "-q", "-f", "pprof", "-o", profile, "-e",
                 one_liner, "-c", cmd])
            run([args.ubtrace, "-q", "-f", "folded", "-o", folded_out, "-e",
                 one_liner, "-c", cmd])
            folded = read_folded(folded_out)
            traced = traces_as_folded(pprof(go, profile, "-traces"))
            check(f"sqlite3: {len(traced)} stacks of pprof -traces equal "
                  "-f folded", traced == folded and len(traced) > 10, True)
            if traced != folded:
                for k in sorted(set(traced) | set(folded)):
                    if traced[k] != folded[k]:
                        print(f"  {traced[k]} {folded[k]} {k}")
        else:
            print("sqlite3 not installed: its comparison skipped")

        spinners = os.path.join(args.testprogs, "spinners")
        run([args.ubtrace, "-q", "-f", "pprof", "-o", profile, "-e",
             "profile:hz:499 { @cpu[ustack] = count(); }",
             "-c", f"{spinners} 2 300"])
        rows = top_rows(pprof(go, profile, "-top"))
        total = sum(flat for flat, _ in rows.values())
        worker = rows.get("spin_worker", (0, 0))[0]
        main_ = rows.get("spin_main", (0, 0))[0]
        check("profile: the hottest function",
              max(rows, key=lambda n: rows[n][0]) if rows else None,
              "spin_worker")
        check("profile: spin_worker's share of the samples (about 2/3)",
              round(worker / total, 2) if total else 0,
              lambda share: 0.55 <= share <= 0.78)
        check("profile: spin_main's share (about 1/3)",
              round(main_ / total, 2) if total else 0,
              lambda share: 0.22 <= share <= 0.45)
        check("profile: samples over 0.9 s of CPU at 499 Hz (449)", total,
              lambda n: 337 <= n <= 562)
        return 0 if ok else 1
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
