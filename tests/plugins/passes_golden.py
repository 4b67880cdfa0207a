#!/usr/bin/python3
"""torch.fx's own passes on a bundle: the goldens for the plugin tests.

    passes_golden.py TORCHFX_IMPORT_PY BUNDLE_DIR MODE OUT_DIR [ARG]

Rebuilds the bundle as a torch.fx GraphModule (tools/torchfx_import.py) and
writes to OUT_DIR what torch.fx does with it:
  dce          graph.txt after Graph.eliminate_dead_code()
  cse          graph.txt after torch.fx's CSEPass
  const_fold   targets.txt (the call targets left after
               torch.fx.experimental.const_fold.split_const_subgraphs) and
               output.pt
  split        ARG: comma-separated nodes that start a partition;
               torch.fx.passes.split_module.split_module's submodule count
               and each submodule's call targets (targets.txt), graph text
               (SUBMOD.graph.txt) and code (SUBMOD.code.py), output.pt
  run          output.pt: the module's output on DIR/input.pt
Graph text uses the current docs' num_users form.
"""

import importlib.util
import os
import re
import sys

import torch
import torch.fx


def text(graph):
    return re.sub(r"\[#users=", "[num_users=", str(graph))


def targets(gm):
    out = []
    for n in gm.graph.nodes:
        if n.op in ("call_function", "call_method", "call_module"):
            t = n.target
            if n.op == "call_function":
                t = torch.fx.node._get_qualified_name(t).replace("_operator.", "operator.")
            out.append(f"{n.op} {t}")
    return out


def main():
    spec = importlib.util.spec_from_file_location("torchfx_import", sys.argv[1])
    importer = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(importer)
    bundle, mode, out_dir = sys.argv[2], sys.argv[3], sys.argv[4]
    os.makedirs(out_dir, exist_ok=True)
    gm = importer.load_bundle(bundle)
    gm.eval()
    inputs = torch.load(os.path.join(bundle, "input.pt"))
    result = gm
    lines = None
    if mode == "dce":
        gm.graph.eliminate_dead_code()
        gm.recompile()
        with open(os.path.join(out_dir, "graph.txt"), "w") as f:
            f.write(text(gm.graph))
    elif mode == "cse":
        from torch.fx.passes.dialect.common.cse_pass import CSEPass
        result = CSEPass()(gm).graph_module
        with open(os.path.join(out_dir, "graph.txt"), "w") as f:
            f.write(text(result.graph))
    elif mode == "const_fold":
        from torch.fx.experimental.const_fold import split_const_subgraphs
        result = split_const_subgraphs(gm)
        result.run_folding()
        lines = targets(result)
    elif mode == "split":
        from torch.fx.passes.split_module import split_module
        starts = set(sys.argv[5].split(","))
        partition = {}
        current = 0
        seen_compute = False
        for n in gm.graph.nodes:
            if n.op in ("call_function", "call_method", "call_module"):
                if n.name in starts and seen_compute:
                    current += 1
                seen_compute = True
                partition[n.name] = current
        result = split_module(gm, None, lambda n: partition[n.name])
        lines = []
        for n in result.graph.nodes:
            if n.op == "call_module":
                sub = getattr(result, n.target)
                lines.append(f"{n.target}: " + " ".join(targets(sub)))
                with open(os.path.join(out_dir, n.target + ".graph.txt"), "w") as f:
                    f.write(text(sub.graph))
                with open(os.path.join(out_dir, n.target + ".code.py"), "w") as f:
                    f.write(sub.code)
    with torch.no_grad():
        out = result(*inputs)
    torch.save(out, os.path.join(out_dir, "output.pt"))
    if lines is not None:
        with open(os.path.join(out_dir, "targets.txt"), "w") as f:
            f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
