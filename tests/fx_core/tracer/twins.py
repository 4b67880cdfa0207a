#!/usr/bin/python3
"""Python twins of the C++ modules in tracer_test.cc, traced by torch.fx.

    twins.py OUT_DIR

writes OUT_DIR/CASE/graph.txt (print(gm.graph), in the current docs'
num_users form) and OUT_DIR/CASE/code.py (gm.code) for every case. These are
the goldens the C++ tracer must reproduce.
"""
import os
import sys

import torch
import torch.fx as fx
import torch.nn.functional as F


def my_custom_function(x, y):
    return x * x + y * y


my_custom_function.__module__ = "mylib"
fx.wrap("my_custom_function")


def scale_add(x, y):
    return x * 2 + y


scale_add.__module__ = "mylib"


class UsesScaleAdd(torch.nn.Module):
    def forward(self, x, y):
        return scale_add(x, y).relu()


class Operators(torch.nn.Module):
    def forward(self, x, y):
        a = x + y
        b = a - 1
        c = 2 * b
        d = c / y
        e = d ** 2
        f = e @ y
        g = -f
        h = 1 - g
        i = h // 3
        j = h % 2
        k = x > y
        l = x <= 0.5
        m = x == y
        n = 1.5 / x
        return (i, j, k, l, m, n)


class Indexing(torch.nn.Module):
    def forward(self, x):
        a = x[0]
        b = x[1:3]
        c = x[:, 1]
        d = x[..., 0]
        e = x[None]
        f = x[:, ::2]
        return [a, b, c, d, e, f]


class Methods(torch.nn.Module):
    def forward(self, x):
        a = x.relu()
        b = a.clamp(min=0.0, max=1.0)
        c = b.view(-1, 4)
        d = c.flatten(1)
        n = d.size(0)
        s = d.shape
        e = d.reshape(s[0], -1)
        f = e.sum(dim=0, keepdim=True)
        g = f.softmax(-1)
        h = g.unsqueeze(0).transpose(0, 1)
        i = h.permute(1, 0, 2)
        j = i.to(torch.float32)
        return j * n + x.dim()


class Functions(torch.nn.Module):
    def forward(self, x, y):
        a = torch.relu(x)
        b = torch.sum(a, dim=-1)
        # `values, indices = torch.topk(x, 2)` raises "Proxy object cannot be
        # iterated" with torch 1.13 on Python 3.11 (its bytecode check for
        # unpacking predates 3.11); indexing is what unpacking records.
        t = torch.topk(x, 2)
        values, indices = t[0], t[1]
        c = torch.cat([x, y], 1)
        d = torch.flatten(c, 1)
        e = torch.stack([x, y])
        f = F.relu(x)
        g = F.softmax(y, dim=-1)
        h = F.dropout(g, p=0.1, training=False)
        return b, values, indices, d, e, f + h


class Functional(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.w = torch.nn.Parameter(torch.rand(4, 4))

    def forward(self, x):
        a = F.linear(x, self.w)
        b = F.relu6(a)
        c = F.silu(b)
        d = F.hardswish(c)
        e = F.hardsigmoid(d)
        f = F.log_softmax(e, dim=1)
        g = F.layer_norm(f, (4,))
        h = F.gelu(g)
        i = F.max_pool2d(h.view(1, 1, 2, 8), 2)
        j = F.avg_pool2d(i, 1)
        k = F.conv2d(j, torch.ones(1, 1, 1, 1))
        return F.leaky_relu(k, 0.1)


class Constants(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.rand(4))
        self.register_buffer("buf", torch.zeros(4))

    def forward(self, x):
        a = x + self.weight
        b = a * self.weight
        c = b + self.buf
        d = c - self.buf
        return d + torch.ones(4)


class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = torch.nn.Linear(4, 4)

    def forward(self, x):
        return self.linear(x).relu() + x


class Containers(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.seq = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.ReLU(),
                                       Block())
        self.blocks = torch.nn.ModuleList([Block(), torch.nn.Linear(4, 4)])
        self.heads = torch.nn.ModuleDict({"a": torch.nn.Linear(4, 2),
                                          "b": Block()})

    def forward(self, x):
        x = self.seq(x)
        for b in self.blocks:
            x = b(x)
        return self.heads["a"](self.heads["b"](x))


class Leaves(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = torch.nn.Embedding(10, 8)
        self.conv1 = torch.nn.Conv1d(4, 8, 3, padding=1)
        self.bn = torch.nn.BatchNorm1d(8)
        self.ln = torch.nn.LayerNorm(8)
        self.gn = torch.nn.GroupNorm(2, 8)
        self.act = torch.nn.GELU()
        self.silu = torch.nn.SiLU()
        self.drop = torch.nn.Dropout(0.1)
        self.pool = torch.nn.MaxPool1d(2)
        self.flat = torch.nn.Flatten()
        self.conv2 = torch.nn.Conv2d(1, 2, 3)
        self.avg = torch.nn.AdaptiveAvgPool2d(1)

    def forward(self, x, idx):
        e = self.emb(idx)
        h = self.conv1(x)
        h = self.bn(h)
        h = self.ln(h.transpose(1, 2)).transpose(1, 2)
        h = self.gn(h)
        h = self.silu(self.act(h))
        h = self.drop(h) + e.transpose(1, 2)
        h = self.pool(h)
        h = self.flat(h)
        img = self.avg(self.conv2(h.view(h.size(0), 1, 4, -1)))
        return self.flat(img)


class Concrete(torch.nn.Module):
    def forward(self, x, flag=None, n=3):
        if flag is None:
            return x + n
        return x


class ConcreteBool(torch.nn.Module):
    def forward(self, x, flag):
        if flag:
            return x
        return x * 2


class ConcretePH(torch.nn.Module):
    def forward(self, x, y):
        return x + y


class Wrapped(torch.nn.Module):
    def forward(self, x, y):
        return my_custom_function(x, y) + 1


class MySpecialSubmodule(torch.nn.Module):
    def forward(self, x):
        return torch.neg(x)


class LeafTracerModule(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = torch.nn.Linear(3, 4)
        self.submod = MySpecialSubmodule()

    def forward(self, x):
        return self.submod(self.linear(x))


class SpecialLeafTracer(fx.Tracer):
    def is_leaf_module(self, m, qualname):
        return isinstance(m, MySpecialSubmodule) or super().is_leaf_module(
            m, qualname)


class ParamOrder(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.rand(4))
        self.register_buffer("buf", torch.ones(4))

    def forward(self, x):
        w = self.weight
        b = self.buf
        y = x.relu()
        return y * w + b


class Unpack(torch.nn.Module):
    def forward(self, x):
        t = torch.topk(x, 2)
        values, indices = t[0], t[1]
        return values * 2, indices


class ReluModule(torch.nn.Module):
    def forward(self, x):
        return F.relu(x) + 1


def relu_decomposition(x):
    return (x > 0) * x


def decompose(model):
    """The torch.fx docs' decomposition example (Proxy/Retracing)."""
    decomposition_rules = {F.relu: relu_decomposition}
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


def f(x, flag):
    if flag:
        return x
    else:
        return x * 2


CASES = {
    "autowrap_traced_through": lambda: fx.symbolic_trace(UsesScaleAdd()),
    "autowrap_recorded": lambda: fx.GraphModule(
        UsesScaleAdd(),
        fx.Tracer(autowrap_functions=(scale_add,)).trace(UsesScaleAdd())),
    "decomposition": lambda: decompose(ReluModule()),
    "function": lambda: fx.symbolic_trace(f, concrete_args={"flag": False}),
    "operators": lambda: fx.symbolic_trace(Operators()),
    "indexing": lambda: fx.symbolic_trace(Indexing()),
    "methods": lambda: fx.symbolic_trace(Methods()),
    "functions": lambda: fx.symbolic_trace(Functions()),
    "functional": lambda: fx.symbolic_trace(Functional()),
    "constants": lambda: fx.symbolic_trace(Constants()),
    "leaves": lambda: fx.symbolic_trace(Leaves()),
    "containers": lambda: fx.symbolic_trace(Containers()),
    "concrete": lambda: fx.symbolic_trace(
        Concrete(), concrete_args={"flag": None, "n": 3}),
    "concrete_bool": lambda: fx.symbolic_trace(
        ConcreteBool(), concrete_args={"flag": True}),
    "concrete_ph": lambda: fx.symbolic_trace(
        ConcretePH(), concrete_args={"y": fx.PH}),
    "wrapped": lambda: fx.symbolic_trace(Wrapped()),
    "leaf_tracer": lambda: fx.GraphModule(
        LeafTracerModule(), SpecialLeafTracer().trace(LeafTracerModule())),
    "param_order": lambda: fx.symbolic_trace(ParamOrder()),
    "unpack": lambda: fx.symbolic_trace(Unpack()),
}


def main(out_dir):
    for name, make in CASES.items():
        gm = make()
        os.makedirs(os.path.join(out_dir, name), exist_ok=True)
        with open(os.path.join(out_dir, name, "graph.txt"), "w") as f:
            f.write(str(gm.graph).replace("[#users=", "[num_users=") + "\n")
        with open(os.path.join(out_dir, name, "code.py"), "w") as f:
            f.write(gm.code)


if __name__ == "__main__":
    main(sys.argv[1])
