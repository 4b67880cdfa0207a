#!/usr/bin/python3
"""Writes the seed corpora of the fuzz targets (tests/fuzz/corpus/TARGET).

    make_seeds.py SHARED_DIR [TORCHVISION_EXPORT_DIR]

Seeds are small on purpose (the CI replays them under ASan): the reference
bundles of SHARED_DIR/reference (torch.fx's own exports), graphs of a few
torchvision models exported by tests/tools/export_torchvision.py (when a
directory of exports is given; their weights are left out of the bundle
seeds, too large), torch.save files Python writes for the values the SDK
reads (tensors of each dtype, views, nested containers, torch.Size,
OrderedDict), the unit tests' pipelines and configs, fake plugin
declarations in the byte layout plugin_info_fuzzer.cc reads, and module
configs (module_config_fuzzer.cc: type, config, input sizes) with graphs
declaring modules far larger than their weights (issue 41). Run with
/usr/bin/python3 (it needs torch); it replaces the seed files it writes.
"""
import collections
import io
import json
import os
import struct
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.path.join(HERE, "corpus")
MAX_SEED = 64 * 1024  # bytes: larger files are left out


def write(target, name, data):
    if isinstance(data, str):
        data = data.encode()
    if len(data) > MAX_SEED:
        return
    os.makedirs(os.path.join(CORPUS, target), exist_ok=True)
    with open(os.path.join(CORPUS, target, name), "wb") as f:
        f.write(data)


def saved(value):
    buffer = io.BytesIO()
    torch.save(value, buffer)
    return buffer.getvalue()


def reference_seeds(shared):
    root = os.path.join(shared, "reference")
    for name in sorted(os.listdir(root)):
        folder = os.path.join(root, name)
        with open(os.path.join(folder, "graph.fx.json"), "rb") as f:
            graph = f.read()
        write("graph_json", name + ".json", graph)
        bundle = graph
        weights = os.path.join(folder, "model.weights.pt")
        if os.path.exists(weights) and os.path.getsize(weights) < MAX_SEED:
            with open(weights, "rb") as f:
                bundle = graph + b"\0" + f.read()
        write("bundle", name + ".bundle", bundle)
        for pt in ("input.pt", "expected.pt", "model.weights.pt"):
            path = os.path.join(folder, pt)
            if os.path.exists(path):
                with open(path, "rb") as f:
                    write("torch_save", name + "_" + pt, f.read())


def torchvision_seeds(exports):
    for name in sorted(os.listdir(exports)):
        path = os.path.join(exports, name, "graph.fx.json")
        if os.path.exists(path):
            with open(path, "rb") as f:
                graph = f.read()
            write("graph_json", "tv_" + name + ".json", graph)


def graph_kinds_seed():
    """One graph using every ARG kind of the format, and tensor_meta."""
    import json
    meta = {"tensor_meta": {"dict": {
        "shape": {"tuple": [2, 3]}, "dtype": {"dtype": "torch.float32"},
        "stride": {"tuple": [3, 1]}, "requires_grad": False,
        "memory_format": {"memory_format": "torch.contiguous_format"}}}}
    kinds = [None, True, 3, -2.5, {"float": "inf"}, {"float": "nan"}, "s",
             {"tuple": [1, {"node": "x"}]}, {"dict": {"k": [1, 2]}},
             {"slice": [None, 2, None]}, {"ellipsis": None},
             {"dtype": "torch.int64"}, {"device": "cpu"},
             {"memory_format": "torch.channels_last"},
             {"layout": "torch.strided"}]
    graph = {"format": "fx-graph", "version": 1, "nodes": [
        {"name": "x", "op": "placeholder", "target": "x", "args": [],
         "kwargs": {}, "type": "torch.Tensor", "meta": meta},
        {"name": "y", "op": "placeholder", "target": "y", "args": [1.0],
         "kwargs": {}},
        {"name": "getitem", "op": "call_function",
         "target": "operator.getitem",
         "args": [{"node": "x"}, {"tuple": [{"slice": [None, None, None]},
                                            {"ellipsis": None}]}],
         "kwargs": {}},
        {"name": "f", "op": "call_function", "target": "my.wrapped_fn",
         "args": kinds, "kwargs": {"k": {"node": "y"}},
         "meta": {"is_wrapped": True}},
        {"name": "to", "op": "call_method", "target": "to",
         "args": [{"node": "getitem"}], "kwargs": {
             "dtype": {"dtype": "torch.float64"}}},
        {"name": "output", "op": "output", "target": "output",
         "args": [{"tuple": [{"node": "to"}, {"node": "f"}]}], "kwargs": {},
         "type": "typing.Tuple[torch.Tensor, typing.Any]"}]}
    write("graph_json", "all_kinds.json", json.dumps(graph, indent=1))


def code_names_seed():
    """A graph whose names sit at the edges of the grammar a file's names
    for generated code follow (fx_core/format/code_names.h, issue 34):
    __main__, <locals>, indices, dunder-free attributes, typing forms."""
    graph = {"format": "fx-graph", "version": 1, "nodes": [
        {"name": "x", "op": "placeholder", "target": "*args", "args": [],
         "kwargs": {}, "type": "typing_Tuple[torch.Tensor, ...]",
         "type_text": "typing.Tuple[torch.Tensor, ...]"},
        {"name": "p", "op": "get_attr", "target": "seq.0._p1", "args": [],
         "kwargs": {}},
        {"name": "f", "op": "call_function", "target": "__main__.f",
         "args": [{"node": "x"}, {"namedtuple": {
             "class": "m.g.<locals>.P#7fa0", "fields": ["a"],
             "items": [{"node": "p"}]}}], "kwargs": {"k_1": 1}},
        {"name": "g", "op": "call_function", "target": "m.<lambda>",
         "args": [{"node": "f"}], "kwargs": {}},
        {"name": "m", "op": "call_method", "target": "clamp_",
         "args": [{"node": "g"}], "kwargs": {}},
        {"name": "lin", "op": "call_module", "target": "seq.1",
         "args": [{"node": "m"}], "kwargs": {}},
        {"name": "output", "op": "output", "target": "output",
         "args": [{"node": "lin"}], "kwargs": {}, "type": "Literal[1]"}],
        "modules": {"seq.1": {"type": "__main__.M.__init__.<locals>.L"}},
        "weight_kinds": {"seq.0._p1": "buffer"}}
    write("graph_json", "code_names.json", json.dumps(graph, indent=1))


def torch_save_seeds():
    t = torch.arange(12, dtype=torch.float32).reshape(3, 4)
    values = {
        "float_tensor": t,
        "dtypes": {str(d): torch.ones(2, dtype=d) for d in (
            torch.float64, torch.float16, torch.bfloat16, torch.int8,
            torch.uint8, torch.int16, torch.int32, torch.int64, torch.bool,
            torch.complex64)},
        "views": [t[1:], t.t(), t[:, ::2], t.expand(2, 3, 4), t[0, 0]],
        "shared_storage": (t, t.view(-1), t[2]),
        "nested": [1, 2.5, True, None, "s", (3, [4, {"k": t}]), [[], ()]],
        "state_dict": collections.OrderedDict(
            [("linear.weight", torch.randn(2, 3)), ("linear.bias", torch.zeros(2)),
             ("bn.num_batches_tracked", torch.tensor(0))]),
        "size": {"shape": torch.Size([2, 3]), "empty": torch.empty(0, 3)},
        "return_types": torch.max(t, 1),
        "scalars": [torch.tensor(1.5), torch.tensor(7), -1, 2 ** 62, 1e300],
        "grad": torch.nn.Parameter(torch.ones(2)),
    }
    for name, value in values.items():
        write("torch_save", name + ".pt", saved(value))


def torch_save_bundle_seed():
    graph = {
        "format": "fx-graph", "version": 1,
        "nodes": [
            {"name": "x", "op": "placeholder", "target": "x", "args": [],
             "kwargs": {}},
            {"name": "lin", "op": "call_module", "target": "lin",
             "args": [{"node": "x"}], "kwargs": {}},
            {"name": "p", "op": "get_attr", "target": "p", "args": [],
             "kwargs": {}},
            {"name": "add", "op": "call_function", "target": "operator.add",
             "args": [{"node": "lin"}, {"node": "p"}], "kwargs": {}},
            {"name": "output", "op": "output", "target": "output",
             "args": [{"node": "add"}], "kwargs": {}},
        ],
        "modules": {"lin": {"type": "torch.nn.Linear",
                            "config": {"in_features": 3, "out_features": 2,
                                       "bias": True}, "training": False}},
        "weights": "model.weights.pt",
    }
    import json
    weights = collections.OrderedDict(
        [("lin.weight", torch.randn(2, 3)), ("lin.bias", torch.zeros(2)),
         ("p", torch.ones(2))])
    write("bundle", "linear_get_attr.bundle",
          json.dumps(graph, indent=1).encode() + b"\0" + saved(weights))


def quantized_models():
    """Small models in each of PyTorch's quantized forms (issue 33):
    convert_fx's lowered kinds (Quantize, DeQuantize, quantized and fused
    Conv1d/2d/3d and Linear, BatchNorm2d, Hardswish, LeakyReLU, ELU), the
    dynamic Linear, and the quantized norms between eager-mode stubs, with
    an example input each: (name, GraphModule, [input])."""
    from torch.ao.quantization import QConfigMapping, default_dynamic_qconfig
    from torch.ao.quantization import get_default_qconfig_mapping
    from torch.ao.quantization.quantize_fx import convert_fx, prepare_fx
    torch.backends.quantized.engine = "onednn"
    nn = torch.nn

    def lowered(model, x, qconfig=None):
        prepared = prepare_fx(model.eval(), qconfig or
                              get_default_qconfig_mapping("onednn"), (x,))
        with torch.no_grad():
            prepared(x)
        return convert_fx(prepared)

    torch.manual_seed(0)
    conv2d = nn.Sequential(nn.Conv2d(3, 4, 3), nn.ReLU(), nn.BatchNorm2d(4),
                           nn.Hardswish(), nn.Conv2d(4, 2, 1), nn.Flatten(),
                           nn.Linear(2 * 4 * 4, 3), nn.ReLU(), nn.Linear(3, 2))
    conv1d = nn.Sequential(nn.Conv1d(2, 3, 3), nn.LeakyReLU(0.1), nn.ELU())
    conv3d = nn.Sequential(nn.Conv3d(2, 2, 3), nn.BatchNorm3d(2))
    mlp = nn.Sequential(nn.Linear(6, 4), nn.ReLU(), nn.Linear(4, 2))
    nnq = torch.ao.nn.quantized

    def affine(*shape):
        return (nn.Parameter(torch.rand(*shape) + 0.5),
                nn.Parameter(torch.randn(*shape)))
    norms = nn.Sequential(
        nnq.Quantize(0.05, 64, torch.quint8),
        nnq.GroupNorm(2, 4, *affine(4), 0.04, 60),
        nnq.InstanceNorm2d(4, *affine(4), 0.04, 70, affine=True),
        nnq.LayerNorm([4, 3, 3], *affine(4, 3, 3), 0.05, 64),
        nnq.DeQuantize()).eval()
    x2, x1, x3 = (torch.randn(1, 3, 6, 6), torch.randn(1, 2, 6),
                  torch.randn(1, 2, 4, 4, 4))
    xm = torch.randn(2, 6)
    dynamic = QConfigMapping().set_global(default_dynamic_qconfig)
    return [("quantized_conv2d", lowered(conv2d, x2), [x2]),
            ("quantized_conv1d", lowered(conv1d, x1), [x1]),
            ("quantized_conv3d", lowered(conv3d, x3), [x3]),
            ("quantized_dynamic_linear", lowered(mlp, xm, dynamic), [xm]),
            ("quantized_norms", torch.fx.symbolic_trace(norms),
             [torch.randn(1, 4, 3, 3)])]


def quantized_seeds():
    """Bundles of quantized_models() (graph, NUL, weights), and a
    module_config seed for each module kind they hold, given the input its
    module gets in the model (a quantized one for the quantized kinds)."""
    sys.path.insert(0, os.path.join(HERE, "..", "..", "tools"))
    import torchfx_export
    for name, gm, inputs in quantized_models():
        document, weights = torchfx_export.graph_document(gm)
        if weights:
            document["weights"] = "model.weights.pt"
        write("bundle", name + ".bundle", json.dumps(document).encode() +
              (b"\0" + saved(weights) if weights else b""))
        seen = set()
        interpreter = torch.fx.Interpreter(gm)
        module_inputs = {}

        def record(target, args, _kwargs, old=interpreter.call_module):
            module_inputs.setdefault(target, args[0])
            return old(target, args, _kwargs)
        interpreter.call_module = record
        with torch.no_grad():
            interpreter.run(*inputs)
        for target, spec in document.get("modules", {}).items():
            kind = spec["type"]
            if kind in seen or target not in module_inputs:
                continue
            seen.add(kind)
            sizes = " ".join(str(d) for d in module_inputs[target].shape)
            write("module_config", "%s_%s" % (name, target.replace(".", "_")),
                  "%s\n%s\n%s" % (kind, json.dumps(spec["config"]), sizes))


def pipeline_seeds():
    texts = [
        "shape_prop,decompose{rules=relu,gelu},quantize{dtype=int8}",
        " a { x = 1 , rules = r1 , r2 , y=z } , b ",
        "dce",
        "const_fold{prefix=_folded_constant},cse,dot{path=g.dot,name=G}",
        "split_module{partitions=a,b,split_at=,meta_key=part}",
    ]
    for i, text in enumerate(texts):
        write("pipeline_text", "text%d.txt" % i, text)
    configs = [
        '{"plugins": ["libp.so", {"path": "/abs/v.so", "sha256": "' + "a" * 64 +
        '"}], "plugin_dirs": ["dir"], "pipeline": [{"pass": "decompose", '
        '"options": {"rules": ["relu", "gelu"], "n": 3, "f": 0.5, "b": true, '
        '"s": "x"}, "on_failure": "skip"}, "dce,cse"], "ordering": "auto", '
        '"on_failure": "stop", "verify_each": false, "print_after": "all", '
        '"assume": ["tensor_meta"], "reproducer_dir": "r"}',
        '{"pipeline": [{"pass": "q", "options": {"bits": 8, "names": ["a"]}}],'
        ' "on_failure": "skip", "assume": ["tensor_meta"]}',
        '{"pipeline": "shape_prop,decompose{rules=relu}", '
        '"print_after": ["decompose"]}',
    ]
    for i, text in enumerate(configs):
        write("pipeline_config", "config%d.json" % i, text)
    sample = os.path.join(HERE, "..", "..", "sdk_examples", "pipeline_config",
                          "shape_prop_decompose_quantize.json")
    with open(sample, "rb") as f:
        write("pipeline_config", "sdk_example.json", f.read())


def text(s):
    s = s.encode()
    return bytes([len(s)]) + s


def plugin_info_seeds():
    """The byte layout of plugin_info_fuzzer.cc's FakePlugin."""
    def names(*items):
        if not items:
            return b"\0"
        return bytes([len(items), 1]) + b"".join(b"\1" + text(n) for n in items)

    def option(name, type_, default):
        return b"\1" + text(name) + bytes([type_]) + b"\1" + text(default) + \
            b"\1" + text("an option")

    def pass_(name, options=(), after=(), required=(), produces=()):
        out = b"\1" + text(name) + b"\1" + text("a pass") + b"\1"
        out += bytes([len(options)]) + (b"\1" if options else b"")
        out += b"".join(option(*o) for o in options)
        return out + names(*after) + names() + names(*required) + \
            names(*produces) + names()

    def plugin(passes, api=2, tail=b""):
        out = b"\1" + text("fuzz_plugin") + b"\1" + text("1.0")
        out += bytes([api, 1]) + b"\1\1" + bytes([len(passes), 1])
        return out + b"".join(passes) + tail

    write("plugin_info", "one_pass", plugin([pass_("dce")], tail=b"dce"))
    write("plugin_info", "options", plugin(
        [pass_("decompose", [("rules", 4, "relu,gelu"), ("n", 1, "8"), ("f", 2, "0.5")],
               after=("shape_prop",), required=("tensor_meta",)),
         pass_("flags", [("b", 0, "true"), ("s", 3, "x")])],
        tail=b"decompose{rules=relu,n=3,f=1e3},flags{b=false,s=y}"))
    write("plugin_info", "three_passes_v1", plugin(
        [pass_("a"), pass_("b", produces=("p",)), pass_("c")], api=1,
        tail=b"fuzz_plugin.a,b,c"))


# (name, type, config, input sizes): one of each kind's config forms, and the
# configs of issue 41 (a kernel crash, allocations no weights back).
MODULE_CONFIGS = [
    ("conv2d_groups", "Conv2d", {"in_channels": 2, "out_channels": 4,
                                 "kernel_size": 3, "padding": [1, 2],
                                 "groups": 2}, "1 2 5 5"),
    ("conv1d_same", "Conv1d", {"in_channels": 1, "out_channels": 2,
                               "kernel_size": 2, "padding": "same",
                               "dilation": 2}, "1 1 8"),
    ("linear", "Linear", {"in_features": 3, "out_features": 2,
                          "bias": False}, "4 3"),
    ("batch_norm", "BatchNorm2d", {"num_features": 3, "eps": 0.001,
                                   "momentum": None}, "2 3 2 2"),
    ("max_pool", "MaxPool2d", {"kernel_size": 3, "stride": 2, "padding": 1,
                               "ceil_mode": True}, "1 1 6 6"),
    ("avg_pool", "AvgPool2d", {"kernel_size": 2, "divisor_override": 3},
     "1 2 6 6"),
    ("layer_norm", "LayerNorm", {"normalized_shape": [2, 3]}, "4 2 3"),
    ("group_norm", "GroupNorm", {"num_groups": 2, "num_channels": 4},
     "1 4 3"),
    ("embedding", "Embedding", {"num_embeddings": 10, "embedding_dim": 3,
                                "padding_idx": -1}, "2 2"),
    ("dropout", "Dropout", {"p": 0.25}, "4"),
    ("elu", "ELU", {"alpha": 0.5}, "3 3"),
    ("conv_transpose", "ConvTranspose2d", {"in_channels": 2,
                                           "out_channels": 2,
                                           "kernel_size": 2, "stride": 2},
     "1 2 3 3"),
    ("conv2d_4096", "Conv2d", {"in_channels": 4096, "out_channels": 4096,
                               "kernel_size": 3}, "1 4096 1 1"),
    ("conv2d_int32_channels", "Conv2d", {"in_channels": 2**31 - 1,
                                         "out_channels": 8,
                                         "kernel_size": 3}, "1 1 1 1"),
    ("conv2d_padding_2p53", "Conv2d", {"in_channels": 1, "out_channels": 1,
                                       "kernel_size": 3,
                                       "padding": [1, 2**53 + 1]},
     "1 1 4 4"),
]

# Graphs declaring a Conv2d no weights back (issue 41), for the bundle target.
BUNDLE_CONV_CONFIGS = [
    ("conv2d_4096_no_weights", {"in_channels": 4096, "out_channels": 4096,
                                "kernel_size": 3}),
    ("conv2d_int32_channels", {"in_channels": 2**31 - 1,
                               "out_channels": 4096, "kernel_size": 3}),
    ("conv2d_padding_2p53", {"in_channels": 1, "out_channels": 1,
                             "kernel_size": 3, "padding": [1, 2**53 + 1]}),
]


def module_config_seeds():
    for name, kind, config, sizes in MODULE_CONFIGS:
        write("module_config", name,
              "torch.nn.%s\n%s\n%s" % (kind, json.dumps(config), sizes))
    for name, config in BUNDLE_CONV_CONFIGS:
        graph = {"format": "fx-graph", "version": 1, "nodes": [
            {"name": "x", "op": "placeholder", "target": "x", "args": [],
             "kwargs": {}},
            {"name": "conv", "op": "call_module", "target": "conv",
             "args": [{"node": "x"}], "kwargs": {}},
            {"name": "output", "op": "output", "target": "output",
             "args": [{"node": "conv"}], "kwargs": {}}],
            "modules": {"conv": {"type": "torch.nn.Conv2d", "config": config,
                                 "training": False}}}
        write("bundle", name + ".bundle", json.dumps(graph))


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    reference_seeds(sys.argv[1])
    if len(sys.argv) == 3:
        torchvision_seeds(sys.argv[2])
    graph_kinds_seed()
    code_names_seed()
    torch_save_seeds()
    torch_save_bundle_seed()
    pipeline_seeds()
    plugin_info_seeds()
    module_config_seeds()
    quantized_seeds()


if __name__ == "__main__":
    main()
