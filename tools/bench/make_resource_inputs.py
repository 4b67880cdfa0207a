#!/usr/bin/python3
"""Writes the inputs of the resource measurements (BENCHMARKS.md, "Resource
behaviour"; tools/bench/resource_bench.sh runs `fx` on them).

    make_resource_inputs.py OUT_DIR [--nodes N] [--deep N] [--only CASE,...]

Each case is a folder of OUT_DIR holding graph.fx.json, input.pt (the list of
inputs `fx exec` takes) and, where the graph runs, expected.pt (what Python
torch computes for it):

  chain_1m      a graph of N nodes (default 1,000,000): one placeholder, then
                add (+ 1.0), mul (a call_method, * 0.5) and relu in turn on
                the node before, then the output; a [4] float tensor in.
  weights_200m  three torch.nn.Linear(4096, 4096) with ReLUs between them:
                a 201 MB weights file (model.weights.pt); a [1, 4096] input.
  deep_limit    an argument nested as deep as a graph file may nest it (the
                JSON reader's limit of 1000 levels: file, nodes, node, args,
                then 995 lists around {"node": "x"}), read by
                operator.getitem(ARG, 0), whose 994-deep result is the output.
  deep_100k     the same with lists nested N deep (default 100,000): refused.
  deep_runtime  200 such getitem nodes in a chain, each argument the previous
                node's value inside 995 lists: every argument is within the
                reader's limit, the value built at run time is 198,800 lists
                deep (open, BENCHMARKS.md: fx exec overflows the stack
                freeing it).
  deep_input_limit
                an identity graph fed a list nested as deep as a torch.save
                file may nest it (the pickle reader's limit of 1000 levels:
                998 lists, the input list included, around a tensor, whose
                rebuild call and argument tuple are two levels more).
  deep_input_100k
                the same input nested N deep: refused.

The graph files are written as text (Python's json module cannot write the
deep ones); the deep torch.save file is pickled on a thread with a large
stack. --only writes the cases named (tests/tools/nesting_limits_test runs
the deep ones). Run with /usr/bin/python3 (it needs torch).
"""
import argparse
import json
import os
import sys
import threading

import torch

JSON_LIMIT = 1000  # fx_core/format/json_text.h: kMaxJsonDepth
PICKLE_LIMIT = 1000  # fx_core/io/pickle_rewriter.h: kMaxPickleDepth


def node(name, op, target, args, kwargs=None):
    return {"name": name, "op": op, "target": target, "args": args,
            "kwargs": kwargs or {}}


def placeholder(name):
    return node(name, "placeholder", name, [])


def output(value_json):
    # The output node written as text: its one argument may nest too deep for
    # the json module.
    return ('{"name": "output", "op": "output", "target": "output", '
            '"args": [' + value_json + '], "kwargs": {}}')


def write_graph(folder, node_texts, modules=None, weights=None):
    os.makedirs(folder, exist_ok=True)
    head = '{"format": "fx-graph", "version": 1, "nodes": [\n'
    tail = "]"
    if modules is not None:
        tail += ', "modules": ' + json.dumps(modules)
    if weights is not None:
        tail += ', "weights": ' + json.dumps(weights)
    tail += "}\n"
    with open(os.path.join(folder, "graph.fx.json"), "w") as f:
        f.write(head)
        for i, text in enumerate(node_texts):
            if i:
                f.write(",\n")
            f.write(text)
        f.write(tail)


def chain(folder, nodes):
    """N nodes: x, then add/mul/relu in turn, then the output."""
    steps = nodes - 2
    x = torch.linspace(-2.0, 2.0, 4)

    def texts():
        yield json.dumps(placeholder("x"))
        prev = "x"
        for i in range(steps):
            kind = i % 3
            name = f"{('add', 'mul', 'relu')[kind]}_{i}"
            ref = {"node": prev}
            if kind == 0:
                n = node(name, "call_function", "operator.add", [ref, 1.0])
            elif kind == 1:
                n = node(name, "call_method", "mul", [ref, 0.5])
            else:
                n = node(name, "call_function", "torch.relu", [ref])
            yield json.dumps(n)
            prev = name
        yield output(json.dumps({"node": prev}))

    write_graph(folder, texts())
    y = x.clone()
    for i in range(steps):  # what the graph computes, op by op
        kind = i % 3
        y = y + 1.0 if kind == 0 else (y.mul(0.5) if kind == 1 else
                                       torch.relu(y))
    torch.save([x], os.path.join(folder, "input.pt"))
    torch.save(y, os.path.join(folder, "expected.pt"))


def big_weights(folder):
    torch.manual_seed(0)
    layers = [torch.nn.Linear(4096, 4096) for _ in range(3)]
    modules, texts, weights = {}, [json.dumps(placeholder("x"))], {}
    prev = "x"
    for i, layer in enumerate(layers):
        name = f"fc{i}"
        modules[name] = {"type": "torch.nn.Linear",
                         "config": {"in_features": 4096,
                                    "out_features": 4096, "bias": True},
                         "training": False}
        weights[name + ".weight"] = layer.weight.detach()
        weights[name + ".bias"] = layer.bias.detach()
        texts.append(json.dumps(node(name, "call_module", name,
                                     [{"node": prev}])))
        prev = name
        if i < len(layers) - 1:
            relu = f"relu_{i}"
            texts.append(json.dumps(node(relu, "call_function", "torch.relu",
                                         [{"node": prev}])))
            prev = relu
    texts.append(output(json.dumps({"node": prev})))
    write_graph(folder, texts, modules, "model.weights.pt")
    torch.save(weights, os.path.join(folder, "model.weights.pt"))
    x = torch.randn(1, 4096)
    with torch.no_grad():
        y = x
        for i, layer in enumerate(layers):
            y = layer(y)
            if i < len(layers) - 1:
                y = torch.relu(y)
    torch.save([x], os.path.join(folder, "input.pt"))
    torch.save(y, os.path.join(folder, "expected.pt"))


def deep_graph(folder, lists, with_expected):
    """getitem(ARG, 0) where ARG is `lists` lists around {"node": "x"}."""
    x = torch.arange(3.0)
    arg = "[" * lists + '{"node": "x"}' + "]" * lists
    getitem = ('{"name": "getitem", "op": "call_function", '
               '"target": "operator.getitem", "args": [' + arg +
               ', 0], "kwargs": {}}')
    write_graph(folder, [json.dumps(placeholder("x")), getitem,
                         output('{"node": "getitem"}')])
    torch.save([x], os.path.join(folder, "input.pt"))
    if with_expected:
        value = x
        for _ in range(lists - 1):
            value = [value]
        on_big_stack(lambda: torch.save(value, os.path.join(
            folder, "expected.pt")))


def deep_chain(folder, nodes, lists):
    """`nodes` getitem nodes, each getitem(ARG, 0) with ARG `lists` lists
    around the previous node: the output nests (lists - 1) * nodes deep."""
    x = torch.arange(3.0)
    texts = [json.dumps(placeholder("x"))]
    prev = "x"
    for i in range(nodes):
        name = f"getitem_{i}"
        arg = "[" * lists + json.dumps({"node": prev}) + "]" * lists
        texts.append('{"name": "' + name + '", "op": "call_function", '
                     '"target": "operator.getitem", "args": [' + arg +
                     ', 0], "kwargs": {}}')
        prev = name
    texts.append(output(json.dumps({"node": prev})))
    write_graph(folder, texts)
    torch.save([x], os.path.join(folder, "input.pt"))


def on_big_stack(fn):
    """Runs fn() on a thread with a 1 GB stack (deep pickling recurses)."""
    sys.setrecursionlimit(10_000_000)
    threading.stack_size(1 << 30)
    errors = []

    def run():
        try:
            fn()
        except BaseException as e:  # reported on the calling thread
            errors.append(e)

    t = threading.Thread(target=run)
    t.start()
    t.join()
    if errors:
        raise errors[0]


def deep_input(folder, containers, with_expected):
    """Identity graph; input.pt is `containers` lists around a tensor."""
    x = torch.arange(3.0)
    write_graph(folder, [json.dumps(placeholder("x")),
                         output('{"node": "x"}')])
    value = x
    for _ in range(containers - 1):
        value = [value]
    on_big_stack(lambda: torch.save([value], os.path.join(folder,
                                                          "input.pt")))
    if with_expected:
        on_big_stack(lambda: torch.save(value, os.path.join(
            folder, "expected.pt")))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out_dir")
    parser.add_argument("--nodes", type=int, default=1_000_000)
    parser.add_argument("--deep", type=int, default=100_000)
    parser.add_argument("--only", default="",
                        help="comma-separated cases (default: every case)")
    args = parser.parse_args()
    nodes, deep = args.nodes, args.deep
    cases = {
        "chain_1m": lambda d: chain(d, nodes),
        "weights_200m": big_weights,
        # file, nodes, node, args: 4 levels; the {"node"} object is one more.
        "deep_limit": lambda d: deep_graph(d, JSON_LIMIT - 5, True),
        "deep_100k": lambda d: deep_graph(d, deep, False),
        "deep_runtime": lambda d: deep_chain(d, 200, JSON_LIMIT - 5),
        # The tensor's rebuild call and its argument tuple nest two levels.
        "deep_input_limit": lambda d: deep_input(d, PICKLE_LIMIT - 2, True),
        "deep_input_100k": lambda d: deep_input(d, deep, False),
    }
    chosen = args.only.split(",") if args.only else list(cases)
    for name in chosen:
        if name not in cases:
            parser.error(f"unknown case '{name}' ({', '.join(cases)})")
    for name in chosen:
        cases[name](os.path.join(args.out_dir, name))


if __name__ == "__main__":
    main()
