"""A python3 workload for the real-program differential (real_programs.py):
deterministic output, written to the file named by argv[1], exercising what
libc-wide probes meet in a real interpreter: threads that start and exit,
fork+exec (subprocess), signals and timers, zlib, hashlib, json, re,
sqlite3, decimal, file I/O and directory walks."""
import decimal
import hashlib
import json
import os
import re
import signal
import sqlite3
import struct
import subprocess
import sys
import threading
import zlib

out = open(sys.argv[1], "w")


def emit(*parts):
    print(*parts, file=out)


# Threads that start, work and exit (thread teardown under return probes).
results = {}
lock = threading.Lock()


def work(i):
    h = hashlib.sha256()
    for j in range(3000):
        h.update(struct.pack("<qq", i, i * j))
    data = zlib.compress(h.digest() * 64, 6)
    with lock:
        results[i] = (h.hexdigest()[:16], len(data), zlib.crc32(data))


for round_ in range(4):
    threads = [threading.Thread(target=work, args=(round_ * 8 + i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
emit(sorted(results.items()))

# fork + exec.
for word in ("alpha", "beta", "gamma"):
    done = subprocess.run(["/bin/echo", word], capture_output=True, text=True)
    emit("child", done.returncode, done.stdout.strip())

# Signals: a handler run many times by a timer while the main thread works.
ticks = 0


def on_alarm(signum, frame):
    global ticks
    ticks += 1


signal.signal(signal.SIGALRM, on_alarm)
signal.setitimer(signal.ITIMER_REAL, 0.001, 0.001)
total = 0
while ticks < 20:
    total += sum(range(1000))
signal.setitimer(signal.ITIMER_REAL, 0, 0)
emit("ticks>=20", ticks >= 20)

# Text, numbers, a database.
emit(json.dumps({"k": [1, 2.5, None, "x" * 5], "re": re.sub(r"(\d)", r"<\1>", "a1b22c333")}, sort_keys=True))
decimal.getcontext().prec = 50
emit(decimal.Decimal(2).sqrt())
db = sqlite3.connect(":memory:")
db.execute("create table t(a integer, b text)")
db.executemany("insert into t values (?, ?)", ((i, "v%d" % (i % 97)) for i in range(20000)))
emit(db.execute("select count(*), sum(a), count(distinct b), max(b) from t").fetchone())

# Files and directories.
names = []
for root, dirs, files in os.walk(os.path.dirname(json.__file__)):
    dirs.sort()
    names.extend(sorted(files))
emit(len(names) > 10, hashlib.md5("\n".join(names).encode()).hexdigest())
out.close()
