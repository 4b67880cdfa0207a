#!/usr/bin/python3
"""torch.fx's outputs for the docs' examples, the reference for
docs_examples_test.

    /usr/bin/python3 docs_cases.py TORCHFX_EXPORT_PY OUT_DIR [--resnet18]

For every case writes OUT_DIR/CASE/ with the traced model as an fx-graph
bundle (graph.fx.json, model.weights.pt, input.pt, expected.pt; see
tools/torchfx_export.py) and what torch.fx makes of it:
    transformed.code.py   gm.code after the case's transformation
    transformed.pt        its output on input.pt (when it computes something)
    shapes.txt            ShapeProp: one line per node, `name shape dtype`
"""

import copy
import importlib.util
import os
import sys

import torch
import torch.fx as fx
from torch.fx.experimental.optimization import fuse
from torch.fx.passes.shape_prop import ShapeProp

spec = importlib.util.spec_from_file_location("torchfx_export", sys.argv[1])
export = importlib.util.module_from_spec(spec)
spec.loader.exec_module(export)
OUT = sys.argv[2]
torch.manual_seed(0)


def write(case, name, text):
    with open(os.path.join(OUT, case, name), "w") as f:
        f.write(text)


def save_case(case, gm, inputs, transformed=None):
    d = os.path.join(OUT, case)
    export.export(gm, inputs, d)
    if transformed is not None:
        write(case, "transformed.code.py", transformed.code)
        with torch.no_grad():
            torch.save(transformed(*inputs), os.path.join(d, "transformed.pt"))


# The docs' Transformer example: swap torch.sigmoid and Tensor.neg.
class NegSigmSwapXformer(fx.Transformer):
    def call_function(self, target, args, kwargs):
        if target == torch.sigmoid:
            return torch.neg(*args, **kwargs)
        return super().call_function(target, args, kwargs)

    def call_method(self, target, args, kwargs):
        if target == "neg":
            call_self, *args_tail = args
            return call_self.sigmoid(*args_tail, **kwargs)
        return super().call_method(target, args, kwargs)


def neg_sigm_swap():
    def fn(x):
        return torch.sigmoid(x).neg()
    gm = fx.symbolic_trace(fn)
    save_case("neg_sigm_swap", gm, [torch.randn(3, 4)],
              NegSigmSwapXformer(gm).transform())


# A Transformer that changes nothing, on a module with a submodule, a
# parameter and a default argument.
class WithModules(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(4, 4)
        self.p = torch.nn.Parameter(torch.randn(4))

    def forward(self, x, y=2):
        a = self.lin(x) + self.p
        return torch.relu(a).clamp(min=0.0) * y


def transformer_identity():
    gm = fx.symbolic_trace(WithModules())
    save_case("transformer_identity", gm, [torch.randn(2, 4)],
              fx.Transformer(gm).transform())


# The docs' "replace one op": torch.add -> torch.mul by direct manipulation.
def replace_one_op():
    class M(torch.nn.Module):
        def forward(self, x, y):
            return torch.add(x, y), torch.add(x, y)
    gm = fx.symbolic_trace(M())
    save_case("replace_one_op", gm, [torch.randn(3), torch.randn(3)])
    for node in gm.graph.nodes:
        if node.op == "call_function" and node.target == torch.add:
            node.target = torch.mul
    gm.graph.lint()
    gm.recompile()
    write("replace_one_op", "transformed.code.py", gm.code)


# The docs' invert example: a new graph built backwards.
invert_mapping = {}
for a, b in [(torch.sin, torch.arcsin), (torch.cos, torch.arccos),
             (torch.tan, torch.arctan), (torch.exp, torch.log)]:
    invert_mapping[a] = b
    invert_mapping[b] = a


def invert(model):
    fx_model = fx.symbolic_trace(model)
    new_graph = fx.Graph()
    env = {}
    for node in reversed(fx_model.graph.nodes):
        if node.op == "call_function":
            new_node = new_graph.call_function(invert_mapping[node.target],
                                               (env[node.name],))
            env[node.args[0].name] = new_node
        elif node.op == "output":
            new_node = new_graph.placeholder(node.name)
            env[node.args[0].name] = new_node
        elif node.op == "placeholder":
            new_graph.output(env[node.name])
        else:
            raise RuntimeError("Not implemented")
    new_graph.lint()
    return fx.GraphModule(fx_model, new_graph)


def invert_case():
    def f(x):
        return torch.exp(torch.tan(x))
    x = torch.rand(3) * 0.5
    inverted = invert(f)
    save_case("invert", fx.symbolic_trace(f), [x])
    write("invert", "transformed.code.py", inverted.code)


# The docs' decompose: F.relu retraced as (x > 0) * x through a
# GraphAppendingTracer.
def relu_decomposition(x):
    return (x > 0) * x


decomposition_rules = {torch.nn.functional.relu: relu_decomposition}


def decompose(model):
    graph = fx.Tracer().trace(model)
    new_graph = fx.Graph()
    env = {}
    tracer = torch.fx.proxy.GraphAppendingTracer(new_graph)
    for node in graph.nodes:
        if node.op == "call_function" and node.target in decomposition_rules:
            proxy_args = [fx.Proxy(env[x.name], tracer)
                          if isinstance(x, fx.Node) else x for x in node.args]
            output_proxy = decomposition_rules[node.target](*proxy_args)
            env[node.name] = output_proxy.node
        else:
            env[node.name] = new_graph.node_copy(node, lambda x: env[x.name])
    return fx.GraphModule(model, new_graph)


def decompose_case():
    class M(torch.nn.Module):
        def forward(self, x):
            y = torch.nn.functional.relu(x)
            return torch.neg(y) + torch.nn.functional.relu(y * 2)
    model = M()
    save_case("decompose", fx.symbolic_trace(model), [torch.randn(3, 4)],
              decompose(model))


# Conv/BatchNorm fusion (torch.fx.experimental.optimization.fuse, the docs'
# fuser) and shape propagation, on a small net with random statistics and on
# torchvision's resnet18.
class ConvBnNet(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = torch.nn.Conv2d(3, 8, 3, padding=1, bias=False)
        self.bn1 = torch.nn.BatchNorm2d(8)
        self.relu = torch.nn.ReLU()
        self.conv2 = torch.nn.Conv2d(8, 8, 3, padding=1)
        self.bn2 = torch.nn.BatchNorm2d(8)
        self.conv3 = torch.nn.Conv2d(8, 4, 1)

    def forward(self, x):
        y = self.relu(self.bn1(self.conv1(x)))
        z = self.bn2(self.conv2(y))
        return self.conv3(z + y).flatten(1).sum(1)


def randomize_batchnorm(model):
    for m in model.modules():
        if isinstance(m, torch.nn.modules.batchnorm._BatchNorm):
            m.running_mean.uniform_(-0.5, 0.5)
            m.running_var.uniform_(0.5, 2.0)
            with torch.no_grad():
                m.weight.uniform_(0.5, 1.5)
                m.bias.uniform_(-0.5, 0.5)
    return model.eval()


def fusion_case(name, model, shape):
    model = randomize_batchnorm(model)
    gm = fx.symbolic_trace(model)
    x = torch.randn(*shape)
    save_case(name, gm, [x], fuse(model))
    ShapeProp(gm).propagate(x)
    lines = []
    for node in gm.graph.nodes:
        meta = node.meta.get("tensor_meta")
        if hasattr(meta, "shape"):
            lines.append(f"{node.name} {list(meta.shape)} {meta.dtype}")
        else:
            lines.append(f"{node.name} -")
    write(name, "shapes.txt", "\n".join(lines) + "\n")


def main():
    neg_sigm_swap()
    transformer_identity()
    replace_one_op()
    invert_case()
    decompose_case()
    fusion_case("conv_bn_net", ConvBnNet(), (2, 3, 8, 8))
    if "--resnet18" in sys.argv:
        import torchvision
        fusion_case("resnet18", torchvision.models.resnet18(), (1, 3, 64, 64))


if __name__ == "__main__":
    main()
