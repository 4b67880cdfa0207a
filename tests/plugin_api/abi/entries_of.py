"""Lists the FxApi entries of a plugin_api.h as an X-macro file.

Usage: entries_of.py HEADER OUT.inc

Writes one `X(Name)` line per function pointer of `struct FxApi`, in
declaration order. entries_probe.c includes the result and the compiler
checks it against the same header (each name is an offsetof operand, and
the entries fill the table exactly), so a name this reads wrong or misses
fails the build instead of passing unseen.
"""
import re
import sys


def entries(header_text):
    text = re.sub(r"/\*.*?\*/", "", header_text, flags=re.S)
    body = re.search(r"struct FxApi\s*\{(.*?)\n\}", text, re.S)
    if body is None:
        raise SystemExit("entries_of.py: no struct FxApi in the header")
    return re.findall(r"\(\*\s*(\w+)\)\s*\(", body.group(1))


def main(header, out):
    with open(header) as f:
        names = entries(f.read())
    with open(out, "w") as f:
        f.write("".join("X(%s)\n" % n for n in names))


if __name__ == "__main__":
    main(*sys.argv[1:])
