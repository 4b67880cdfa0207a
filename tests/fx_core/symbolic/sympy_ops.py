"""Rebuilds expressions with sympy as torch 1.13's ShapeEnv does, for
sym_expr_test.cc: every result goes through sympy.expand, floor division is
torch.fx.experimental.symbolic_shapes.FloorDiv, modulo is sympy.Mod.

Usage: sympy_ops.py PROGRAM. PROGRAM's first line is `bind N1=V1 N2=V2 ...`
(one or more such lines, each a set of symbol values); then one operation a
line, numbered from 0 in order:
  sym NAME | int N | add I J | sub I J | mul I J | neg I | floordiv I J |
  mod I J | rel OP I J   (OP: eq ne lt le gt ge)
Prints one line per operation: str() of the result, then ' | ' and its
value under each binding (or ERROR), separated by ' ', then ' | ' and str()
of the result rebuilt bottom-up with evaluation (what reading the printed
text back means to sympy: a Mod that sympy built unevaluated may simplify
when rebuilt). An operation that raises prints ERROR alone.
"""
import sys

import sympy
from torch.fx.experimental.symbolic_shapes import FloorDiv

RELATIONS = {"eq": sympy.Eq, "ne": sympy.Ne, "lt": sympy.Lt, "le": sympy.Le,
             "gt": sympy.Gt, "ge": sympy.Ge}
BINARY = {"add": lambda a, b: a + b, "sub": lambda a, b: a - b,
          "mul": lambda a, b: a * b, "floordiv": lambda a, b: FloorDiv(a, b),
          "mod": lambda a, b: a % b}


def build(words, values):
    op = words[0]
    if op == "sym":
        return sympy.Symbol(words[1], positive=True, integer=True)
    if op == "int":
        return sympy.Integer(int(words[1]))
    if op == "neg":
        return sympy.expand(-values[int(words[1])])
    if op == "rel":
        a, b = values[int(words[2])], values[int(words[3])]
        return sympy.expand(RELATIONS[words[1]](a, b))
    a, b = values[int(words[1])], values[int(words[2])]
    return sympy.expand(BINARY[op](a, b))


def value_under(expr, binding):
    try:
        v = expr.xreplace(binding)
        if v in (sympy.true, sympy.false):
            return "True" if v == sympy.true else "False"
        return str(int(v))
    except Exception:  # ZeroDivisionError and friends
        return "ERROR"


def rebuilt(expr):
    try:
        if not expr.args:
            return str(expr)
        return str(sympy.expand(_rebuild(expr)))
    except Exception:
        return "ERROR"


def _rebuild(expr):
    if not expr.args:
        return expr
    return expr.func(*[_rebuild(a) for a in expr.args])


def main():
    bindings, values = [], []
    for line in open(sys.argv[1]):
        words = line.split()
        if words[0] == "bind":
            bindings.append({
                sympy.Symbol(k, positive=True, integer=True): sympy.Integer(v)
                for k, v in (w.rsplit("=", 1) for w in words[1:])})
            continue
        try:
            expr = build(words, values)
        except Exception:
            values.append(None)
            print("ERROR")
            continue
        values.append(expr)
        print(str(expr) + " | " +
              " ".join(value_under(expr, b) for b in bindings) + " | " +
              rebuilt(expr))


main()
