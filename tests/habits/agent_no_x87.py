#!/usr/bin/env python3
"""habits.agent_no_x87: the libraries loaded into traced programs contain
no x87 or MMX instruction.

Why: at a program's own inline `syscall` the probe path keeps the vector
registers and MXCSR by moves and leaves the x87 state as it is
(runtime/hook/vector_moves.h): a live long double of the program across the
call survives only because nothing on the path touches the x87 stack or
control word. The programs come from BPF (no floating point); this checks
the agent's own code, the C++ runtime linked into it included.

Checked with objdump -d: no instruction whose mnemonic is an x87 one (f...,
but fxsave/fxrstor, which save state) and no operand naming %st or %mm.

usage: agent_no_x87.py [--objdump PROGRAM] LIBRARY...
Exit: 0 none found, 1 some found (each function is named), 2 bad usage or
objdump failed.
"""
import re
import subprocess
import sys

FUNCTION = re.compile(r"^[0-9a-f]+ <(.+)>:$")
# "  1c0a4:\tfldt   0x10(%rsp)": the mnemonic after the address's tab.
INSN = re.compile(r"^\s*[0-9a-f]+:\t(\S+)\s*(.*)$")
X87 = re.compile(r"^(f(?!xsave|xrstor)[a-z0-9]+|emms|femms)$")
REGS = re.compile(r"%st\b|%st\(|%mm[0-7]\b")


def offenders(objdump, library):
    r = subprocess.run([objdump, "-d", "--no-show-raw-insn", library],
                       capture_output=True, text=True)
    if r.returncode != 0:
        print(f"{objdump} failed on {library}: {r.stderr.strip()}")
        sys.exit(2)
    found = {}
    function = "?"
    for line in r.stdout.splitlines():
        m = FUNCTION.match(line)
        if m:
            function = m.group(1)
            continue
        m = INSN.match(line)
        if not m:
            continue
        mnemonic, operands = m.group(1), m.group(2)
        if X87.match(mnemonic) or REGS.search(operands):
            found.setdefault(function, []).append(f"{mnemonic} {operands}")
    return found


def main(argv):
    objdump = "objdump"
    if len(argv) >= 2 and argv[0] == "--objdump":
        objdump, argv = argv[1], argv[2:]
    if not argv:
        print(__doc__)
        return 2
    bad = 0
    for library in argv:
        for function, insns in offenders(objdump, library).items():
            bad += 1
            print(f"{library}: {function}: {len(insns)} x87/MMX "
                  f"instruction(s), first: {insns[0]}")
    if bad:
        print(f"{bad} function(s) use x87 or MMX state: the probe path's "
              "vector moves (runtime/hook/vector_moves.h) do not keep it")
        return 1
    print(f"no x87 or MMX instruction in {', '.join(argv)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
