"""Reads a printed symbolic expression or relation back as sympy does, again
and again, for sym_expr_test.cc: every name but sympy's functions is a
positive integer symbol (torch 1.13's ShapeEnv makes them so), FloorDiv is
torch.fx.experimental.symbolic_shapes.FloorDiv, and each reading is
expanded as the ShapeEnv expands.

Usage: sympy_rounds.py TEXT ROUNDS. Prints ROUNDS lines: the print of the
first reading of TEXT, then of the reading of that print, and so on.
"""
import re
import sys

import sympy
from torch.fx.experimental.symbolic_shapes import FloorDiv

FUNCTIONS = {"Mod": sympy.Mod, "FloorDiv": FloorDiv, "Eq": sympy.Eq,
             "Ne": sympy.Ne, "Lt": sympy.Lt, "Le": sympy.Le, "Gt": sympy.Gt,
             "Ge": sympy.Ge, "True": sympy.true, "False": sympy.false}


def read(text):
    names = dict(FUNCTIONS)
    for name in set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", text)):
        names.setdefault(name, sympy.Symbol(name, positive=True,
                                            integer=True))
    return sympy.expand(sympy.parse_expr(text, local_dict=names))


def main():
    text, rounds = sys.argv[1], int(sys.argv[2])
    for _ in range(rounds):
        text = str(read(text))
        print(text)


if __name__ == "__main__":
    main()
