#!/usr/bin/env python3
"""The probe path calls no libc function (runtime/probe_safe.h).

Disassembles the agent (libubtrace_agent.so), follows the direct calls and
jumps from every function that runs when a hook fires (the dispatchers,
the trap path, thread-state setup and teardown, the helpers, map updates,
the interpreter, the probe handler), and fails if any of them reaches the
PLT: a libc function the traced program may have hooked, or that takes a
lock. A few calls are allowed, each for a stated reason.

usage: probe_path_calls.py [--objdump PROGRAM] LIBUBTRACE_AGENT_SO
"""
import re
import subprocess
import sys

ROOTS = [
    r"^ubt_hook_dispatch_(entry|return|entry_keeping_vectors|keeping_vectors)$",
    r"^ubt_hook_return_personality$",
    r"^ubt_bpf_", r"^ubt_map_iterate$", r"^ubt_libcall_",
    r"^ubtrace::runtime::hook::\(anonymous namespace\)::(run_trap_site|handle)\(",
    r"^ubtrace::runtime::hook::\(anonymous namespace\)::release_at_exit\(",
    r"^ubtrace::runtime::hook::(claim_thread_state|release_transient_state|entry_is_live|live_entry_above)\(",
    r"^ubtrace::runtime::helpers::\(anonymous namespace\)::h_[a-z0-9_]+\(unsigned long, unsigned long, unsigned long, unsigned long, unsigned long\)$",
    r"^ubtrace::runtime::helpers::(safe_read|safe_read_str|safe_copy|safe_copy_string)\(",
    r"^ubtrace::runtime::maps::(claim_thread_slot|release_thread_slot)\(",
    r"^ubtrace::runtime::maps::\(anonymous namespace\)::on_thread_exit\(",
    r"^ubtrace::agent::\(anonymous namespace\)::(on_hit|usdt_arg)\(",
    r"^ubtrace::vm::run\(",
]

# Where the walk stops: the signal handlers' path for signals that are not
# ours (the program's own fault: its handler or the default action).
STOP = [
    r"^ubtrace::runtime::helpers::pass_on\(",
]

# (caller pattern, PLT callee): allowed, and why.
ALLOWED = [
    # Writes the last words of a process that is about to die anyway.
    (r"::fatal\(", "write@plt"),
    # A key below 32: stores in the thread descriptor, no lock, no
    # allocation (thread_state.h); a hook on it is a nested skip.
    (r"take_free_state\(|claim_thread_state\(|claim_thread_slot\(", "pthread_setspecific@plt"),
    # The thread slot's robust mutex: trylock on an uncontended or dead
    # owner's mutex, and its release at thread exit, make no system call
    # and take no other lock (thread_slot.h).
    (r"take_slot\(|claim_thread_slot\(|try_claim\(", "pthread_mutex_trylock@plt"),
    (r"take_slot\(|claim_thread_slot\(|try_claim\(", "pthread_mutex_consistent@plt"),
    (r"release_entry\(|on_thread_exit\(|release_thread_slot\(|insert_front\(|claim_thread_slot\(",
     "pthread_mutex_unlock@plt"),
    # Whether a ring writer or a lock holder lives: the same robust mutex,
    # tried and released at once (thread_slot.h).
    (r"slot_holder_alive\(", "pthread_mutex_trylock@plt"),
    (r"slot_holder_alive\(", "pthread_mutex_consistent@plt"),
    (r"slot_holder_alive\(", "pthread_mutex_unlock@plt"),
    # Runs only while an exception unwinds: libgcc's unwinder called it.
    (r"ubt_hook_return_personality", "_Unwind_GetIP@plt"),
]

def main():
    args = sys.argv[1:]
    objdump = "llvm-objdump-19"
    if len(args) == 3 and args[0] == "--objdump":
        objdump = args[1]
        args = args[2:]
    if len(args) != 1:
        print(__doc__)
        return 2
    so = args[0]
    out = subprocess.run([objdump, "-d", "--no-show-raw-insn", "-C", so],
                         capture_output=True, text=True, check=True).stdout
    head = re.compile(r"^[0-9a-f]+ <(.*)>:$")
    branch = re.compile(r"\s(?:call|callq|jmp|jmpq|j[a-z]{1,3})\s+(?:0x)?[0-9a-f]+ <([^>]*?)(?:\+0x[0-9a-f]+)?>")
    calls = {}
    cur = None
    for line in out.splitlines():
        m = head.match(line)
        if m:
            cur = m.group(1)
            calls.setdefault(cur, set())
            continue
        if cur is None:
            continue
        b = branch.search(line)
        if b and b.group(1) != cur:
            calls[cur].add(b.group(1))
    roots = [f for f in calls if any(re.search(r, f) for r in ROOTS)]
    missing = [r for r in ROOTS if not any(re.search(r, f) for f in calls)]
    if missing:
        print("no function matches these roots (renamed?):")
        for r in missing:
            print("  " + r)
        return 1
    parent = {}
    seen = set()
    stack = list(roots)
    bad = []
    while stack:
        f = stack.pop()
        if f in seen:
            continue
        seen.add(f)
        if any(re.search(s, f) for s in STOP):
            continue
        for t in sorted(calls.get(f, ())):
            if t.endswith("@plt"):
                if not any(re.search(c, f) and t == callee for c, callee in ALLOWED):
                    bad.append((t, f))
                continue
            if t not in seen:
                parent.setdefault(t, f)
                stack.append(t)
    for callee, caller in sorted(set(bad)):
        chain = [callee, caller]
        while chain[-1] in parent and len(chain) < 10:
            chain.append(parent[chain[-1]])
        print("probe path calls " + " <- ".join(chain))
    print(f"{len(seen)} functions on the probe path, {len(set(bad))} calls into the PLT")
    return 1 if bad else 0

if __name__ == "__main__":
    sys.exit(main())
