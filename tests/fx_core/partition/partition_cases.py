#!/usr/bin/python3
"""torch.fx's CapabilityBasedPartitioner and fuse_by_partitions, the reference
for capability_partitioner_test and fuse_partitions_test.

    /usr/bin/python3 partition_cases.py TORCHFX_EXPORT_PY OUT_DIR [CASE...]

For every case (torchvision's resnet18 traced and captured by make_fx, a
transformer-like model
(transformer_block.py), random DAGs made from a seed) writes OUT_DIR/CASE/:
    graph.fx.json     the graph (tools/torchfx_export.py's format)
    rule.json         the support rule: supported call_function targets (as
                      torch.fx's get_node_target names them; an aten packet
                      stands for all its overloads), call_method names,
                      call_module types, whether get_attr nodes are
                      supported, allows_single_node_partition
    partitions.json   {"partitions": [[node names...], ...] in torch.fx's
                      order, "ambiguous": true when two user partitions
                      depended on each other both ways (torch.fx's answer
                      then follows Python's set order)}
    fused.txt         print(gm.graph) after fuse_by_partitions of those
                      partitions, each given in graph order
    fused_K.txt       print(gm.fused_K.graph)
"""

import importlib.util
import json
import operator
import os
import random
import re
import sys

import torch
import torch.fx
from torch.fx.passes.infra.partitioner import CapabilityBasedPartitioner
from torch.fx.passes.operator_support import OperatorSupportBase
from torch.fx.passes.tools_common import CALLABLE_NODE_OPS, get_node_target
from torch.fx.passes.utils.fuser_utils import fuse_by_partitions



def load(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


export = load("torchfx_export", sys.argv[1])
blocks = load("transformer_block", os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "transformer_block.py"))


class Rule(OperatorSupportBase):
    def __init__(self, rule):
        self.rule = rule

    def is_node_supported(self, submodules, node):
        if node.op not in CALLABLE_NODE_OPS:
            return node.op == "get_attr" and self.rule["get_attr"]
        target = get_node_target(submodules, node)
        if node.op == "call_function":
            functions = self.rule["functions"]
            return target in functions or (
                target.startswith("torch.ops.")
                and target.rsplit(".", 1)[0] in functions)
        if node.op == "call_method":
            return target in self.rule["methods"]
        return target in self.rule["module_types"]


def watch_ambiguity():
    """Makes the partitioner record a pair of partitions that depend on each
    other both ways."""
    cls = CapabilityBasedPartitioner
    node_depends_on = cls._CapabilityBasedPartitioner__node_depends_on
    original = cls._CapabilityBasedPartitioner__partition_depends_on
    state = {"ambiguous": False}

    def partition_depends_on(self, a, b):
        found = {node_depends_on(self, x, y) for x in a.nodes for y in b.nodes}
        if 1 in found and -1 in found:
            state["ambiguous"] = True
        return original(self, a, b)

    cls._CapabilityBasedPartitioner__partition_depends_on = partition_depends_on
    return state


AMBIGUITY = watch_ambiguity()


def graph_text(graph):
    return re.sub(r"\[#users=", "[num_users=", str(graph)) + "\n"


def write_case(out_dir, name, gm, rule):
    case = os.path.join(out_dir, name)
    os.makedirs(case, exist_ok=True)
    document, weights = export.graph_document(gm)
    if weights:
        document["weights"] = "model.weights.pt"
        torch.save(weights, os.path.join(case, "model.weights.pt"))
    with open(os.path.join(case, "graph.fx.json"), "w") as f:
        json.dump(document, f, indent=1)
    with open(os.path.join(case, "rule.json"), "w") as f:
        json.dump(rule, f, indent=1)
    AMBIGUITY["ambiguous"] = False
    partitioner = CapabilityBasedPartitioner(
        gm, Rule(rule), allows_single_node_partition=rule["allows_single"])
    partitions = partitioner.propose_partitions()
    order = {n: i for i, n in enumerate(gm.graph.nodes)}
    lists = [sorted(p.nodes, key=order.get) for p in partitions]
    with open(os.path.join(case, "partitions.json"), "w") as f:
        json.dump({"partitions": [[n.name for n in p] for p in lists],
                   "ambiguous": AMBIGUITY["ambiguous"]}, f, indent=1)
    try:
        fused = fuse_by_partitions(gm, lists)
    except (AssertionError, RuntimeError) as e:
        with open(os.path.join(case, "fuse_error.txt"), "w") as f:
            f.write(f"{type(e).__name__}: {e}\n")
        return
    with open(os.path.join(case, "fused.txt"), "w") as f:
        f.write(graph_text(fused.graph))
    for k in range(len(lists)):
        with open(os.path.join(case, f"fused_{k}.txt"), "w") as f:
            f.write(graph_text(getattr(fused, f"fused_{k}").graph))


def rule(functions=(), methods=(), module_types=(), get_attr=False,
         allows_single=False):
    return {"functions": list(functions), "methods": list(methods),
            "module_types": list(module_types), "get_attr": get_attr,
            "allows_single": allows_single}


CONV_BN_RELU = ["torch.nn.modules.conv.Conv2d",
                "torch.nn.modules.batchnorm.BatchNorm2d",
                "torch.nn.modules.activation.ReLU"]


def resnet_cases(out_dir):
    import torchvision.models
    torch.manual_seed(0)
    model = torchvision.models.resnet18().eval()
    gm = torch.fx.symbolic_trace(model)
    write_case(out_dir, "resnet18_all", torch.fx.symbolic_trace(model),
               rule(["_operator.add", "torch.flatten"], [],
                    CONV_BN_RELU + ["torch.nn.modules.pooling.MaxPool2d",
                                    "torch.nn.modules.linear.Linear"]))
    write_case(out_dir, "resnet18_no_bn", torch.fx.symbolic_trace(model),
               rule(["_operator.add"], [], [CONV_BN_RELU[0], CONV_BN_RELU[2]],
                    allows_single=True))
    write_case(out_dir, "resnet18_no_add", gm,
               rule([], [], CONV_BN_RELU, allows_single=True))


def resnet_aten_cases(out_dir):
    import torchvision.models
    from torch.fx.experimental.proxy_tensor import make_fx
    torch.manual_seed(0)
    model = torchvision.models.resnet18().eval()
    with torch.no_grad():
        gm = make_fx(model)(torch.rand(1, 3, 64, 64))
    write_case(out_dir, "resnet18_aten", gm, rule(
        ["torch.ops.aten.convolution", "torch.ops.aten.native_batch_norm",
         "_operator.getitem", "torch.ops.aten.relu_",
         "torch.ops.aten.add_.Tensor", "torch.ops.aten.t.default",
         "torch.ops.aten.addmm"], get_attr=True))
    with torch.no_grad():
        gm = make_fx(model)(torch.rand(1, 3, 64, 64))
    write_case(out_dir, "resnet18_aten_no_bn", gm, rule(
        ["torch.ops.aten.convolution", "torch.ops.aten.relu_.default",
         "torch.ops.aten.add_", "_operator.getitem"], get_attr=True))


def transformer_cases(out_dir):
    torch.manual_seed(0)
    gm = torch.fx.symbolic_trace(blocks.Transformer().eval())
    linear = "torch.nn.modules.linear.Linear"
    norm = "torch.nn.modules.normalization.LayerNorm"
    write_case(out_dir, "transformer_no_softmax", torch.fx.symbolic_trace(
        blocks.Transformer().eval()), rule(
        ["torch.matmul", "_operator.add", "_operator.truediv",
         "_operator.getitem", "torch._C._nn.gelu"],
        ["chunk", "transpose"], [linear, norm]))
    write_case(out_dir, "transformer_matmul_only", gm, rule(
        ["torch.matmul", "_operator.truediv", "torch.softmax",
         "_operator.getitem"], ["transpose"], []))


FUNCTIONS = ["_operator.add", "_operator.mul", "torch.relu", "torch.sigmoid",
             "torch.tanh", "torch.chunk", "_operator.getitem", "torch.cat"]


def random_dag(seed, size):
    """A graph of `size` ops over a few placeholders: inputs mostly recent
    values, some far; tuple-returning chunks read by getitem."""
    rng = random.Random(seed)
    g = torch.fx.Graph()
    values = [g.placeholder(f"x{i}") for i in range(rng.randint(1, 3))]

    def pick():
        if rng.random() < 0.75:
            return rng.choice(values[-6:])
        return rng.choice(values)

    chunks = []
    for _ in range(size):
        kind = rng.random()
        if kind < 0.3:
            op = rng.choice([operator.add, operator.mul])
            values.append(g.call_function(op, (pick(), pick())))
        elif kind < 0.6:
            op = rng.choice([torch.relu, torch.sigmoid, torch.tanh])
            values.append(g.call_function(op, (pick(),)))
        elif kind < 0.7:
            values.append(g.call_method("add", (pick(), pick())))
        elif kind < 0.8 and chunks:
            values.append(g.call_function(torch.cat, (rng.choice(chunks),)))
        elif kind < 0.9:
            values.append(g.call_function(torch.cat, ([pick(), pick()],)))
        else:
            c = g.call_function(torch.chunk, (pick(), 2))
            chunks.append(c)
            for i in range(rng.choice([1, 2])):
                values.append(g.call_function(operator.getitem, (c, i)))
    sinks = [v for v in values if not v.users]
    g.output(tuple(sinks) if len(sinks) > 1 else sinks[0])
    return torch.fx.GraphModule(torch.nn.Module(), g)


def random_cases(out_dir, count=40):
    for seed in range(count):
        rng = random.Random(1000 + seed)
        functions = [f for f in FUNCTIONS if rng.random() < 0.65]
        methods = ["add"] if rng.random() < 0.5 else []
        write_case(out_dir, f"random_{seed}", random_dag(seed, 60 + 4 * seed),
                   rule(functions, methods, [],
                        allows_single=rng.random() < 0.5))


def main():
    out_dir = sys.argv[2]
    wanted = set(sys.argv[3:])
    groups = {"resnet": resnet_cases, "resnet_aten": resnet_aten_cases,
              "transformer": transformer_cases, "random": random_cases}
    for name, make in groups.items():
        if not wanted or name in wanted:
            make(out_dir)


if __name__ == "__main__":
    main()
