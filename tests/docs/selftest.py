#!/usr/bin/env python3
"""The docs checks fail when they should: each is run on a small tree made
here, first matching (it must pass), then with one thing wrong at a time
(it must fail, naming the culprit)."""
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import check_doc_paths  # noqa: E402
import check_layer_table  # noqa: E402

DESIGN = """# design
<!-- layer-table: begin -->
| dir | holds |
|---|---|
| `ast/` | nodes |
| `runtime/` | headers |
| `runtime/maps/` | maps |
<!-- layer-table: end -->
<!-- other-dirs: begin -->
| dir | holds |
|---|---|
| `docs/` | this |
| `tests/` | tests |
<!-- other-dirs: end -->
See `runtime/maps/hash_map.cpp`, runtime/bundle.h and [the man](../man/x.8).
```
python3 tests/run.py build tests/*.test
```
"""

failures = []


def write(root, rel, text=""):
    path = os.path.join(root, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


def make_tree(root):
    write(root, "ast/ast.h")
    write(root, "runtime/bundle.h")
    write(root, "runtime/maps/hash_map.cpp")
    write(root, "docs/DESIGN.md", DESIGN)
    write(root, "tests/run.py")
    write(root, "tests/a.test")
    write(root, "man/x.8")
    # man/ has no row: made only for the link; give it one.
    design = DESIGN.replace("| `docs/` | this |", "| `docs/` | this |\n| `man/` | pages |")
    write(root, "docs/DESIGN.md", design)


def expect(name, problems, should_fail, needle=""):
    if should_fail and not problems:
        failures.append("%s: the check passed but should have failed" % name)
    elif not should_fail and problems:
        failures.append("%s: the check failed but should have passed: %s" % (name, problems))
    elif should_fail and needle and not any(needle in p for p in problems):
        failures.append("%s: the failure does not name %s: %s" % (name, needle, problems))
    else:
        print("ok: %s%s" % (name, (" -> " + problems[0]) if problems else ""))


def layer(root):
    return check_layer_table.check(root, os.path.join(root, "docs", "DESIGN.md"))


def paths(root, allowed=frozenset()):
    return check_doc_paths.check(root, [os.path.join(root, "docs", "DESIGN.md")], allowed)


def edit(root, old, new):
    path = os.path.join(root, "docs", "DESIGN.md")
    text = open(path, encoding="utf-8").read()
    assert old in text, old
    with open(path, "w", encoding="utf-8") as f:
        f.write(text.replace(old, new))
    return text


def restore(root, text):
    write(root, "docs/DESIGN.md", text)


with tempfile.TemporaryDirectory() as root:
    make_tree(root)
    expect("layer table matches", layer(root), False)
    expect("named paths exist", paths(root), False)

    # A new product directory without a row.
    write(root, "runtime/gpu/fatbin.cpp")
    expect("new product directory", layer(root), True, "runtime/gpu/")
    os.remove(os.path.join(root, "runtime/gpu/fatbin.cpp"))
    # Holding no source (a README only) does not make it a product directory.
    write(root, "runtime/gpu/README.md")
    expect("directory without sources", layer(root), False)
    os.remove(os.path.join(root, "runtime/gpu/README.md"))
    os.rmdir(os.path.join(root, "runtime/gpu"))

    # A grammar counts as a source.
    write(root, "parser/grammar.yy")
    expect("new top-level product root", layer(root), True, "parser/")
    os.remove(os.path.join(root, "parser/grammar.yy"))
    os.rmdir(os.path.join(root, "parser"))

    # A row removed.
    saved = edit(root, "| `runtime/maps/` | maps |\n", "")
    expect("row removed", layer(root), True, "runtime/maps/")
    restore(root, saved)

    # A row for a directory that is gone.
    saved = edit(root, "| `ast/` | nodes |", "| `ast/` | nodes |\n| `codegen/` | gone |")
    expect("row for a missing directory", layer(root), True, "codegen/")
    restore(root, saved)

    # A product root that only holds a build file still needs its row.
    write(root, "stdlib/CMakeLists.txt")
    expect("product root without sources", layer(root), True, "stdlib/")
    os.remove(os.path.join(root, "stdlib/CMakeLists.txt"))
    os.rmdir(os.path.join(root, "stdlib"))

    # A top-level directory in neither table.
    write(root, "bench/RESULTS.md")
    expect("top-level directory without a row", layer(root), True, "bench/")
    os.remove(os.path.join(root, "bench/RESULTS.md"))
    os.rmdir(os.path.join(root, "bench"))

    # Markers missing.
    saved = edit(root, "<!-- layer-table: end -->", "")
    expect("table markers missing", layer(root), True, "layer-table")
    restore(root, saved)

    # What a build directory holds depends on what ran: not checked, even
    # when the directory exists.
    write(root, "build-san/build.ninja")
    saved = edit(root, "runtime/bundle.h and", "runtime/bundle.h, `build-san/fuzz-out/` and")
    expect("path under an existing build directory", paths(root), False)
    restore(root, saved)
    os.remove(os.path.join(root, "build-san/build.ninja"))
    os.rmdir(os.path.join(root, "build-san"))

    # A named file that is gone, in backticks, in prose, in a command, as a link.
    for gone, needle in [("runtime/maps/hash_map.cpp", "hash_map.cpp"),
                         ("runtime/bundle.h", "runtime/bundle.h"),
                         ("tests/run.py", "tests/run.py"),
                         ("man/x.8", "man/x.8")]:
        path = os.path.join(root, gone)
        os.rename(path, path + ".moved")
        expect("named path gone: " + gone, paths(root), True, needle)
        os.rename(path + ".moved", path)
    # A glob that matches nothing.
    os.rename(os.path.join(root, "tests/a.test"), os.path.join(root, "tests/a.txt"))
    expect("glob without a match", paths(root), True, "tests/*.test")
    os.rename(os.path.join(root, "tests/a.txt"), os.path.join(root, "tests/a.test"))

    # The allow-list: a path that does not exist yet passes only when listed,
    # a listed path that exists fails, and so does a listed path no doc names.
    saved = edit(root, "runtime/bundle.h and", "runtime/bundle.h, `ast/registry.def` and")
    expect("missing path, not allowed", paths(root), True, "ast/registry.def")
    expect("missing path, allowed", paths(root, {"ast/registry.def"}), False)
    write(root, "ast/registry.def")
    expect("allowed path that landed", paths(root, {"ast/registry.def"}), True,
           "remove it from ALLOWED_MISSING")
    os.remove(os.path.join(root, "ast/registry.def"))
    restore(root, saved)
    expect("allowed path no doc names", paths(root, {"ast/registry.def"}), True,
           "no doc names")

if failures:
    for f in failures:
        print("FAIL: " + f)
    sys.exit(1)
print("OK: the docs checks fail on every broken case")
