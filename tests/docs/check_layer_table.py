#!/usr/bin/env python3
"""docs/DESIGN.md's layer table matches the tree.

DESIGN.md holds two tables between HTML comment markers:

  <!-- layer-table: begin ... -->   one row per product directory
  <!-- other-dirs: begin ... -->    the other top-level directories

The first cell of each row is the directory in backticks, with a trailing
slash (`runtime/gpu/`). The test fails when

  * a row names a directory that does not exist (or a row is duplicated);
  * a product directory has no row in the layer table. Product directories
    are the top-level PRODUCT_ROOTS that exist, and every directory below
    them that directly holds a source file (SOURCE_SUFFIXES);
  * a layer-table row names a directory that is not a product directory
    (its sources moved away: drop the row);
  * a top-level directory of the repository has no row in either table
    (hidden directories, build*/ trees and whatever else git ignores are
    left out).

usage: check_layer_table.py SOURCE_ROOT [DESIGN_MD]
"""
import os
import re
import subprocess
import sys

PRODUCT_ROOTS = ["ast", "backends", "codegen", "parser", "runtime", "stdlib"]
SOURCE_SUFFIXES = (".c", ".cc", ".cpp", ".h", ".hh", ".S", ".y", ".yy", ".l", ".def")
ROW = re.compile(r"^\|\s*`([^`]+)`\s*\|")


def table_rows(text, name):
    """The directories the rows of the table `name` name, in order."""
    begin = re.search(r"<!--\s*%s:\s*begin\b[^>]*-->" % re.escape(name), text)
    end = re.search(r"<!--\s*%s:\s*end\s*-->" % re.escape(name), text)
    if not begin or not end or end.start() < begin.end():
        raise ValueError("DESIGN.md has no '%s' table between <!-- %s: begin --> "
                         "and <!-- %s: end --> markers" % (name, name, name))
    rows = []
    for line in text[begin.end():end.start()].splitlines():
        m = ROW.match(line.strip())
        if m:
            rows.append(m.group(1))
    return rows


def ignored_by_git(root, paths):
    """The subset of `paths` (relative to root) that git ignores; empty when
    root is not a git checkout or git is missing."""
    if not paths:
        return set()
    try:
        r = subprocess.run(["git", "-C", root, "check-ignore", "--stdin"],
                           input="\n".join(paths) + "\n", capture_output=True,
                           text=True, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return set()
    if r.returncode not in (0, 1):
        return set()
    return {p.rstrip("/") for p in r.stdout.split()}


def walk_dirs(root):
    """Every directory below the product roots (relative, '/'-separated),
    with whether it directly holds a source file. Hidden directories and
    __pycache__ are skipped."""
    found = {}
    for top in PRODUCT_ROOTS:
        if not os.path.isdir(os.path.join(root, top)):
            continue
        for here, dirs, files in os.walk(os.path.join(root, top)):
            dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d != "__pycache__")
            rel = os.path.relpath(here, root).replace(os.sep, "/")
            found[rel] = any(f.endswith(SOURCE_SUFFIXES) for f in files)
    return found


def check(root, design_path):
    """A list of problems, empty when the table matches the tree."""
    with open(design_path, encoding="utf-8") as f:
        text = f.read()
    problems = []
    try:
        layer_rows = table_rows(text, "layer-table")
        other_rows = table_rows(text, "other-dirs")
    except ValueError as e:
        return [str(e)]

    def norm(row):
        return row.strip().rstrip("/")

    seen = set()
    for row in layer_rows + other_rows:
        d = norm(row)
        if d in seen:
            problems.append("`%s/` has two rows" % d)
        seen.add(d)
        if not os.path.isdir(os.path.join(root, d)):
            problems.append("`%s/` is in DESIGN.md's table but not in the tree" % d)

    dirs = walk_dirs(root)
    ignored = ignored_by_git(root, sorted(dirs))
    product = sorted(d for d, has_sources in dirs.items()
                     if d not in ignored and (has_sources or d in PRODUCT_ROOTS))
    layer = {norm(r) for r in layer_rows}
    for d in product:
        if d not in layer:
            problems.append("product directory `%s/` has no row in DESIGN.md's layer table" % d)
    for d in sorted(layer):
        if d in dirs and d not in product:
            problems.append("`%s/` is in the layer table but holds no source files "
                            "(drop its row, or say why in the table)" % d)
    for d in sorted({norm(r) for r in other_rows}):
        if "/" in d:
            problems.append("`%s/` in the other-dirs table is not a top-level directory" % d)

    # build*/ is .gitignore's pattern for build trees; skipped by name too,
    # for copies of the tree without .git.
    top = sorted(e for e in os.listdir(root)
                 if os.path.isdir(os.path.join(root, e)) and not e.startswith(".")
                 and e != "__pycache__" and not e.startswith("build"))
    top_ignored = ignored_by_git(root, top)
    for d in top:
        if d not in top_ignored and d not in seen:
            problems.append("top-level directory `%s/` has no row in DESIGN.md "
                            "(the layer table, or the other-dirs table)" % d)
    return problems


def main(argv):
    if len(argv) < 2:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    root = os.path.abspath(argv[1])
    design = argv[2] if len(argv) > 2 else os.path.join(root, "docs", "DESIGN.md")
    problems = check(root, design)
    for p in problems:
        print("FAIL: " + p)
    if problems:
        print("docs/DESIGN.md's layer table and the tree disagree: change the table "
              "in the same commit as the tree (%d problem(s))" % len(problems))
        return 1
    print("OK: the layer table names every product directory, and only existing ones")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
