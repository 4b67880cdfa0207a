#!/usr/bin/python3
"""Python twins of the C++ functions in make_fx_test.cc, captured by make_fx.

    make_fx_twins.py OUT_DIR

writes OUT_DIR/CASE/graph.txt (print(gm.graph), in the current docs'
num_users form) and OUT_DIR/CASE/code.py (gm.code) for every case: the
goldens fx::make_fx must reproduce. Shapes match the C++ example inputs;
weights do not matter (only the graph is compared).
"""
import os
import sys

import torch
import torch.nn.functional as F
from torch._decomp import get_decompositions
from torch.fx.experimental.proxy_tensor import make_fx


def relu_add(arg0, arg1):
    c = torch.add(arg0, arg1)
    d = torch.relu(c)
    return [torch.mul(d, arg1), c]


LINEAR = torch.nn.Linear(4, 3)


def linear(arg0):
    return [torch.relu(LINEAR(arg0))]


class SmallCnn(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 4, 3)
        self.bn = torch.nn.BatchNorm2d(4)
        self.fc = torch.nn.Linear(4 * 3 * 3, 5)

    def forward(self, x):
        x = torch.relu(self.bn(self.conv(x)))
        x = F.max_pool2d(x, 2, 2)
        x = torch.flatten(x, 1)
        return self.fc(x)


CNN = SmallCnn().eval()
CNN_META = SmallCnn().eval().to("meta")
CNN_TRAIN = SmallCnn().train()


def cnn(arg0):
    return [CNN(arg0)]


def cnn_meta(arg0):
    return [CNN_META(arg0)]


def cnn_train(arg0):
    return [CNN_TRAIN(arg0)]


NO_BIAS_CONV = torch.nn.Conv2d(3, 4, 3, stride=2, padding=1, bias=False)
NO_BIAS_LINEAR = torch.nn.Linear(4, 2, bias=False)


def no_bias(arg0):
    y = NO_BIAS_CONV(arg0)
    return [NO_BIAS_LINEAR(y.mean([2, 3]))]


def split_unbind(arg0):
    s = torch.split(arg0, 2, 1)
    u = torch.unbind(arg0, 0)
    return [s[1], u[0], torch.add(s[0], s[2])]


def in_place(arg0, arg1):
    y = torch.mul(arg0, arg1)
    y.add_(arg1)
    y.relu_()
    return [y]


ATTRS = torch.nn.Linear(4, 4)
ATTRS.register_buffer("scale", torch.ones(4))


def attributes(arg0):
    # A parameter used twice and a buffer used directly.
    w = torch.add(ATTRS.weight, ATTRS.weight)
    y = torch.mul(torch.matmul(arg0, w), ATTRS.scale)
    return [y, torch.mul(ATTRS.scale, ATTRS.scale)]


def scalars(arg0):
    y = torch.relu(arg0)
    y.mul_(3)
    return [arg0 + 2, arg0 * 0.5, torch.sub(arg0, 1, alpha=2),
            torch.div(arg0, 2, rounding_mode="floor"), y,
            torch.add(arg0, arg0, alpha=2)]


def decomposed(arg0, arg1):
    return [torch.relu(torch.add(arg0, arg1)), torch.relu(arg1)]


def views(arg0):
    y = torch.clone(arg0)
    y.select(0, 0).mul_(2)
    return [arg0.view(-1), arg0.transpose(0, 1), arg0.select(0, 1),
            arg0.narrow(1, 1, 2), arg0.unsqueeze(0), y,
            arg0.expand(2, 3, 4), arg0.reshape(4, 3)]


def factories(arg0):
    return [torch.zeros(2, 2), torch.ones(3, dtype=torch.float64),
            torch.full((2,), 1.5), torch.zeros_like(arg0),
            torch.add(torch.ones_like(arg0), arg0)]


GROUP_NORM_META = torch.nn.GroupNorm(2, 4).to("meta")


def meta_ops(arg0, arg1):
    # Operators LibTorch's C++ build has no meta kernel for.
    positive = arg0 > 0
    doubled = arg0 * 2
    return [F.hardtanh(arg0, 0.0, 6.0), F.hardswish(arg0),
            GROUP_NORM_META(arg0), F.adaptive_avg_pool2d(arg0, 3),
            torch.index_select(arg0, 1, arg1),
            torch.where(positive, arg0, doubled)]


def front_end(arg0):
    # What C++ spells with several calls: `2 - x`, torch::tensor(...).
    return [2 - arg0, 2 / arg0, 2 % arg0, arg0 + torch.tensor([1.0, 2.0]),
            arg0 * torch.tensor([[1.0, 2.0], [3.0, 4.0]]),
            arg0 + torch.tensor(3.0), torch.ones(2, 2) * arg0,
            arg0 - torch.tensor([5.0, 6.0]),
            torch.empty(2, 2).fill_(1.5) * arg0,
            torch.empty_like(arg0, memory_format=torch.preserve_format)
            .fill_(2).mul_(arg0)]


def pooling(arg0):
    return [F.max_pool2d(arg0, 2), torch.nn.MaxPool2d(2)(arg0),
            F.avg_pool2d(arg0, 2), torch.nn.AvgPool2d(2)(arg0)]


CORE_LINEAR = torch.nn.Linear(4, 4)


def core(arg0):
    y = CORE_LINEAR(arg0)
    return [F.gelu(y), F.gelu(y, approximate="tanh"), F.silu(y),
            F.hardtanh(y, 0.0, 6.0), F.hardswish(y), F.hardsigmoid(y),
            F.leaky_relu(y, 0.1), F.elu(y), torch.softmax(y, -1),
            torch.log_softmax(y, -1), F.mish(y), F.softplus(y),
            F.softplus(y, beta=2), torch.relu(y)]


aten = torch.ops.aten
CORE_OPS = [aten.addmm, aten.gelu, aten.silu, aten.hardtanh, aten.hardswish,
            aten.hardsigmoid, aten.leaky_relu, aten.elu, aten._softmax,
            aten._log_softmax, aten.t, aten.mish, aten.softplus, aten.relu]

def opmath(arg0, arg1):
    # The decompositions pw_cast_for_opmath wraps (half and bfloat16 computed
    # in float), and _softmax / _log_softmax's own conversions.
    return [torch.addmm(arg0, arg0, arg1), F.silu(arg0), F.hardswish(arg0),
            F.hardsigmoid(arg0), F.elu(arg0), torch.softmax(arg0, -1),
            torch.log_softmax(arg0, -1), arg0.t()]


def dropout_meta(arg0):
    a, m = torch.native_dropout(arg0, 0.5, True)
    return [a, m, F.dropout(arg0, 0.5, True)]


DECOMPOSED = {torch.ops.aten.relu.default: lambda x: torch.clamp_min(x, 0)}

CASES = {
    "opmath_half": (opmath, lambda: [torch.randn(3, 3, dtype=torch.float16),
                                     torch.randn(3, 3, dtype=torch.float16)]),
    "opmath_bf16": (opmath, lambda: [torch.randn(3, 3, dtype=torch.bfloat16),
                                     torch.randn(3, 3, dtype=torch.bfloat16)]),
    "dropout_meta": (dropout_meta, lambda: [torch.randn(2, 3, device="meta")]),
    "relu_add": (relu_add, lambda: [torch.randn(3, 4), torch.randn(3, 4)]),
    "linear": (linear, lambda: [torch.randn(2, 4)]),
    "cnn": (cnn, lambda: [torch.randn(1, 3, 8, 8)]),
    "cnn_train": (cnn_train, lambda: [torch.randn(2, 3, 8, 8)]),
    "cnn_meta": (cnn_meta, lambda: [torch.randn(1, 3, 8, 8, device="meta")]),
    "no_bias": (no_bias, lambda: [torch.randn(1, 3, 8, 8)]),
    "split_unbind": (split_unbind, lambda: [torch.randn(3, 6)]),
    "in_place": (in_place, lambda: [torch.randn(3, 4), torch.randn(3, 4)]),
    "attributes": (attributes, lambda: [torch.randn(2, 4)]),
    "scalars": (scalars, lambda: [torch.randn(3, 4)]),
    "views": (views, lambda: [torch.randn(3, 4)]),
    "factories": (factories, lambda: [torch.randn(2)]),
    "core": (core, lambda: [torch.randn(3, 4)]),
    "meta_ops": (meta_ops, lambda: [torch.randn(2, 4, 8, 8, device="meta"),
                                    torch.tensor([0, 2], device="meta")]),
    "front_end": (front_end, lambda: [torch.randn(2, 2)]),
    "pooling": (pooling, lambda: [torch.randn(1, 2, 4, 4)]),
    "decomposed": (decomposed, lambda: [torch.randn(3, 4), torch.randn(3, 4)]),
}


def resnet18_cases():
    """torchvision's resnet18 (eval), when torchvision is installed."""
    try:
        import torchvision
    except ImportError:
        return {}
    model = torchvision.models.resnet18().eval()
    return {"resnet18": (lambda arg0: [model(arg0)],
                         lambda: [torch.randn(1, 3, 64, 64)])}


def main(out_dir):
    CASES.update(resnet18_cases())
    for name, (fn, inputs) in CASES.items():
        for mode, guard in (("grad", torch.enable_grad),
                            ("no_grad", torch.no_grad),
                            ("inference_mode", torch.inference_mode)):
            with guard():
                table = {"decomposed": DECOMPOSED,
                         "core": get_decompositions(CORE_OPS),
                         "opmath_half": get_decompositions(CORE_OPS),
                         "opmath_bf16": get_decompositions(CORE_OPS)}.get(name)
                gm = make_fx(fn, decomposition_table=table)(*inputs())
            case_dir = os.path.join(out_dir, name + "." + mode)
            os.makedirs(case_dir, exist_ok=True)
            with open(os.path.join(case_dir, "graph.txt"), "w") as f:
                f.write(str(gm.graph).replace("[#users=", "[num_users=") + "\n")
            with open(os.path.join(case_dir, "code.py"), "w") as f:
                f.write(gm.code)


if __name__ == "__main__":
    main(sys.argv[1])
