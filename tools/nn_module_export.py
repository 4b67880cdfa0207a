#!/usr/bin/python3
"""Exports one-module graphs of every torch.nn module class as bundles.

    /usr/bin/python3 tools/nn_module_export.py -o DIR [--seed 0]

For each case of CASES below (a torch.nn constructor call, the shapes of its
inputs, the mode), the graph torch.fx records when a model calls that leaf
module (placeholders, one call_module node, output) is written by
tools/torchfx_export.py's export() into DIR/cases/NNNNN/: graph.fx.json with
the module's `config` (its constructor arguments, as torchfx_export writes
them for any module), model.weights.pt with its parameters and buffers
(random, so a wrong parameter layout cannot match by accident), input.pt and
PyTorch eager's result expected.pt, computed after torch.manual_seed(SEED).
DIR/index.json has opinfo_export.py's layout, so tools/opinfo_run runs and
compares the cases the same way ("op" is the module class, "variant" the
mode).

A module whose case cannot be exported is kept in the index with the reason.
The torch.nn classes no case mentions are listed in the index under
"uncovered", so a new class in torch.nn shows up there.
Needs Debian's /usr/bin/python3 with python3-torch.
"""

import argparse
import json
import os
import shutil
import sys
import time

import torch
import torch.fx
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from torchfx_export import export  # noqa: E402

# (constructor, input shapes or callables making the inputs, training).
# Integer inputs are written as ("long", shape, high).
CASES = [
    ("nn.ELU(alpha=0.7)", [(2, 3, 4)], False),
    ("nn.CELU(alpha=1.3)", [(2, 3, 4)], False),
    ("nn.SELU()", [(2, 3, 4)], False),
    ("nn.GLU(dim=1)", [(2, 4, 3)], False),
    ("nn.Hardtanh(-0.5, 0.75)", [(2, 3, 4)], False),
    ("nn.Hardshrink(0.3)", [(2, 3, 4)], False),
    ("nn.Softshrink(0.3)", [(2, 3, 4)], False),
    ("nn.LogSigmoid()", [(2, 3, 4)], False),
    ("nn.Softplus(beta=2, threshold=10)", [(2, 3, 4)], False),
    ("nn.LogSoftmax(dim=1)", [(2, 3, 4)], False),
    ("nn.Softmin(dim=-1)", [(2, 3, 4)], False),
    ("nn.Softmax2d()", [(2, 3, 4, 5)], False),
    ("nn.Softsign()", [(2, 3, 4)], False),
    ("nn.Tanhshrink()", [(2, 3, 4)], False),
    ("nn.Threshold(0.1, 20.0)", [(2, 3, 4)], False),
    ("nn.RReLU(0.1, 0.3)", [(2, 3, 4)], False),
    ("nn.RReLU(0.1, 0.3)", [(2, 3, 4)], True),
    ("nn.PReLU()", [(2, 3, 4)], False),
    ("nn.PReLU(num_parameters=3)", [(2, 3, 4)], False),
    ("nn.Dropout1d(0.4)", [(2, 3, 8)], True),
    ("nn.Dropout2d(0.4)", [(2, 3, 4, 4)], True),
    ("nn.Dropout3d(0.4)", [(2, 3, 2, 4, 4)], True),
    ("nn.Dropout3d(0.4)", [(3, 2, 4, 4)], True),
    ("nn.AlphaDropout(0.3)", [(2, 3, 4)], True),
    ("nn.FeatureAlphaDropout(0.3)", [(2, 3, 4, 4)], True),
    ("nn.ReflectionPad1d(2)", [(2, 3, 5)], False),
    ("nn.ReflectionPad2d((1, 2, 0, 1))", [(2, 3, 4, 5)], False),
    ("nn.ReflectionPad3d(1)", [(1, 2, 3, 4, 5)], False),
    ("nn.ReplicationPad1d((1, 3))", [(2, 3, 5)], False),
    ("nn.ReplicationPad2d(2)", [(2, 3, 4, 5)], False),
    ("nn.ReplicationPad3d(1)", [(1, 2, 3, 4, 5)], False),
    ("nn.ConstantPad1d(2, 3.5)", [(2, 3, 5)], False),
    ("nn.ConstantPad2d((1, 0, 2, 1), -1.0)", [(2, 3, 4, 5)], False),
    ("nn.ConstantPad3d(1, 0.5)", [(1, 2, 3, 4, 5)], False),
    ("nn.ZeroPad2d((1, 1, 2, 0))", [(2, 3, 4, 5)], False),
    ("nn.MaxPool3d(2, stride=1, padding=1)", [(1, 2, 4, 5, 6)], False),
    ("nn.AvgPool3d(2, count_include_pad=False)", [(1, 2, 4, 5, 6)], False),
    ("nn.AdaptiveAvgPool3d((2, None, 3))", [(1, 2, 4, 5, 6)], False),
    ("nn.AdaptiveMaxPool1d(3)", [(2, 3, 8)], False),
    ("nn.AdaptiveMaxPool2d((3, None), return_indices=True)", [(2, 3, 8, 7)],
     False),
    ("nn.AdaptiveMaxPool3d(2)", [(1, 2, 4, 5, 6)], False),
    ("nn.FractionalMaxPool2d(2, output_size=(3, 3))", [(1, 2, 7, 7)], False),
    ("nn.FractionalMaxPool3d(2, output_ratio=0.5)", [(1, 2, 6, 6, 6)], False),
    ("nn.LPPool1d(2, 3, stride=2)", [(2, 3, 9)], False),
    ("nn.LPPool2d(1.5, 2)", [(2, 3, 6, 6)], False),
    ("nn.Upsample(scale_factor=2, mode='nearest')", [(1, 2, 3, 4)], False),
    ("nn.Upsample(size=(5, 7), mode='bilinear', align_corners=True)",
     [(1, 2, 3, 4)], False),
    ("nn.Upsample(scale_factor=1.5, mode='trilinear')", [(1, 2, 2, 3, 4)],
     False),
    ("nn.UpsamplingNearest2d(scale_factor=2)", [(1, 2, 3, 4)], False),
    ("nn.UpsamplingBilinear2d(size=(6, 5))", [(1, 2, 3, 4)], False),
    ("nn.PixelShuffle(2)", [(1, 8, 3, 4)], False),
    ("nn.PixelUnshuffle(2)", [(1, 2, 4, 6)], False),
    ("nn.ChannelShuffle(2)", [(1, 4, 3, 3)], False),
    ("nn.Fold(output_size=(4, 5), kernel_size=2)", [(1, 12, 12)], False),
    ("nn.Unfold(kernel_size=(2, 3), padding=1, stride=2)", [(2, 3, 5, 6)],
     False),
    ("nn.Unflatten(1, (2, 6))", [(3, 12)], False),
    ("nn.CosineSimilarity(dim=0, eps=1e-6)", [(5, 3), (5, 3)], False),
    ("nn.PairwiseDistance(p=1.5, keepdim=True)", [(4, 6), (4, 6)], False),
    ("nn.LocalResponseNorm(3, alpha=0.01)", [(2, 5, 4, 4)], False),
    ("nn.Bilinear(3, 4, 5)", [(2, 3), (2, 4)], False),
    ("nn.Bilinear(3, 4, 5, bias=False)", [(2, 3), (2, 4)], False),
    ("nn.EmbeddingBag(10, 4, mode='sum')", [("long", (3, 5), 10)], False),
    ("nn.EmbeddingBag(10, 4, mode='max', padding_idx=2)",
     [("long", (2, 6), 10)], False),
    # Rebuilt with a forward of their own.
    ("nn.InstanceNorm1d(3)", [(2, 3, 6)], False),
    ("nn.InstanceNorm2d(3, affine=True)", [(2, 3, 4, 5)], False),
    ("nn.InstanceNorm2d(3, affine=True, track_running_stats=True)",
     [(2, 3, 4, 5)], False),
    ("nn.InstanceNorm3d(2, affine=True)", [(2, 3, 4, 5)], False),
    ("nn.ConvTranspose1d(3, 4, 3, stride=2)", [(2, 3, 5)], False),
    ("nn.ConvTranspose2d(4, 6, (3, 2), stride=2, padding=1, "
     "output_padding=1, groups=2, dilation=1)", [(1, 4, 5, 5)], False),
    ("nn.ConvTranspose2d(3, 2, 3, stride=2, bias=False)", [(3, 4, 4)], False),
    ("nn.ConvTranspose3d(2, 3, 2, stride=2)", [(1, 2, 2, 3, 3)], False),
    ("nn.MaxUnpool1d(2)", ["torch.nn.functional.max_pool1d(torch.randn("
                           "1, 2, 6, generator=g), 2, return_indices=True)"],
     False),
    ("nn.MaxUnpool2d(2)", ["torch.nn.functional.max_pool2d(torch.randn("
                           "1, 2, 4, 4, generator=g), 2, return_indices=True)"
                           ], False),
    ("nn.MaxUnpool3d(2, stride=2)",
     ["torch.nn.functional.max_pool3d(torch.randn(1, 2, 4, 4, 4, "
      "generator=g), 2, return_indices=True)"], False),
    # Recurrent layers and cells.
    ("nn.LSTM(4, 6)", [(5, 3, 4)], False),
    ("nn.LSTM(4, 6, num_layers=2, batch_first=True, bidirectional=True)",
     [(3, 5, 4)], False),
    ("nn.LSTM(4, 6, proj_size=3)", [(5, 4)], False),
    ("nn.LSTM(4, 6, num_layers=2, dropout=0.5)", [(5, 3, 4)], True),
    ("nn.GRU(4, 6, num_layers=2, bias=False)", [(5, 3, 4), (2, 3, 6)], False),
    ("nn.GRU(4, 6, bidirectional=True, batch_first=True)", [(2, 5, 4)],
     False),
    ("nn.RNN(4, 6, nonlinearity='relu')", [(5, 4)], False),
    ("nn.RNN(4, 6, num_layers=3)", [(5, 3, 4)], False),
    ("nn.LSTMCell(4, 6)", [(3, 4)], False),
    ("nn.GRUCell(4, 6, bias=False)", [(4,), (6,)], False),
    ("nn.RNNCell(4, 6, nonlinearity='relu')", [(3, 4)], False),
    # Attention.
    ("nn.MultiheadAttention(8, 2)", ["(lambda x: (x, x, x))(torch.randn("
                                     "5, 3, 8, generator=g))"], False),
    ("nn.MultiheadAttention(8, 2, batch_first=True)",
     ["(lambda x: (x, x, x))(torch.randn(3, 5, 8, generator=g))"], False),
    ("nn.MultiheadAttention(8, 4, kdim=6, vdim=5, bias=False)",
     [(4, 2, 8), (7, 2, 6), (7, 2, 5)], False),
    ("nn.MultiheadAttention(8, 2, add_bias_kv=True, add_zero_attn=True)",
     [(4, 8), (6, 8), (6, 8)], False),
    ("nn.MultiheadAttention(8, 2, dropout=0.3)", [(4, 2, 8), (6, 2, 8),
                                                  (6, 2, 8)], True),
    ("nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, dropout=0.0)",
     [(5, 3, 8)], False),
    ("nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, batch_first=True, "
     "activation='gelu')", [(3, 5, 8)], False),
    ("nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, norm_first=True)",
     [(5, 3, 8)], True),
    ("nn.TransformerDecoderLayer(8, 2, dim_feedforward=16)",
     [(4, 3, 8), (6, 3, 8)], False),
    ("nn.TransformerDecoderLayer(8, 2, dim_feedforward=16, batch_first=True, "
     "norm_first=True)", [(3, 4, 8), (3, 6, 8)], False),
    # Stacks of layers: their constructors take the layer (and norm) modules.
    ("nn.TransformerEncoder(nn.TransformerEncoderLayer(8, 2, "
     "dim_feedforward=16), 2)", [(5, 3, 8)], False),
    # batch_first, a key padding mask, eval: torch 1.13's nested-tensor path.
    ("nn.TransformerEncoder(nn.TransformerEncoderLayer(8, 2, "
     "dim_feedforward=16, batch_first=True), 2, norm=nn.LayerNorm(8))",
     [(3, 5, 8), "None", "torch.arange(5).expand(3, 5) >= "
      "torch.tensor([[5], [3], [4]])"], False),
    ("nn.TransformerEncoder(nn.TransformerEncoderLayer(8, 2, "
     "dim_feedforward=16, dropout=0.0, norm_first=True), 2, "
     "enable_nested_tensor=False)", [(5, 3, 8)], True),
    ("nn.TransformerDecoder(nn.TransformerDecoderLayer(8, 2, "
     "dim_feedforward=16), 2, norm=nn.LayerNorm(8))",
     [(4, 3, 8), (6, 3, 8)], False),
    ("nn.Transformer(d_model=8, nhead=2, num_encoder_layers=2, "
     "num_decoder_layers=1, dim_feedforward=16)", [(5, 3, 8), (4, 3, 8)],
     False),
    ("nn.Transformer(d_model=8, nhead=2, num_encoder_layers=1, "
     "num_decoder_layers=2, dim_feedforward=16, batch_first=True, "
     "norm_first=True, activation='gelu', layer_norm_eps=1e-6)",
     [(3, 5, 8), (3, 4, 8)], False),
    ("nn.CrossMapLRN2d(3, alpha=1e-3, beta=0.5, k=2)", [(2, 5, 4, 4)], False),
    # (LibTorch's constructor cannot initialise a cluster of in_features //
    # div_value**k == 0 features, which Python leaves empty: 16 features.)
    ("nn.AdaptiveLogSoftmaxWithLoss(16, 10, [4, 8])",
     [(6, 16), ("long", (6,), 10)], False),
    ("nn.AdaptiveLogSoftmaxWithLoss(8, 12, [3, 6, 9], div_value=2.0, "
     "head_bias=True)", [(5, 8), ("long", (5,), 12)], False),
    # Losses.
    ("nn.L1Loss()", [(3, 4), (3, 4)], False),
    ("nn.MSELoss(reduction='sum')", [(3, 4), (3, 4)], False),
    ("nn.NLLLoss()", ["torch.randn(4, 5, generator=g).log_softmax(1)",
                      ("long", (4,), 5)], False),
    ("nn.NLLLoss(weight=torch.rand(5), ignore_index=1, reduction='sum')",
     ["torch.randn(4, 5, generator=g).log_softmax(1)", ("long", (4,), 5)],
     False),
    ("nn.NLLLoss2d()", ["torch.randn(2, 3, 4, 4, generator=g).log_softmax(1)",
                        ("long", (2, 4, 4), 3)], False),
    ("nn.CrossEntropyLoss(label_smoothing=0.1)", [(4, 5), ("long", (4,), 5)],
     False),
    ("nn.PoissonNLLLoss(full=True)", [(3, 4), "torch.rand(3, 4, generator=g)"],
     False),
    ("nn.GaussianNLLLoss(full=True)",
     [(3, 4), (3, 4), "torch.rand(3, 4, generator=g) + 0.1"], False),
    ("nn.KLDivLoss(reduction='batchmean')",
     ["torch.randn(3, 4, generator=g).log_softmax(1)",
      "torch.rand(3, 4, generator=g)"], False),
    ("nn.BCELoss(weight=torch.rand(4))",
     ["torch.rand(3, 4, generator=g)", "torch.rand(3, 4, generator=g)"], False),
    ("nn.BCEWithLogitsLoss(pos_weight=torch.rand(4))",
     [(3, 4), "torch.rand(3, 4, generator=g)"], False),
    ("nn.HingeEmbeddingLoss(margin=0.5)",
     [(3, 4), "torch.randint(0, 2, (3, 4), generator=g).float() * 2 - 1"],
     False),
    ("nn.MultiLabelMarginLoss()", [(3, 4), "torch.tensor([[3, 0, -1, 1], "
                                   "[0, 1, 2, 3], [1, -1, 0, 0]])"], False),
    ("nn.SmoothL1Loss(beta=0.5)", [(3, 4), (3, 4)], False),
    ("nn.HuberLoss(delta=0.7)", [(3, 4), (3, 4)], False),
    ("nn.SoftMarginLoss()",
     [(3, 4), "torch.randint(0, 2, (3, 4), generator=g).float() * 2 - 1"],
     False),
    ("nn.MultiLabelSoftMarginLoss(weight=torch.rand(4))",
     [(3, 4), "torch.randint(0, 2, (3, 4), generator=g).float()"], False),
    ("nn.CosineEmbeddingLoss(margin=0.2)",
     [(3, 4), (3, 4), "torch.tensor([1.0, -1.0, 1.0])"], False),
    ("nn.MarginRankingLoss(margin=0.1)",
     [(5,), (5,), "torch.randint(0, 2, (5,), generator=g).float() * 2 - 1"],
     False),
    ("nn.MultiMarginLoss(p=2, margin=0.5, weight=torch.rand(4))",
     [(3, 4), ("long", (3,), 4)], False),
    ("nn.TripletMarginLoss(margin=0.5, swap=True)", [(3, 4), (3, 4), (3, 4)],
     False),
    ("nn.TripletMarginWithDistanceLoss(margin=0.5)", [(3, 4), (3, 4), (3, 4)],
     False),
    ("nn.CTCLoss()", ["torch.randn(6, 2, 5, generator=g).log_softmax(2)",
                      "torch.randint(1, 5, (2, 3), generator=g)",
                      "torch.tensor([6, 5])", "torch.tensor([3, 2])"], False),
    # LibTorch's own classes.
    ("nn.Linear(4, 3)", [(2, 4)], False),
    ("nn.Linear(4, 3, bias=False)", [(2, 5, 4)], False),
    ("nn.Conv1d(3, 4, 3, padding=1, padding_mode='reflect')", [(2, 3, 6)],
     False),
    ("nn.Conv2d(4, 6, 3, stride=2, groups=2, bias=False)", [(1, 4, 7, 7)],
     False),
    ("nn.Conv2d(3, 4, 3, padding='same', dilation=2)", [(1, 3, 6, 6)], False),
    ("nn.Conv3d(2, 3, 2)", [(1, 2, 3, 4, 4)], False),
    ("nn.BatchNorm1d(3)", [(4, 3)], False),
    ("nn.BatchNorm1d(3)", [(4, 3, 5)], True),
    ("nn.BatchNorm2d(3, momentum=None)", [(2, 3, 4, 4)], True),
    ("nn.BatchNorm3d(2, affine=False)", [(2, 2, 2, 3, 3)], False),
    ("nn.LayerNorm((4, 5), eps=1e-3)", [(2, 3, 4, 5)], False),
    ("nn.GroupNorm(2, 4)", [(2, 4, 3)], False),
    ("nn.Dropout(0.3)", [(3, 4)], True),
    ("nn.Embedding(10, 3, padding_idx=0)", [("long", (2, 4), 10)], False),
    ("nn.Flatten(0, 1)", [(2, 3, 4)], False),
    ("nn.Identity()", [(2, 3)], False),
    ("nn.GELU(approximate='tanh')", [(2, 3)], False),
    ("nn.Hardsigmoid()", [(2, 3)], False),
    ("nn.Hardswish()", [(2, 3)], False),
    ("nn.LeakyReLU(0.2)", [(2, 3)], False),
    ("nn.Mish()", [(2, 3)], False),
    ("nn.ReLU()", [(2, 3)], False),
    ("nn.ReLU6()", [(2, 3)], False),
    ("nn.SiLU()", [(2, 3)], False),
    ("nn.Sigmoid()", [(2, 3)], False),
    ("nn.Tanh()", [(2, 3)], False),
    ("nn.Softmax(dim=0)", [(2, 3)], False),
    ("nn.MaxPool1d(2)", [(2, 3, 6)], False),
    ("nn.MaxPool2d(3, stride=2, padding=1, ceil_mode=True)", [(1, 2, 7, 7)],
     False),
    ("nn.AvgPool1d(3, stride=2)", [(2, 3, 7)], False),
    ("nn.AvgPool2d(2, divisor_override=3)", [(1, 2, 4, 4)], False),
    ("nn.AdaptiveAvgPool1d(3)", [(2, 3, 7)], False),
    ("nn.AdaptiveAvgPool2d((2, 3))", [(1, 2, 5, 7)], False),
    # Configs PyTorch's test_normalize_modules_exhaustive found converted
    # wrongly (fx_core/runtime/modules).
    ("nn.MaxPool1d(3, stride=2, return_indices=True)", [(2, 3, 9)], False),
    ("nn.MaxPool2d((3, 2), padding=1, return_indices=True)", [(1, 2, 7, 7)],
     False),
    ("nn.MaxPool3d(2, return_indices=True)", [(1, 2, 4, 4, 4)], False),
    ("nn.AvgPool1d(3, stride=2, padding=1, count_include_pad=False)",
     [(2, 3, 7)], False),
    ("nn.AdaptiveAvgPool2d((None, 3))", [(1, 2, 5, 7)], False),
    ("nn.ZeroPad2d(2)", [(3, 4, 5)], False),
    ("nn.CrossMapLRN2d(5, 5e-3, 1e-3, 2)", [(2, 3, 6, 6)], False),
]


def module_class_names():
    """Every public torch.nn module class (losses and containers apart)."""
    skip = {"Module", "Sequential", "ModuleList", "ModuleDict", "ParameterList",
            "ParameterDict", "Container", "RNNBase", "RNNCellBase"}
    names = []
    for name in dir(nn):
        cls = getattr(nn, name)
        if (isinstance(cls, type) and issubclass(cls, nn.Module)
                and cls.__module__.startswith("torch.nn.modules")
                and name not in skip and not name.startswith("Lazy")):
            names.append(name)
    return sorted(names)


def make_input(spec, generator):
    """A shape (randn), ("long", shape, high), or a Python expression over
    torch and the generator g (a tuple result gives several inputs)."""
    if isinstance(spec, str):
        return eval(spec, {"torch": torch, "g": generator})  # noqa: S307
    if isinstance(spec, tuple) and spec and spec[0] == "long":
        _, shape, high = spec
        return torch.randint(0, high, shape, generator=generator)
    return torch.randn(spec, generator=generator)


def one_module_graph(module, num_inputs):
    """What torch.fx records for a leaf module called on the inputs."""
    graph = torch.fx.Graph()
    inputs = [graph.placeholder(f"x{i}") for i in range(num_inputs)]
    out = graph.call_module("m", tuple(inputs))
    graph.output(out)
    root = nn.Module()
    root.m = module
    return torch.fx.GraphModule(root, graph)


def randomize(module, generator):
    """Random parameters and float buffers: a layout mistake cannot match."""
    with torch.no_grad():
        for tensor in list(module.parameters()) + list(module.buffers()):
            if tensor.is_floating_point():
                tensor.copy_(torch.rand(tensor.shape, generator=generator)
                             + 0.5)


def flatten(value):
    """The tensors of a result, nested tuples included."""
    if isinstance(value, (tuple, list)):
        return [t for v in value for t in flatten(v)]
    return [value]


def export_case(constructor, input_specs, training, out_dir, seed):
    generator = torch.Generator().manual_seed(seed)
    module = eval(constructor, {"nn": nn, "torch": torch})  # noqa: S307
    randomize(module, generator)
    module.train(training)
    inputs = []
    for spec in input_specs:
        made = make_input(spec, generator)
        inputs.extend(made if isinstance(made, tuple) else [made])
    gm = one_module_graph(module, len(inputs))
    torch.manual_seed(seed)
    export(gm, inputs, out_dir)
    # export() ran the module once; run it again from the same seed to see
    # whether eager reproduces itself (random modules do, seeded).
    torch.manual_seed(seed)
    first = gm(*inputs)
    torch.manual_seed(seed)
    second = gm(*inputs)
    reproducible = all(
        torch.allclose(a, b, rtol=0, atol=0, equal_nan=True)
        if isinstance(a, torch.Tensor) and a.is_floating_point()
        else torch.equal(a, b) if isinstance(a, torch.Tensor) else a == b
        for a, b in zip(flatten(first), flatten(second)))
    return {"how": "call_module", "nodes": 1, "opcode": "call_module",
            "target": "m", "reproducible": reproducible}


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("-o", "--output", required=True)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    start = time.time()
    cases_dir = os.path.join(args.output, "cases")
    if os.path.isdir(cases_dir):
        shutil.rmtree(cases_dir)
    os.makedirs(cases_dir)
    cases = []
    counts = {}
    for constructor, input_specs, training in CASES:
        name = constructor.split("(")[0].split(".")[-1]
        case = {"op": name, "variant": "train" if training else "eval",
                "sample": counts.get(name, 0), "call": constructor,
                "seed": args.seed}
        counts[name] = case["sample"] + 1
        case_dir = os.path.join("cases", f"{len(cases):05d}")
        try:
            case.update(export_case(constructor, input_specs, training,
                                    os.path.join(args.output, case_dir),
                                    args.seed))
            case["dir"] = case_dir
        except Exception as e:  # noqa: BLE001
            case["skip"] = f"{type(e).__name__}: {str(e).splitlines()[0]}"
        cases.append(case)
    exported = sum(1 for c in cases if "dir" in c)
    index = {
        "torch": torch.__version__,
        "seed": args.seed,
        "max_samples_per_op": 0,
        "ops": len(counts),
        "exported": exported,
        "skipped": len(cases) - exported,
        "seconds": round(time.time() - start, 1),
        "uncovered": [n for n in module_class_names() if n not in counts],
        "cases": cases,
    }
    with open(os.path.join(args.output, "index.json"), "w") as f:
        json.dump(index, f, indent=1)
    print(f"{len(counts)} module classes, {len(cases)} cases: {exported} "
          f"exported -> {args.output}/index.json")


if __name__ == "__main__":
    main(sys.argv[1:])
