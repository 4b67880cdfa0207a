#!/usr/bin/python3
"""torch.fx's CapabilityBasedPartitioner on graphs partition_benchmark wrote.

    /usr/bin/python3 partition_bench.py TORCHFX_IMPORT_PY RESULT GRAPH.fx.json...

For each graph file: rebuilds it with torchfx_import.build_graph_module, times
propose_partitions (one run, CPU time; it builds every node's ancestor set,
so it is the slow part) with the rule partition_benchmark uses (call_function
targets other than torch.sigmoid), prints `GRAPH seconds`, and writes the
partitions (one line each, node names in graph order, torch.fx's order) to
RESULT.N.txt for the C++ side to compare.
"""

import importlib.util
import json
import sys
import time

import torch
from torch.fx.passes.infra.partitioner import CapabilityBasedPartitioner
from torch.fx.passes.operator_support import OperatorSupportBase
from torch.fx.node import _get_qualified_name


class NotSigmoid(OperatorSupportBase):
    def is_node_supported(self, submodules, node):
        return (node.op == "call_function"
                and _get_qualified_name(node.target) != "torch.sigmoid")


def main():
    spec = importlib.util.spec_from_file_location("imp", sys.argv[1])
    imp = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(imp)
    for k, path in enumerate(sys.argv[3:]):
        with open(path) as f:
            gm = imp.build_graph_module(json.load(f), {})
        start = time.process_time()
        partitioner = CapabilityBasedPartitioner(gm, NotSigmoid())
        partitions = partitioner.propose_partitions()
        seconds = time.process_time() - start
        order = {n: i for i, n in enumerate(gm.graph.nodes)}
        with open(f"{sys.argv[2]}.{k}.txt", "w") as f:
            for p in partitions:
                f.write(" ".join(n.name for n in sorted(p.nodes, key=order.get)))
                f.write("\n")
        print(f"{path} {seconds:.3f}", flush=True)


if __name__ == "__main__":
    main()
