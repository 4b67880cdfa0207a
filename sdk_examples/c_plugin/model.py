"""The model the C plugin's test traces, and torch.fx's twin of the pass.

    python3 model.py export TORCHFX_EXPORT_PY DIR   # the traced bundle
    python3 model.py golden TORCHFX_IMPORT_PY DIR OUT_DIR
        # OUT_DIR/graph.txt and OUT_DIR/output.pt after simplify() below
"""

import importlib.util
import operator
import os
import re
import subprocess
import sys

import torch


class Model(torch.nn.Module):
    def forward(self, x):
        y = (x * 1 + 0) * 2.0
        z = torch.add(0, torch.mul(y, 1.0))
        return z - 0 + x * 3 - 1


def simplify(gm):
    """The same rules with torch.fx's Graph API."""
    ops = {operator.mul: 1, torch.mul: 1, operator.add: 0, torch.add: 0,
           operator.sub: 0, torch.sub: 0}
    for node in list(gm.graph.nodes):
        if node.op != "call_function" or node.target not in ops or \
                len(node.args) != 2 or node.kwargs:
            continue
        unit = ops[node.target]
        a, b = node.args
        keep = None
        if isinstance(a, torch.fx.Node) and type(b) in (int, float) and b == unit:
            keep = a
        elif node.target not in (operator.sub, torch.sub) and \
                isinstance(b, torch.fx.Node) and type(a) in (int, float) and a == unit:
            keep = b
        if keep is not None:
            node.replace_all_uses_with(keep)
            gm.graph.erase_node(node)
    gm.recompile()
    return gm


def main():
    mode, tool, directory = sys.argv[1:4]
    if mode == "export":
        subprocess.check_call([sys.executable, tool, "--module",
                               os.path.abspath(__file__) + ":Model",
                               "--input-shape", "2,3", "-o", directory])
        return
    spec = importlib.util.spec_from_file_location("torchfx_import", tool)
    importer = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(importer)
    gm = simplify(importer.load_bundle(directory))
    out_dir = sys.argv[4]
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, "graph.txt"), "w") as f:
        f.write(re.sub(r"\[#users=", "[num_users=", str(gm.graph)))
    with torch.no_grad():
        out = gm(*torch.load(os.path.join(directory, "input.pt")))
    torch.save(out, os.path.join(out_dir, "output.pt"))


if __name__ == "__main__":
    main()
