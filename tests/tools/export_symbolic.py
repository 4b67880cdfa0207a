#!/usr/bin/python3
"""Writes a bundle of a torch 1.13 make_fx(tracing_mode="symbolic") graph
for symbolic_bundle_test: torch's own text forms and numbers are the
goldens.

    export_symbolic.py DIR

DIR/graph.fx.json   the graph with its meta and shape_env (torchfx_export),
                    with torch's own text of each guard (printed_guards)
DIR/format_guards.txt  gm.shape_env.format_guards()
DIR/hints.txt       gm.shape_env.var_to_val: "SYMBOL VALUE" lines
DIR/graph.txt       print(gm.graph), num_users form
DIR/code.py         gm.code
DIR/input_N.pt, DIR/expected_N.pt for N in 0 1 2: inputs of three shapes
                    the guards allow and eager's outputs
DIR/input_bad.pt    an input whose second size is odd: the guard on
                    Mod(t0.size(1), 2) breaks
"""
import json
import os
import sys

import torch
from torch.fx.experimental.proxy_tensor import make_fx

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "tools"))
import torchfx_export  # noqa: E402


def view_computed(x, y):
    a = x.view(x.shape[0] * 2, -1)
    return torch.cat([a, a], dim=0) + y.sum()


def printed_guards(env):
    """Each guard as torch's format_guards() prints it, without " - "."""
    text = env.format_guards()
    lines = text.split("\n") if text else []
    assert len(lines) == len(env.guards), text
    return [line[len(" - "):] for line in lines]


def write_shape_env(gm, doc, out):
    env = gm.shape_env
    doc["shape_env"]["printed_guards"] = printed_guards(env)
    with open(os.path.join(out, "format_guards.txt"), "w") as f:
        f.write(env.format_guards())
    with open(os.path.join(out, "hints.txt"), "w") as f:
        f.writelines(f"{k} {int(v)}\n" for k, v in env.var_to_val.items())


def main(out):
    os.makedirs(out, exist_ok=True)
    torch.manual_seed(0)
    gm = make_fx(view_computed, tracing_mode="symbolic")(torch.randn(4, 6),
                                                         torch.randn(3))
    doc, _ = torchfx_export.graph_document(gm, meta=True)
    write_shape_env(gm, doc, out)
    with open(os.path.join(out, "graph.fx.json"), "w") as f:
        json.dump(doc, f, indent=1)
    with open(os.path.join(out, "graph.txt"), "w") as f:
        f.write(str(gm.graph).replace("[#users=", "[num_users=") + "\n")
    with open(os.path.join(out, "code.py"), "w") as f:
        f.write(gm.code)
    for n, (rows, cols) in enumerate([(4, 6), (7, 10), (2, 16)]):
        inputs = [torch.randn(rows, cols), torch.randn(3)]
        torch.save(inputs, os.path.join(out, f"input_{n}.pt"))
        torch.save(view_computed(*inputs),
                   os.path.join(out, f"expected_{n}.pt"))
    torch.save([torch.randn(5, 7), torch.randn(3)],
               os.path.join(out, "input_bad.pt"))


if __name__ == "__main__":
    main(sys.argv[1])
