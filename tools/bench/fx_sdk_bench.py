#!/usr/bin/python3
"""fx_sdk in process against the file path (BENCHMARKS.md, "Python").

    bazel run --config=opt //tools/bench:fx_sdk_bench [-- --repeat 5]

For torchvision's resnet50 and a 10k-node graph (a chain cycling
torch.add and torch.mul with a 4x16 buffer, and torch.relu; built with
torch.fx's Graph API):
 - in process: fx_sdk.from_torch_fx + to_torch_fx (the round trip alone),
   and fx_sdk.run_pipeline(gm, "dce") (the round trip with a pass run),
   each twice: as returned (forward compiled on first use, lazy=True, the
   default) and with the forward compiled before returning (lazy=False:
   what the first call of the lazy one adds);
 - the file path: the bundle tools/torchfx_export.py writes (graph and
   weights), `fx run BUNDLE --pipeline dce -o OUT` (a process),
   torchfx_import.load_bundle(OUT).
Also from_torch_fx alone, torch.fx's own cost of building the same
GraphModule (graph_copy, then GraphModule(root, graph)) and Python's
compile() of gm.code alone. Best of --repeat runs, wall time
(time.perf_counter) and, for the round trips, CPU time (this process's and
fx run's: on a loaded machine the figure time slicing does not inflate),
one thread. Checks that the graphs coming back have
the original's nodes. Prints one JSON object.
"""

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time

import torch
import torch.fx

import fx_sdk
from fx_sdk import torchfx_export, torchfx_import


def resnet50():
    import torchvision.models
    torch.manual_seed(0)
    model = torchvision.models.resnet50().eval()
    return torch.fx.symbolic_trace(model)


def chain(nodes=10000):
    """A graph of `nodes` call_function nodes (and one placeholder, one
    get_attr, the output)."""
    root = torch.nn.Module()
    root.register_buffer("w", torch.rand(4, 16))
    graph = torch.fx.Graph()
    x = graph.placeholder("x")
    w = graph.get_attr("w")
    ops = [(torch.relu, lambda v: (v,)),
           (torch.add, lambda v: (v, w)),
           (torch.mul, lambda v: (v, w))]
    for i in range(nodes):
        fn, args = ops[i % 3]
        x = graph.call_function(fn, args(x))
    graph.output(x)
    return torch.fx.GraphModule(root, graph)


def write_bundle(gm, directory):
    """What tools/torchfx_export.py writes of a graph (the graph and its
    weights; not the example inputs and eager outputs it also saves)."""
    os.makedirs(directory, exist_ok=True)
    document, weights = torchfx_export.graph_document(gm)
    if weights:
        document["weights"] = "model.weights.pt"
        torch.save(weights, os.path.join(directory, "model.weights.pt"))
    with open(os.path.join(directory, "graph.fx.json"), "w") as f:
        json.dump(document, f, indent=1)


def cpu_seconds():
    """CPU time of this process and of its finished children (fx run)."""
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + children.ru_utime + children.ru_stime


def best(fn, repeat, cpu=None):
    """The best wall time of `repeat` calls, and the result; with a `cpu`
    dict also the best CPU time, under cpu["s"] (what a loaded machine's
    time slicing does not inflate)."""
    times, cpu_times = [], []
    for _ in range(repeat):
        start, start_cpu = time.perf_counter(), cpu_seconds()
        result = fn()
        times.append(time.perf_counter() - start)
        cpu_times.append(cpu_seconds() - start_cpu)
    if cpu is not None:
        cpu["s"] = min(cpu_times)
    return min(times), result


def same_graph(a, b):
    """The same nodes (the file path's import leaves out type annotations,
    so the printed graphs may differ there)."""
    def nodes(gm):
        return [(n.name, n.op, str(n.target), str(n.args), str(n.kwargs))
                for n in gm.graph.nodes]
    return nodes(a) == nodes(b)


def measure(name, gm, fx, repeat, work):
    def round_trip(lazy=True):
        return fx_sdk.to_torch_fx(fx_sdk.from_torch_fx(gm), lazy=lazy)

    def in_process(lazy=True):
        return fx_sdk.run_pipeline(gm, "dce", lazy=lazy)[0]

    def file_path():
        bundle = os.path.join(work, name)
        out = os.path.join(work, name + "_out")
        write_bundle(gm, bundle)
        subprocess.run([fx, "run", os.path.join(bundle, "graph.fx.json"),
                        "--pipeline", "dce", "--plugin-dir", fx_sdk.PLUGIN_DIR,
                        "-o", os.path.join(out, "graph.fx.json")],
                       check=True, stdout=subprocess.DEVNULL)
        return torchfx_import.load_bundle(out)

    def torch_fx_floor():
        # What building the returned GraphModule costs torch.fx itself (its
        # nodes, then its code): any path that ends in a torch.fx
        # GraphModule pays it.
        graph = torch.fx.Graph()
        graph.graph_copy(gm.graph, {})
        return torch.fx.GraphModule(gm, graph)

    result = {"nodes": len(gm.graph.nodes)}
    result["from_torch_fx_s"] = round(
        best(lambda: fx_sdk.from_torch_fx(gm), repeat)[0], 4)
    result["torch_fx_floor_s"] = round(best(torch_fx_floor, repeat)[0], 4)
    # Python's compile() of gm.code: what a forward made from the source
    # costs (to_torch_fx makes the same code object without it for code in
    # the forms python/forward_bytecode.cc takes).
    result["python_compile_s"] = round(
        best(lambda: compile(gm.code, "<fx_sdk_bench>", "exec"), repeat)[0], 4)
    for label, fn in (("round_trip_s", round_trip),
                      ("round_trip_compiled_s", lambda: round_trip(False)),
                      ("in_process_dce_s", in_process),
                      ("in_process_dce_compiled_s", lambda: in_process(False)),
                      ("file_path_dce_s", file_path)):
        cpu = {}
        seconds, back = best(fn, repeat, cpu)
        in_process_path = not label.startswith("file_path")
        if not same_graph(back, gm) or (in_process_path
                                        and back.code != gm.code):
            raise SystemExit(f"{name}: {label} changed the graph")
        result[label] = round(seconds, 4)
        result[label[:-2] + "_cpu_s"] = round(cpu["s"], 4)
    for lazy, suffix in ((True, ""), (False, "_compiled")):
        result["speedup" + suffix] = round(
            result["file_path_dce_s"] / result[f"in_process_dce{suffix}_s"], 1)
        result["speedup_cpu" + suffix] = round(
            result["file_path_dce_cpu_s"] /
            result[f"in_process_dce{suffix}_cpu_s"], 1)
    check_outputs(name, gm, in_process())
    check_outputs(name, gm, in_process(lazy=False))
    return result


def check_outputs(name, gm, back):
    """The returned GraphModule (lazily compiled or compiled) computes the
    original's numbers."""
    if name == "resnet50":
        inputs = (torch.rand(1, 3, 224, 224),)
    else:
        inputs = (torch.rand(4, 16),)
    with torch.no_grad():
        if not torch.equal(back(*inputs), gm(*inputs)):
            raise SystemExit(f"{name}: outputs differ")


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--fx", required=True, help="the fx command")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    results = {}
    with tempfile.TemporaryDirectory() as work:
        for name, make in (("resnet50", resnet50), ("chain_10k", chain)):
            results[name] = measure(name, make(), args.fx, args.repeat, work)
    print(json.dumps(results, indent=1))


if __name__ == "__main__":
    main(sys.argv[1:])
