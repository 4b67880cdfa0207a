#!/usr/bin/python3
"""Exports a model traced by torch.fx as an fx-graph bundle.

    python3 tools/torchfx_export.py (--torchvision NAME | --module FILE:CLASS)
        [--input-shape 1,3,224,224] [--seed 0] [--train] [--reference] -o DIR

writes, as docs/fx-graph-json.md (the fx-graph format's specification) says:
    DIR/graph.fx.json     the graph, the modules it calls, the weights' name
    DIR/model.weights.pt  every parameter and buffer of those modules and
                          every get_attr target (torch.save of a dict;
                          graph.fx.json's "weight_kinds" says what each is)
    DIR/input.pt          the example inputs (torch.save of a list)
    DIR/expected.pt       the eager model's output on them
and, with --reference, torch.fx's own text forms of the same graph:
    DIR/graph.txt         print(gm.graph), in the current docs' num_users form
    DIR/code.py           gm.code
DIR is written as a set (export()): a crash leaves the old bundle or the new
one, every file of the same export; DIR's other files are kept.

The model is put in eval mode, or with --train in training mode (model.train():
each module's own train() decides its mode, and the bundle records each
module's, as expected.pt was computed). Run it with Debian's /usr/bin/python3, which
has python3-torch and python3-torchvision.
"""

import argparse
import collections
import ctypes
import errno
import importlib.util
import inspect
import json
import math
import os
import re
import shutil
import stat
import sys
import tempfile

import torch
import torch.fx


def qualified_function_name(fn):
    """The name torch.fx prints for a call_function target (its node's
    _pretty_print_target): builtins.xyz, operator.xyz, else qualified."""
    module = getattr(fn, "__module__", None)
    name = getattr(fn, "__name__", None)
    if name is not None and module == "builtins":
        return "builtins." + name
    if name is not None and module == "_operator":
        return "operator." + name
    return torch.fx.node._get_qualified_name(fn)


def is_wrapped_by_default(target):
    """True when a reader of the file takes a call_function target for a
    torch.fx.wrap'ed function unless meta says otherwise (the spec)."""
    return not (target.startswith(("torch.", "operator.", "_operator."))
                or target == "builtins.getattr")


def module_type_name(module):
    cls = type(module)
    if getattr(torch.nn, cls.__name__, None) is cls:
        return "torch.nn." + cls.__name__
    return cls.__module__ + "." + cls.__qualname__


def is_symint(value):
    """torch 1.13's symbolic int (make_fx's symbolic mode): a SymIntNode, or
    the PySymInt behind it (meta['val'] of its size nodes)."""
    return isinstance(value, torch.SymIntNode) or (
        type(value).__name__ == "PySymInt"
        and type(value).__module__ == "torch.fx.experimental.symbolic_shapes")


def guard_text(expr, value):
    """One of torch 1.13's ShapeEnv guards (expr, the value it had at
    capture) as the relation that must hold, sympy's text: a relation kept
    as is, or negated when it was False; an int-valued expression as Eq(expr,
    value). Divisions that divisibility guards made exact (x/2) are cleared
    by multiplying both sides by the denominator, so the text is integer
    arithmetic."""
    import sympy
    from sympy.core.relational import Relational
    if isinstance(expr, Relational):
        relation = expr if bool(value) else sympy.Not(expr)
    elif value is sympy.true or value is sympy.false:
        relation = sympy.Ne(expr, 0) if bool(value) else sympy.Eq(expr, 0)
    else:
        relation = sympy.Eq(expr, value)
    if isinstance(relation, Relational):
        den = sympy.denom(sympy.together(relation.lhs - relation.rhs))
        if den.is_Integer and den > 1:
            relation = relation.func(sympy.expand(relation.lhs * den),
                                     sympy.expand(relation.rhs * den))
    return str(relation)


def shape_env(gm):
    """torch 1.13's gm.shape_env (make_fx's symbolic mode) in the format's
    "shape_env" form: {"hints": {symbol: int}, "guards": [relation]}, or
    None when gm has none."""
    env = getattr(gm, "shape_env", None)
    if env is None or not hasattr(env, "var_to_val"):
        return None
    return {"hints": {str(k): int(v) for k, v in env.var_to_val.items()},
            "guards": [guard_text(expr, value)
                       for expr, value, *_ in env.guards]}


def size(value, where):
    """A size of a tensor_meta: an int, or a symbolic int's encoding."""
    return encode(value, where) if is_symint(value) else int(value)


def encode(value, where):
    """A Python value in the file's ARG encoding."""
    if isinstance(value, torch.fx.Node):
        return {"node": value.name}
    if is_symint(value):
        return {"symint": str(value)}
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        if math.isinf(value):
            return {"float": "inf" if value > 0 else "-inf"}
        if math.isnan(value):
            return {"float": "nan"}
        return value
    if isinstance(value, str):
        return value
    if isinstance(value, torch.Size):
        return {"tuple": [encode(v, where) for v in value]}
    if isinstance(value, tuple) and hasattr(type(value), "_fields"):
        return named_tuple_entry(value, where)
    if isinstance(value, tuple):
        return {"tuple": [encode(v, where) for v in value]}
    if isinstance(value, list):
        return [encode(v, where) for v in value]
    if isinstance(value, dict):
        if all(isinstance(k, str) for k in value):
            return {"dict": {k: encode(v, where) for k, v in value.items()}}
        if not all(isinstance(k, (str, int, float)) for k in value):
            raise ValueError(f"{where}: a dict key that is not a str, bool, "
                             f"int or float")
        return {"keyed_dict": [[encode(k, where), encode(v, where)]
                               for k, v in value.items()]}
    if isinstance(value, slice):
        return {"slice": [encode(value.start, where), encode(value.stop, where),
                          encode(value.step, where)]}
    if value is Ellipsis:
        return {"ellipsis": None}
    if isinstance(value, torch.dtype):
        return {"dtype": str(value)}
    if isinstance(value, torch.device):
        return {"device": str(value)}
    if isinstance(value, torch.memory_format):
        return {"memory_format": str(value)}
    if isinstance(value, torch.layout):
        return {"layout": str(value)}
    if isinstance(value, torch.qscheme):
        return {"qscheme": str(value)}
    if isinstance(value, torch.nn.Module):
        # A constructor argument that is a module (TransformerEncoder's
        # layer): described as the file describes modules, as a dict ARG.
        return {"dict": {"type": module_type_name(value),
                         "config": {"dict": module_config(value)},
                         "training": value.training}}
    raise ValueError(f"{where}: cannot encode a {type(value).__name__}")


def named_tuple_repr(value, where):
    """How torch.fx's graph text shows a NamedTuple value: "fields" when its
    class's _custom_fx_repr_fn prints `Name(field=..., ...)`, "tuple" when
    it has none (or prints the tuple). Raises ValueError for any other
    _custom_fx_repr_fn (the file could not say how to print it)."""
    custom = getattr(value, "_custom_fx_repr_fn", None)
    if custom is None:
        return "tuple"
    shown = custom()
    format_arg = torch.fx.node._format_arg
    by_fields = f"{type(value).__name__}(" + ", ".join(
        f"{f}={format_arg(v)}" for f, v in zip(type(value)._fields, value)) + ")"
    if shown == by_fields:
        return "fields"
    if shown == format_arg(tuple(value)):
        return "tuple"
    raise ValueError(f"{where}: {type(value).__name__}'s _custom_fx_repr_fn "
                     f"prints {shown!r}, which the format cannot describe")


def named_tuple_entry(value, where):
    """A NamedTuple in the ARG form {"namedtuple": {"class", "fields",
    "items", "repr" (only "fields")}}: the class as torch.fx's code names it."""
    entry = {"class": torch.fx.node._get_qualified_name(type(value)),
             "fields": [str(f) for f in type(value)._fields],
             "items": [encode(v, where) for v in value]}
    if named_tuple_repr(value, where) == "fields":
        entry["repr"] = "fields"
    return {"namedtuple": entry}


# Constructor arguments a torch.nn class keeps under another attribute name.
ATTRIBUTE_ALIASES = {"PairwiseDistance": {"p": "norm"}}


def is_default_distance(value):
    """TripletMarginWithDistanceLoss stores PairwiseDistance() for None."""
    return (type(value) is torch.nn.PairwiseDistance and value.norm == 2.0
            and value.eps == 1e-6 and not value.keepdim)


# Constructor arguments a class takes through **kwargs (nn.RNN's
# nonlinearity), read from the attribute of the same name.
EXTRA_ATTRIBUTES = {"RNN": ["nonlinearity"]}

# Constructor arguments a class does not keep, derived from what it keeps.
TRANSFORMER_LAYER = {
    "d_model": lambda m: m.self_attn.embed_dim,
    "nhead": lambda m: m.self_attn.num_heads,
    "dim_feedforward": lambda m: m.linear1.out_features,
    "dropout": lambda m: m.dropout.p,
    "layer_norm_eps": lambda m: m.norm1.eps,
    "batch_first": lambda m: m.self_attn.batch_first,
}
def transformer_layer(stack):
    """The first layer of a Transformer's encoder or decoder."""
    return stack.layers[0]


TRANSFORMER = {
    "num_encoder_layers": lambda m: len(m.encoder.layers),
    "num_decoder_layers": lambda m: len(m.decoder.layers),
    "dim_feedforward": lambda m: transformer_layer(m.encoder).linear1.out_features,
    "dropout": lambda m: transformer_layer(m.encoder).dropout.p,
    "activation": lambda m: activation_name(
        transformer_layer(m.encoder).activation),
    "layer_norm_eps": lambda m: m.encoder.norm.eps,
    "norm_first": lambda m: transformer_layer(m.encoder).norm_first,
    # Transformer keeps no custom encoder apart from its `encoder`: the
    # stacks its own constructor builds from the arguments above.
    "custom_encoder": lambda m: None,
    "custom_decoder": lambda m: None,
}
DERIVED = {
    "TransformerEncoder": {"encoder_layer": lambda m: encode(
        m.layers[0], "module TransformerEncoder encoder_layer")},
    "TransformerDecoder": {"decoder_layer": lambda m: encode(
        m.layers[0], "module TransformerDecoder decoder_layer")},
    "Transformer": TRANSFORMER,
    # It keeps its cutoffs with n_classes appended.
    "AdaptiveLogSoftmaxWithLoss": {"cutoffs": lambda m: m.cutoffs[:-1]},
    "MultiheadAttention": {
        "bias": lambda m: m.in_proj_bias is not None,
        "add_bias_kv": lambda m: m.bias_k is not None,
    },
    "TransformerEncoderLayer": TRANSFORMER_LAYER,
    "TransformerDecoderLayer": TRANSFORMER_LAYER,
    # The eager-mode quantization stub: its constructor's numbers live in
    # 1-element buffers, its dtype (quint8, qint8, ...) in an attribute.
    # The quantized LeakyReLU keeps its output's scale and zero point in
    # 0-dim buffers (the float LeakyReLU's constructor has neither).
    "LeakyReLU": {
        "scale": lambda m: float(m.scale),
        "zero_point": lambda m: int(m.zero_point),
    },
    # The quantized norms take the float module's weight and bias as
    # constructor arguments (the weights file holds them) and keep their
    # output's scale and zero point in 0-dim buffers.
    **{norm: {
        "weight": lambda m: None,
        "bias": lambda m: None,
        "scale": lambda m: float(m.scale),
        "zero_point": lambda m: int(m.zero_point),
    } for norm in ("LayerNorm", "GroupNorm", "InstanceNorm1d",
                   "InstanceNorm2d", "InstanceNorm3d")},
    "Quantize": {
        "scale": lambda m: float(m.scale),
        "zero_point": lambda m: int(m.zero_point),
        "dtype": lambda m: encode(m.dtype, "module Quantize dtype"),
    },
}


def activation_name(fn):
    """The string a Transformer layer's activation callable was made from."""
    F = torch.nn.functional
    if fn is F.relu or isinstance(fn, torch.nn.ReLU):
        return "relu"
    if fn is F.gelu or isinstance(fn, torch.nn.GELU):
        return "gelu"
    raise ValueError(f"cannot encode the activation {fn!r} (only relu and "
                     "gelu have a name)")


# Constructor arguments whose stored value stands for the default None.
STORED_DEFAULTS = {"TripletMarginWithDistanceLoss": {
    "distance_function": is_default_distance}}


def init_parameters(cls):
    """The named parameters of cls's constructor. nn.LSTM and its siblings
    take (*args, **kwargs) and pass them on: the names are those of the
    first class up the MRO that names any."""
    for klass in cls.__mro__:
        if "__init__" not in vars(klass):
            continue
        params = [p for n, p in inspect.signature(klass.__init__)
                  .parameters.items() if n != "self"
                  and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
        if params:
            return params
    return []


def has_packed_weights(module):
    """A lowered quantized module (convert_fx's Conv2d, ConvReLU2d, Linear,
    LinearReLU, and the dynamic Linear and LinearReLU): its weights are
    packed, read with weight() and bias()."""
    return callable(getattr(module, "set_weight_bias", None)) and callable(
        getattr(module, "weight", None))


def is_dynamic_quantized(module):
    """torch.ao.nn.quantized.dynamic's Linear or an intrinsic dynamic
    LinearReLU: float in and out, no output quantization (its inherited
    scale and zero_point mean nothing)."""
    return ".quantized.dynamic." in type(module).__module__


def packed_module_tensors(module):
    """What a file holds for a has_packed_weights module: `weight`, `bias`
    (unless it has none), and, but for a dynamic one, its output's `scale`
    and `zero_point` as 0-dim float64 and int64 tensors (the scale keeps
    every bit of the float)."""
    tensors = {"weight": module.weight()}
    if module.bias() is not None:
        tensors["bias"] = module.bias()
    if not is_dynamic_quantized(module):
        tensors["scale"] = torch.tensor(float(module.scale),
                                        dtype=torch.float64)
        tensors["zero_point"] = torch.tensor(int(module.zero_point))
    return tensors


def reference_weight_qparams(module):
    """A reference quantized module's (convert_to_reference_fx's Linear,
    Conv2d, ...) weight_qparams as its constructor takes them: qscheme and
    dtype, and its weight_scale, weight_zero_point and weight_axis buffers'
    values (a list for a per-channel scale), which size those buffers."""
    def value(t):
        return t.tolist() if t.dim() > 0 else t.item()
    return {"qscheme": module.weight_qscheme, "dtype": module.weight_dtype,
            "scale": value(module.weight_scale),
            "zero_point": value(module.weight_zero_point),
            "axis": int(module.weight_axis)}


def is_fused(module):
    """torch.ao.nn.intrinsic's fused modules (ConvReLU2d(conv, relu), ...):
    a Sequential of the modules its constructor takes, in order."""
    return isinstance(module, torch.ao.nn.intrinsic._FusedModule)


def module_config(module):
    """The constructor keyword arguments that rebuild `module`."""
    config = {}
    cls = type(module).__name__
    aliases = ATTRIBUTE_ALIASES.get(cls, {})
    defaults = STORED_DEFAULTS.get(cls, {})
    names = [p.name for p in init_parameters(type(module))]
    names += EXTRA_ATTRIBUTES.get(cls, [])
    for name in names:
        where = f"module {cls} {name}"
        if (name in ("device", "dtype") and name not in DERIVED.get(cls, {})) \
                or (name == "mode" and isinstance(module, torch.nn.RNNBase)):
            continue  # RNNBase's mode is fixed by the subclass
        if name in DERIVED.get(cls, {}):
            config[name] = DERIVED[cls][name](module)
        elif name == "weight_qparams" and hasattr(module, "weight_qscheme"):
            config[name] = encode(reference_weight_qparams(module), where)
        elif is_fused(module):
            config[name] = encode(module[names.index(name)], where)
        elif name in ("bias", "bias_") and has_packed_weights(module):
            config[name] = module.bias() is not None
        elif name == "activation" and cls.endswith("Layer"):
            config[name] = activation_name(module.activation)
        elif name in defaults and defaults[name](getattr(module, name, None)):
            config[name] = None
        elif name in aliases:
            config[name] = encode(getattr(module, aliases[name]), where)
        elif name == "bias" and isinstance(getattr(module, "bias", None),
                                           (torch.Tensor, type(None))):
            config["bias"] = module.bias is not None
        elif hasattr(module, name):
            value = getattr(module, name)
            if not isinstance(value, torch.Tensor):
                config[name] = encode(value, where)
    return config


def split_top_level(text):
    """Splits on commas outside brackets."""
    parts, depth, start = [], 0, 0
    for i, c in enumerate(text):
        if c in "([":
            depth += 1
        elif c in ")]":
            depth -= 1
        elif c == "," and depth == 0:
            parts.append(text[start:i].strip())
            start = i + 1
    parts.append(text[start:].strip())
    return [p for p in parts if p]


def code_form_annotations(gm):
    """Each placeholder's annotation, and the return annotation, as gm.code
    spells them (torch.fx names non-torch types as globals:
    torchvision_models_googlenet_GoogLeNetOutputs)."""
    line = next(l for l in gm.code.splitlines() if l.startswith("def forward("))
    match = re.match(r"def forward\((.*)\)( -> (.*))?:$", line)
    params = split_top_level(match.group(1))[1:]  # drop self
    annotations = {}
    for param in params:
        name, _, rest = param.partition(" : ")
        if rest:
            annotations[name.strip()] = rest.split(" = ")[0].strip()
    return annotations, match.group(3)


def code_form_node_types(gm):
    """The type of each node other than placeholders and the output, as
    gm.code spells it on the node's line (`bn1 : TYPE = self.bn1(x)`);
    nodes without a type are not there."""
    if not any(n.type is not None and n.op not in ("placeholder", "output")
               for n in gm.graph.nodes):
        return {}
    return dict(re.findall(r"^    ([A-Za-z_]\w*) : (.+?) = ", gm.code,
                           flags=re.MULTILINE))


def tensor_meta(value):
    """shape_prop's TensorMetadata in the spec's tensor_meta form, or None
    (quantized tensors have no form there)."""
    if getattr(value, "is_quantized", True):
        return None
    return {"dict": {
        "shape": [size(d, "tensor_meta") for d in value.shape],
        "dtype": encode(value.dtype, "tensor_meta"),
        "stride": [size(d, "tensor_meta") for d in value.stride],
        "requires_grad": bool(value.requires_grad),
        "memory_format": encode(value.memory_format, "tensor_meta"),
    }}


def meta_type_name(cls):
    """meta['type'] (ShapeProp's type(result)) as the SDK's shape_prop
    writes it: torch.Tensor, int, tuple, torch.Size."""
    if cls is torch.Tensor:
        return "torch.Tensor"
    if cls.__module__ == "builtins":
        return cls.__qualname__
    return f"{cls.__module__}.{cls.__qualname__}"


def gradual_code_form(t):
    """The code form of a TensorType over ints and Dyn (TensorType[_1,
    torch.fx.tensor_type._DynType] as torch.fx's code spells it), or None."""
    from torch.fx.tensor_type import Dyn, TensorType
    if not isinstance(t, TensorType) or not all(
            d is Dyn or (type(d) is int and d >= 0) for d in t.__args__):
        return None
    dims = ["torch.fx.tensor_type._DynType" if d is Dyn else f"_{d}"
            for d in t.__args__]
    return f"torch.fx.tensor_type.TensorType[{','.join(dims)}]"


def broadcast_operand_type(node, key, value):
    """The (code form, graph text) pair an operand's broadcast type is kept
    as in an add's meta (torch's GraphTypeChecker leaves a TensorType under
    each operand's name where meta['broadcast'] is True), or None."""
    if node.meta.get("broadcast") is not True or not any(
            isinstance(a, torch.fx.Node) and a.name == key
            for a in node.args[:2]):
        return None
    code = gradual_code_form(value)
    return None if code is None else (code, repr(value))


def node_meta(node):
    """The node's meta entries the format can hold (ARG values, a class
    in meta['type'] by its name, tensor_meta in the spec's form, and an
    add's broadcast operand types as (code form, text)); the rest (tensors,
    other types, arbitrary objects) are left out."""
    meta = {}
    for key, value in node.meta.items():
        if key == "is_wrapped" or not isinstance(key, str):
            continue
        try:
            operand_type = broadcast_operand_type(node, key, value)
            if operand_type is not None:
                encoded = encode(operand_type, key)
            elif key == "tensor_meta" and \
                    type(value).__name__ == "TensorMetadata":
                encoded = tensor_meta(value)
            elif key == "type" and isinstance(value, type):
                encoded = meta_type_name(value)
            else:
                encoded = encode(value, key)
        except ValueError:
            continue
        if encoded is not None:
            meta[key] = encoded
    return meta


GRAPH_MODULE_TYPE = "torch.fx.graph_module.GraphModule"


TYPING_GENERICS = {"List", "Tuple", "Dict", "Optional", "Union", "Any",
                   "Callable", "Sequence", "Set", "FrozenSet", "Type",
                   "Iterable", "Iterator"}


def type_text_form(code_form):
    """How a reader prints an annotation spelled `code_form` when the file
    gives no "type_text" (the rule of fx_core/ir/python_repr.cc's
    type_text_form: typing's generics as typing.X, ", " between arguments,
    Union[X, NoneType] as Optional[X]; the rest as it is)."""
    text, pos = _type_text_at(code_form, 0)
    return text + code_form[pos:]


def _type_text_at(code, pos):
    start = pos
    while pos < len(code) and code[pos] not in "[,]":
        pos += 1
    word = code[start:pos].strip(" ")
    generic = word[len("typing_"):] if word.startswith("typing_") else word
    name = f"typing.{generic}" if generic in TYPING_GENERICS else word
    if pos >= len(code) or code[pos] != "[":
        return name, pos
    args, pos = [], pos + 1
    while pos < len(code):
        arg, pos = _type_text_at(code, pos)
        args.append(arg)
        if pos < len(code) and code[pos] == ",":
            pos += 1
            continue
        if pos < len(code) and code[pos] == "]":
            pos += 1
        break
    if generic == "Union" and len(args) == 2 and "NoneType" in args:
        other = args[1] if args[0] == "NoneType" else args[0]
        return f"typing.Optional[{other}]", pos
    return f"{name}[{', '.join(args)}]", pos


def node_entry(node, annotations, return_annotation, meta, node_types):
    """One NODE of the file (a dict, ready for json.dump)."""
    where = f"node '{node.name}'"
    if node.op == "call_function":
        target = qualified_function_name(node.target)
    else:
        target = node.target
    entry = {
        "name": node.name,
        "op": node.op,
        "target": target,
        "args": [encode(a, where) for a in node.args],
        "kwargs": {k: encode(v, where) for k, v in node.kwargs.items()},
    }
    entry_meta = node_meta(node) if meta else {}
    if node.op == "call_function":
        wrapped = bool(node.meta.get("is_wrapped", False))
        if wrapped != is_wrapped_by_default(target):
            # The reader would take it for a torch.fx.wrap'ed function, or
            # not (a builtin the user wrapped: torch.fx.wrap("getattr")).
            entry_meta["is_wrapped"] = wrapped
    if node.op == "placeholder" and node.target in annotations:
        # The code's parameter is the target ("input"); the node may be
        # named apart from it ("input_1").
        entry["type"] = annotations[node.target]
    elif node.op == "output" and return_annotation:
        entry["type"] = return_annotation
    elif node.type is not None and node.op not in ("placeholder", "output"):
        entry["type"] = node_types.get(node.name,
                                       torch.fx.node._type_repr(node.type))
    if "type" in entry and node.type is not None:
        text = torch.fx.node._type_repr(node.type)
        if text != type_text_form(entry["type"]):
            entry["type_text"] = text
    if entry_meta:
        entry["meta"] = entry_meta
    return entry


def graph_nodes(gm, meta):
    annotations, return_annotation = code_form_annotations(gm)
    node_types = code_form_node_types(gm)
    return [node_entry(n, annotations, return_annotation, meta, node_types)
            for n in gm.graph.nodes]


def called_modules(gm):
    """The modules gm's call_module nodes call, by path, in first-use
    order."""
    modules = {}
    for node in gm.graph.nodes:
        if node.op == "call_module" and node.target not in modules:
            modules[node.target] = gm.get_submodule(node.target)
    return modules


def as_dict_arg(entry, keys):
    """entry as a dict ARG, its objects under `keys` dict ARGs too."""
    return {"dict": {k: {"dict": v} if k in keys else v
                     for k, v in entry.items()}}


def module_entry(module, meta):
    """A MODULE of the file. A GraphModule (fuse_by_partitions' and
    split_module's children) is described by its constructor's arguments:
    root (the modules it calls, each a dict ARG), graph (its NODEs as dict
    ARGs) and class_name; its tensors go to the weights."""
    if not isinstance(module, torch.fx.GraphModule):
        return {"type": module_type_name(module),
                "config": module_config(module),
                "training": module.training}
    root = {path: as_dict_arg(module_entry(sub, meta), {"config"})
            for path, sub in called_modules(module).items()}
    graph = [as_dict_arg(n, {"kwargs", "meta"})
             for n in graph_nodes(module, meta)]
    return {"type": GRAPH_MODULE_TYPE,
            "config": {"root": {"dict": root}, "graph": graph,
                       "class_name": type(module).__name__},
            "training": module.training}


def weight_kind(module, path):
    """The file's weight kind of the tensor at `path` in `module`: a
    "parameter" (requires_grad) or "frozen_parameter" (not), a "buffer" or
    "non_persistent_buffer", or a plain "tensor" attribute."""
    owner_path, _, leaf = path.rpartition(".")
    owner = module.get_submodule(owner_path)
    if leaf in owner._parameters:
        return ("parameter" if owner._parameters[leaf].requires_grad
                else "frozen_parameter")
    if leaf in owner._buffers:
        return ("non_persistent_buffer"
                if leaf in owner._non_persistent_buffers_set else "buffer")
    return "tensor"


def default_kind(target, tensor):
    """What a reader assumes of a get_attr tensor the file gives no kind:
    a parameter when it can be one, except torch.fx's tensor constants (the
    file records only kinds that differ, so models without such attributes
    are written as they always were)."""
    if target.startswith("_tensor_constant") or not (
            tensor.is_floating_point() or tensor.is_complex()):
        return "buffer"
    return "parameter"


def submodule(gm, node):
    """The module a call_module node calls; ValueError naming the node when
    gm has none at its target (torch.fx 1.13's subgraph rewriter can leave
    a replacement's submodule out of the root)."""
    try:
        return gm.get_submodule(node.target)
    except AttributeError:
        raise ValueError(f"node '{node.name}' (call_module) refers to "
                         f"'{node.target}', which the module does not "
                         f"have") from None


def check_storable(weights):
    """ValueError naming the first of `weights` (name -> tensor) that a
    weights file cannot hold: one without storage (MKLDNN layout, as
    optimize_for_inference makes), which torch.save cannot write."""
    for name, tensor in weights.items():
        if tensor.is_mkldnn:
            raise ValueError(
                f"weight '{name}' is an MKLDNN-layout tensor, which has no "
                f"storage a weights file can hold (torch.fx.experimental."
                f"optimization's optimize_for_inference makes such weights; "
                f"export the model before it, or use fx_sdk.from_torch_fx "
                f"in process)")


def add_attributes(gm, node, modules, weights, copy_weights, meta=False,
                   kinds=None):
    """What a call_module or get_attr node refers to: the module's entry in
    `modules` (module_entry; a child GraphModule's nodes with their meta
    when `meta`) and its parameters and buffers in `weights`, or the
    get_attr tensor in `weights` (clones, or with copy_weights=False gm's
    own tensors); in `kinds` when given, each weight's kind (weight_kind)
    where it is not what a reader assumes."""
    if kinds is None:
        kinds = {}
    if node.op == "call_module" and node.target not in modules:
        sub = submodule(gm, node)
        try:
            modules[node.target] = module_entry(sub, meta)
        except AttributeError as e:  # not a class module_config knows
            raise ValueError(
                f"module '{node.target}' ({module_type_name(sub)}) cannot be "
                f"written to a file: its constructor arguments cannot be "
                f"read back ({e}); a module of a class the SDK does not know "
                f"runs only in process (fx_sdk.from_torch_fx)") from None
        packed = has_packed_weights(sub)
        tensors = (packed_module_tensors(sub) if packed else
                   sub.state_dict(keep_vars=not copy_weights))
        for key, tensor in tensors.items():
            if not isinstance(tensor, torch.Tensor):
                # A reference quantized module's weight_qscheme and
                # weight_dtype: its config's weight_qparams hold them.
                continue
            weights[node.target + "." + key] = (
                tensor.detach().clone() if copy_weights else tensor)
            kind = "buffer" if packed else weight_kind(sub, key)
            if kind not in ("parameter", "buffer"):  # what readers assume
                kinds[node.target + "." + key] = kind
    elif node.op == "get_attr":
        value = gm
        for atom in node.target.split("."):
            value = getattr(value, atom)
        if not isinstance(value, torch.Tensor):
            raise ValueError(
                f"node '{node.name}' (get_attr) reads '{node.target}', a "
                f"{type(value).__qualname__} object, not a tensor: a graph "
                f"file holds tensors only (fx_sdk.from_torch_fx keeps such "
                f"objects in process)")
        weights[node.target] = (
            value.detach().clone() if copy_weights else value)
        kind = weight_kind(gm, node.target)
        if kind != default_kind(node.target, value):
            kinds[node.target] = kind


def tree_type_name(typ):
    """A TreeSpec's type as the format's "pytree" entry spells it (as
    torch's TreeSpec repr does)."""
    return "namedtuple" if typ is collections.namedtuple else typ.__name__


# torch's own pytree node types, the ones the format's SPEC names.
TREE_TYPES = ("tuple", "list", "namedtuple", "dict", "OrderedDict",
              "immutable_list", "immutable_dict")


def user_tree_type(spec):
    """The first pytree node type in `spec` (a TreeSpec, or None) that is a
    user's (registered with torch.utils._pytree._register_pytree_node), or
    None when every type is torch's own."""
    if spec is None or spec.type is None:
        return None
    if tree_type_name(spec.type) not in TREE_TYPES:
        return spec.type
    for child in spec.children_specs:
        found = user_tree_type(child)
        if found is not None:
            return found
    return None


def class_name(cls):
    """A class as the format names it: module and qualified name."""
    return f"{cls.__module__}.{cls.__qualname__}"


def tree_spec_entry(spec, where, name_of=class_name):
    """A torch TreeSpec in the format's SPEC form: "*" for a leaf, else
    {"type", "context" (dict types' keys, a namedtuple's class, named by
    name_of, and fields), "children"}."""
    if spec.type is None:  # LeafSpec
        return "*"
    entry = {"type": tree_type_name(spec.type)}
    if entry["type"] not in TREE_TYPES:
        raise ValueError(
            f"{where}: {class_name(spec.type)} is a user's pytree node type "
            f"(torch.utils._pytree._register_pytree_node); a file cannot hold "
            f"its flatten and unflatten functions")
    if entry["type"] == "namedtuple":
        entry["context"] = {"class": name_of(spec.context),
                            "fields": list(spec.context._fields)}
    elif spec.context is not None:
        entry["context"] = [encode(key, where) for key in spec.context]
    entry["children"] = [tree_spec_entry(c, where, name_of)
                         for c in spec.children_specs]
    return entry


def pytree_entry(gm, name_of=class_name):
    """The format's "pytree" entry for a graph whose codegen is torch's
    _PyTreeCodeGen: {"orig_args", "in_spec", "out_spec"}, namedtuple
    classes named by name_of; None for other graphs."""
    codegen = gm.graph._codegen
    info = getattr(codegen, "pytree_info", None)
    if not isinstance(codegen, torch.fx.graph._PyTreeCodeGen) or info is None:
        return None
    out_spec = info.out_spec
    return {"orig_args": list(info.orig_args),
            "in_spec": tree_spec_entry(info.in_spec, "pytree in_spec", name_of),
            "out_spec": (None if out_spec is None else
                         tree_spec_entry(out_spec, "pytree out_spec", name_of))}


def graph_document(gm, copy_weights=True, meta=False):
    """gm as an fx-graph document (a dict, ready for json.dump) and the
    weights it names (qualified name -> tensor): clones, or with
    copy_weights=False gm's own tensors. With meta=True each node's meta
    goes too, what the format can hold of it (node_meta). Raises ValueError
    naming the node or module that cannot be encoded."""
    codegen = type(gm.graph._codegen)
    if codegen not in (torch.fx.graph.CodeGen, torch.fx.graph._PyTreeCodeGen):
        raise ValueError(f"the graph's code generator is a {codegen.__qualname__} "
                         f"(a user's CodeGen subclass), which a file cannot hold")
    modules, weights, kinds = {}, {}, {}
    for node in gm.graph.nodes:
        add_attributes(gm, node, modules, weights, copy_weights, meta, kinds)
    document = {"format": "fx-graph", "version": 1,
                "nodes": graph_nodes(gm, meta)}
    pytree = pytree_entry(gm)
    if pytree is not None:
        document["pytree"] = pytree
    if modules:
        document["modules"] = modules
    if kinds:
        document["weight_kinds"] = kinds
    env = shape_env(gm) if meta else None
    if env is not None:
        document["shape_env"] = env
    return document, weights


def write_atomically(path, write):
    """Replaces `path` with what `write(file)` writes, through a temporary
    beside it with an unpredictable name (mkstemp: O_EXCL, O_NOFOLLOW)
    renamed over it, so a reader sees the old file or the whole new one. The
    file keeps the permissions of the one it replaces (a new one gets 0666
    less the umask)."""
    directory = os.path.dirname(path) or "."
    try:
        mode = os.stat(path).st_mode & 0o7777
    except FileNotFoundError:
        umask = os.umask(0)
        os.umask(umask)
        mode = 0o666 & ~umask
    fd, tmp = tempfile.mkstemp(prefix=os.path.basename(path) + ".tmp.",
                               dir=directory)
    try:
        with os.fdopen(fd, "wb") as f:
            os.fchmod(f.fileno(), mode)
            write(f)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


WEIGHTS_NAMES = ("model.weights.pt", "model.weights.1.pt")


def current_weights_name(out_dir):
    """The weights file the graph in `out_dir` names now, or None."""
    try:
        with open(os.path.join(out_dir, "graph.fx.json"), "rb") as f:
            name = json.load(f).get("weights")
    except (OSError, ValueError, AttributeError):
        return None
    return name if isinstance(name, str) else None


# The files of a bundle directory export writes: a directory it replaces
# loses them and its Python bytecode cache (__pycache__, of a model module
# kept there); its other files are kept.
BUNDLE_FILES = ("graph.fx.json",) + WEIGHTS_NAMES + (
    "input.pt", "expected.pt", "graph.txt", "code.py")
DROPPED = BUNDLE_FILES + ("__pycache__",)

_AT_FDCWD = -100
_RENAME_NOREPLACE = 1
_RENAME_EXCHANGE = 2


def _renameat2(source, target, flags):
    """renameat2(2) (glibc 2.28+); OSError on failure (EINVAL or ENOSYS
    where the file system or the kernel lacks the flag)."""
    libc = ctypes.CDLL(None, use_errno=True)
    renameat2 = getattr(libc, "renameat2", None)
    if renameat2 is None:
        raise OSError(errno.ENOSYS, os.strerror(errno.ENOSYS), source)
    renameat2.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int,
                          ctypes.c_char_p, ctypes.c_uint]
    if renameat2(_AT_FDCWD, os.fsencode(source), _AT_FDCWD,
                 os.fsencode(target), flags) != 0:
        error = ctypes.get_errno()
        raise OSError(error, os.strerror(error), source, None, target)


def _files_to_keep(target, out_dir):
    """The entries of the existing directory `target` that are not the
    bundle's (kept in the new one). The directory is replaced as a whole, so
    one holding a directory of its own, or the current directory, is
    refused."""
    inside = os.path.relpath(os.path.realpath(os.getcwd()), target)
    if inside != ".." and not inside.startswith(".." + os.sep):
        raise ValueError(f"{out_dir}: is the current directory or holds it; "
                         "refusing to replace it (the bundle's directory is "
                         "replaced as a whole)")
    kept = []
    for entry in os.scandir(target):
        if entry.name in DROPPED:
            continue
        if entry.is_dir(follow_symlinks=False):
            raise ValueError(
                f"{out_dir}: holds the directory '{entry.name}', which is not "
                "the bundle's; refusing to replace the directory (it is "
                "replaced as a whole, keeping only its other files)")
        kept.append(entry.name)
    return kept


def _commit(tmp, target, replaces):
    """`tmp` takes the place of `target` in one rename; returns what is left
    at `tmp` to remove (the old directory, or nothing)."""
    if not replaces:
        try:
            _renameat2(tmp, target, _RENAME_NOREPLACE)
        except OSError as e:
            if e.errno not in (errno.EINVAL, errno.ENOSYS):
                raise
            os.rename(tmp, target)
        return None
    try:
        _renameat2(tmp, target, _RENAME_EXCHANGE)
        return tmp
    except OSError as e:
        if e.errno not in (errno.EINVAL, errno.ENOSYS):
            raise
    # No RENAME_EXCHANGE here: the old directory goes aside first.
    aside = tempfile.mkdtemp(prefix=os.path.basename(tmp) + ".old.",
                             dir=os.path.dirname(target))
    try:
        os.rename(target, aside)
    except BaseException:
        os.rmdir(aside)
        raise
    try:
        os.rename(tmp, target)
    except BaseException:
        os.rename(aside, target)
        raise
    return aside


def export(gm, example_inputs, out_dir, reference=False):
    """Writes gm as a bundle in `out_dir` (graph.fx.json and its weights),
    with input.pt, expected.pt and, for a reference, graph.txt and code.py.

    The directory is written as a set: every file goes into a fresh
    directory beside `out_dir` (`.NAME.export.*`), which then takes its
    place in one rename (renameat2: RENAME_NOREPLACE for a new directory,
    RENAME_EXCHANGE for an existing one, whose old contents are removed
    after). A crash at any point leaves the old bundle loadable and
    unchanged, or the new one whole (and at worst that directory beside
    it). An existing `out_dir` loses the bundle's files (BUNDLE_FILES) and
    its __pycache__, and keeps its other files (hard-linked into the new
    directory) and its permissions; one that holds another directory, the
    current directory and a path that is not a directory (a symlink to
    nothing included) are refused (ValueError; main() reports it in one line
    and exits with status 2). A symlink to a directory is followed. On a file system
    without RENAME_EXCHANGE the old directory is renamed aside first (a
    crash between the two renames leaves it there)."""
    document, weights = graph_document(gm)
    check_storable(weights)
    target = os.path.realpath(out_dir)
    replaces = os.path.lexists(target)
    if (os.path.lexists(out_dir) and not os.path.isdir(out_dir)) or (
            replaces and not os.path.isdir(target)):
        # A file, or a symlink to nothing (as fx::to_folder refuses it).
        raise ValueError(f"{out_dir}: exists and is not a directory; "
                         "refusing to replace it")
    kept = _files_to_keep(target, out_dir) if replaces else []
    parent = os.path.dirname(target)
    os.makedirs(parent, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix="." + os.path.basename(target) + ".export.",
                           dir=parent)
    try:
        if weights:
            document["weights"] = WEIGHTS_NAMES[0]
            write_atomically(os.path.join(tmp, WEIGHTS_NAMES[0]),
                             lambda f: torch.save(weights, f))
        write_atomically(os.path.join(tmp, "input.pt"),
                         lambda f: torch.save(list(example_inputs), f))
        with torch.no_grad():
            expected = gm(*example_inputs)
        write_atomically(os.path.join(tmp, "expected.pt"),
                         lambda f: torch.save(expected, f))
        if reference:
            text = re.sub(r"\[#users=", "[num_users=", str(gm.graph)) + "\n"
            write_atomically(os.path.join(tmp, "graph.txt"),
                             lambda f: f.write(text.encode()))
            write_atomically(os.path.join(tmp, "code.py"),
                             lambda f: f.write(gm.code.encode()))
        graph = json.dumps(document, indent=1).encode()
        write_atomically(os.path.join(tmp, "graph.fx.json"),
                         lambda f: f.write(graph))
        if replaces:
            for name in os.listdir(tmp):
                try:
                    mode = os.lstat(os.path.join(target, name)).st_mode
                except FileNotFoundError:
                    continue
                if stat.S_ISREG(mode):
                    os.chmod(os.path.join(tmp, name), mode & 0o7777)
            for name in kept:
                os.link(os.path.join(target, name), os.path.join(tmp, name),
                        follow_symlinks=False)
        # The directory's mode last, once everything is in it (so a 0555
        # directory is replaced too).
        if replaces:
            os.chmod(tmp, os.stat(target).st_mode & 0o7777)
        else:
            umask = os.umask(0)
            os.umask(umask)
            os.chmod(tmp, 0o777 & ~umask)
        tmp = _commit(tmp, target, replaces)
    finally:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)


def load_module(spec):
    path, _, cls = spec.partition(":")
    if not cls:
        raise SystemExit(f"--module {spec}: expected FILE:CLASS")
    loader = importlib.util.spec_from_file_location("exported_module", path)
    mod = importlib.util.module_from_spec(loader)
    loader.loader.exec_module(mod)
    return getattr(mod, cls)()


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--torchvision", metavar="NAME")
    source.add_argument("--module", metavar="FILE:CLASS")
    parser.add_argument("--input-shape", default="1,3,224,224")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--train", action="store_true",
                        help="export in training mode (model.train())")
    parser.add_argument("--reference", action="store_true",
                        help="also write torch.fx's graph.txt and code.py")
    parser.add_argument("-o", "--output", required=True, metavar="DIR")
    args = parser.parse_args(argv)

    torch.manual_seed(args.seed)
    if args.torchvision:
        import torchvision.models
        model = getattr(torchvision.models, args.torchvision)()
    else:
        model = load_module(args.module)
    model.train(args.train)
    gm = torch.fx.symbolic_trace(model)
    shape = [int(d) for d in args.input_shape.split(",")]
    example = [torch.rand(*shape)]
    try:
        export(gm, example, args.output, reference=args.reference)
    except ValueError as e:
        # A refusal (what cannot be replaced, a graph the format cannot
        # hold): one line, as argparse reports a bad argument.
        print(f"{parser.prog}: error: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
