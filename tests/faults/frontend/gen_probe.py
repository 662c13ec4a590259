#!/usr/bin/env python3
"""Prints one huge probe for the limits tests.

usage: gen_probe.py SHAPE N ATTACH
  updates  N map updates in one block                     (defect 13)
  tests    N times `if (arg0 == 7) { @a = 1; }`           (defect 14)
  long_if  one `if (arg0 == 3)` around N map updates, then @after: the
           conditional jump skips N * 10 instructions     (defect 14)
"""
import sys

shape, n, attach = sys.argv[1], int(sys.argv[2]), sys.argv[3]
if shape == "updates":
    body = " ".join(f"@a{i % 10} = {i};" for i in range(n))
elif shape == "tests":
    body = " ".join("if (arg0 == 7) { @a = 1; }" for _ in range(n))
elif shape == "long_if":
    inner = " ".join(f"@x{i % 50} = {i};" for i in range(n))
    body = f"if (arg0 == 3) {{ {inner} }} @after = count();"
else:
    sys.exit(__doc__)
print(f"{attach} {{ {body} }}")
