"""The command line the bench scripts share: `SCRIPT [BUILD] [--NAME VALUE]...`."""
import sys

build = sys.argv[1] if len(sys.argv) > 1 and not sys.argv[1].startswith("-") else "build"


def option(name, default):
    """The value after --NAME on the command line, or default."""
    if name in sys.argv:
        return sys.argv[sys.argv.index(name) + 1]
    return default
