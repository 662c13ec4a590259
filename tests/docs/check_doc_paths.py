#!/usr/bin/env python3
"""Every repository path that DESIGN.md and HACKING.md name exists.

A path is a word that starts with a top-level directory of the repository
(the existing ones, the product roots, and any top-level directory a doc's
tables name), followed by '/': `runtime/hook/hook.h`, tests/docs,
bench/uprobe.py in a command line. Words are taken from code spans, fenced
code blocks and plain text alike, so a path rots loudly whether or not it
is in backticks. Relative link targets ([x](docs/DESIGN.md)) are resolved
from the doc's own directory. A backticked bare `NAME.md` must exist at the
repository's root.

Not checked: absolute paths, paths under a build directory (build*/...),
and patterns with placeholders (<area>, {a,b}, $VAR, ...). Glob patterns
(* ? [) must match at least one file. A trailing ":LINE", "'s" and
punctuation are dropped first.

Paths that name what is being built right now and does not exist yet are
in ALLOWED_MISSING below. When one of them lands, this test fails until
its entry is removed, which is the moment to check the recipe that names
it (HACKING.md marks those recipes).

usage: check_doc_paths.py SOURCE_ROOT DOC...
"""
import glob
import os
import re
import sys

# Paths of issue 12's registry and backend design (items 1, 2 and 4), which
# HACKING.md's marked recipes and DESIGN.md's "In progress" blocks describe
# before the code lands. The owner of each removes its line when the path
# exists (the test says so).
ALLOWED_MISSING = {
}

KNOWN_ROOTS = {"ast", "backends", "codegen", "parser", "runtime", "stdlib",
               "tests", "bench", "man", "scripts", "cmake", "examples", "docs", ".ci"}
PLACEHOLDER = re.compile(r"[<>{}$]|\.\.\.|…")
FENCE = re.compile(r"^\s*(```|~~~)")
CODE_SPAN = re.compile(r"(`+)(.+?)\1")
LINK = re.compile(r"\]\(([^)\s]+)\)")
TABLE_DIR = re.compile(r"^\|\s*`([^`/]+)/`")


def words(text):
    return re.split(r"[\s,;|=\"'()]+", text)


def clean(word):
    w = word.strip()
    w = re.sub(r"^[`(\[]+", "", w)
    w = re.sub(r"'s$", "", w)
    w = re.sub(r"[`.,:;)\]!?]+$", "", w)
    w = re.sub(r":\d+(-\d+)?$", "", w)
    return w


def candidates(text):
    """(word, kind) pairs: kind is 'path', 'bare' (a backticked bare name) or
    'link' (a link target)."""
    out = []
    in_fence = False
    for line in text.splitlines():
        if FENCE.match(line):
            in_fence = not in_fence
            continue
        if in_fence:
            out += [(w, "path") for w in words(line)]
            continue
        for m in LINK.finditer(line):
            out.append((m.group(1), "link"))
        for m in CODE_SPAN.finditer(line):
            span = m.group(2).strip()
            if " " not in span and "/" not in span and span.endswith(".md"):
                out.append((span, "bare"))
            out += [(w, "path") for w in words(span)]
        prose = CODE_SPAN.sub(" ", LINK.sub("] ", line))
        out += [(w, "path") for w in words(prose)]
    return out


def roots_of(root, docs_text):
    r = set(KNOWN_ROOTS)
    r |= {e for e in os.listdir(root) if os.path.isdir(os.path.join(root, e))}
    for text in docs_text:
        for line in text.splitlines():
            m = TABLE_DIR.match(line.strip())
            if m:
                r.add(m.group(1))
    # Build directories (.gitignore's /build*/: build, build-san, ...):
    # what they hold depends on what was built and run.
    return {d for d in r if not d.startswith("build")}


def exists(root, rel):
    if any(c in rel for c in "*?["):
        return bool(glob.glob(os.path.join(root, rel)))
    return os.path.exists(os.path.join(root, rel))


def check(root, doc_paths, allowed_missing=ALLOWED_MISSING):
    """A list of problems, empty when every named path exists."""
    texts = {}
    for d in doc_paths:
        with open(d, encoding="utf-8") as f:
            texts[d] = f.read()
    roots = roots_of(root, texts.values())
    problems = []
    used_allowance = set()
    for doc, text in texts.items():
        name = os.path.relpath(doc, root)
        seen = set()
        for word, kind in candidates(text):
            if kind == "link":
                target = word.split("#", 1)[0]
                if not target or re.match(r"^[a-z]+:", target):
                    continue
                rel = os.path.normpath(os.path.join(os.path.relpath(
                    os.path.dirname(os.path.abspath(doc)), root), target))
                if rel.startswith(".."):
                    problems.append("%s: the link to %s leaves the repository" % (name, target))
                    continue
            else:
                rel = clean(word)
                if not rel or PLACEHOLDER.search(rel):
                    continue
                if kind == "bare":
                    pass
                elif "/" not in rel or rel.startswith(("/", "./", "../")):
                    continue
                elif rel.split("/", 1)[0] not in roots:
                    continue
                rel = rel.rstrip("/")
            if rel in seen:
                continue
            seen.add(rel)
            if rel in allowed_missing:
                used_allowance.add(rel)
                if exists(root, rel):
                    problems.append("%s exists now: remove it from ALLOWED_MISSING in "
                                    "tests/docs/check_doc_paths.py (and check the recipes "
                                    "that name it against the code)" % rel)
                continue
            if not exists(root, rel):
                problems.append("%s names %s, which is not in the tree" % (name, rel))
    for rel in sorted(set(allowed_missing) - used_allowance):
        problems.append("ALLOWED_MISSING lists %s, which no doc names any more: "
                        "remove it" % rel)
    return problems


def main(argv):
    if len(argv) < 3:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    root = os.path.abspath(argv[1])
    docs = [os.path.join(root, d) if not os.path.isabs(d) else d for d in argv[2:]]
    problems = check(root, docs)
    for p in problems:
        print("FAIL: " + p)
    if problems:
        print("%d problem(s): fix the doc or the allow-list" % len(problems))
        return 1
    print("OK: every path named in %s exists" % ", ".join(os.path.relpath(d, root) for d in docs))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
