#!/usr/bin/python3
"""Rebuilds a torch.fx GraphModule from an fx-graph bundle and checks it.

    python3 tools/torchfx_import.py DIR [--inputs IN.pt] [--expected OUT.pt]
        [--rtol 1e-4] [--atol 1e-5] [--print]

reads DIR/graph.fx.json (../shared/spec/fx-graph-json.md) and the weights it
names, builds the modules from their types and configs, and the graph node by
node with torch.fx's Graph API. With inputs (default DIR/input.pt when
present) it runs the GraphModule and compares with the expected output
(default DIR/expected.pt when present): exit status 0 when allclose, 1 when
not, 2 on a bundle it cannot read. --print shows the graph and gm.code.

Use it to bring a graph back to Python after C++ passes: the rebuilt module
is a plain torch.fx GraphModule.
"""

import argparse
import collections
import importlib
import json
import math
import os
import re
import sys

import torch
import torch.fx
import torch.fx.immutable_collections
import torch.utils._pytree as pytree


class BundleError(Exception):
    pass


def resolve(qualified_name, where):
    """The Python object a dotted target names (operator.add, torch.relu,
    torch._C._nn.linear, torchvision.ops.stochastic_depth.stochastic_depth)."""
    atoms = qualified_name.split(".")
    if atoms[0] == "builtins":
        import builtins
        return getattr(builtins, atoms[1])
    # The longest importable module prefix, then attributes
    # (torchvision.ops.stochastic_depth is both a module and a function).
    for split in range(len(atoms) - 1, 0, -1):
        try:
            obj = importlib.import_module(".".join(atoms[:split]))
        except ImportError:
            continue
        try:
            for atom in atoms[split:]:
                obj = getattr(obj, atom)
            return obj
        except AttributeError:
            continue
    raise BundleError(f"{where}: {qualified_name} does not exist")


def decode(value, nodes, where):
    if isinstance(value, list):
        return [decode(v, nodes, where) for v in value]
    if not isinstance(value, dict):
        return value
    if len(value) != 1:
        raise BundleError(f"{where}: an object must have exactly one key")
    (kind, payload), = value.items()
    if kind == "node":
        if payload not in nodes:
            raise BundleError(f"{where}: node '{payload}' is not defined before")
        return nodes[payload]
    if kind == "tuple":
        return tuple(decode(v, nodes, where) for v in payload)
    if kind == "dict":
        return {k: decode(v, nodes, where) for k, v in payload.items()}
    if kind == "keyed_dict":
        if not isinstance(payload, list) or not all(
                isinstance(p, list) and len(p) == 2 for p in payload):
            raise BundleError(f"{where}: 'keyed_dict' holds [KEY, VALUE] pairs")
        return {decode(k, nodes, where): decode(v, nodes, where)
                for k, v in payload}
    if kind == "namedtuple":
        return named_tuple(payload, nodes, where)
    if kind == "slice":
        return slice(*(decode(v, nodes, where) for v in payload))
    if kind == "ellipsis":
        return Ellipsis
    if kind == "float":
        return float(payload)
    if kind in ("dtype", "memory_format", "layout"):
        return resolve(payload, where)
    if kind == "device":
        return torch.device(payload)
    if kind == "symint":
        return symint(payload, where)
    raise BundleError(f"{where}: unknown value kind '{kind}'")


def named_tuple(payload, nodes, where):
    """A NamedTuple ARG's value: its class resolved by the name the file
    gives (importing its module, as call_function targets are), which must
    be a NamedTuple class with the file's fields. A class the writing
    process made inside a function ("mod.Pair#7f..", or one no import
    finds) cannot be rebuilt from a file: BundleError naming it."""
    if not isinstance(payload, dict) or not isinstance(
            payload.get("class"), str) or not isinstance(
            payload.get("items"), list):
        raise BundleError(f"{where}: 'namedtuple' holds class, fields, items")
    name = payload["class"]
    if "#" in name:
        raise BundleError(
            f"{where}: NamedTuple class {name.split('#')[0]} was made inside "
            f"a function of the process that wrote the file; a file cannot "
            f"name it")
    cls = resolve(name, f"{where}: NamedTuple class")
    if not (isinstance(cls, type) and issubclass(cls, tuple) and
            list(getattr(cls, "_fields", ())) == payload.get("fields")):
        raise BundleError(f"{where}: {name} is not a NamedTuple class with "
                          f"fields {payload.get('fields')}")
    return cls(*(decode(v, nodes, where) for v in payload["items"]))


# A symbolic int's expression, as sympy prints it (the format's "symint"):
# integers, size symbols (torch 1.13's t0.size(0), t0.stride(1),
# t0.storage_offset(), or plain names such as s0), + - * // %, parentheses,
# FloorDiv(a, b) and Mod(a, b).
_SYM_TOKEN = re.compile(
    r"\s*(?:(\d+)|(FloorDiv|Mod)\(|([A-Za-z_]\w*(?:\.(?:size|stride)\(\d+\)"
    r"|\.storage_offset\(\))?)|(\*\*|//|[-+*%(),]))")
_SHAPE_ENV = None


class _SymParser:
    """Reads an expression into sympy without evaluating any text as
    Python (the text comes from files)."""

    def __init__(self, text, where):
        self.text, self.where, self.pos, self.depth = text, where, 0, 0
        import sympy
        from torch.fx.experimental import symbolic_shapes
        self.sympy, self.floordiv = sympy, symbolic_shapes.FloorDiv

    def fail(self, what):
        raise BundleError(f"{self.where}: symbolic int '{self.text}': {what} "
                          f"at offset {self.pos}")

    def token(self, consume=True):
        m = _SYM_TOKEN.match(self.text, self.pos)
        if m is None or m.end() == self.pos:
            return None
        if consume:
            self.pos = m.end()
        return m

    def expect(self, op):
        m = self.token()
        if m is None or m.group(4) != op:
            self.fail(f"expected '{op}'")

    def parse(self):
        expr = self.sum()
        if self.text[self.pos:].strip():
            self.fail("unexpected text")
        return expr

    def sum(self):
        expr = self.product()
        while (m := self.token(False)) is not None and m.group(4) in "+-":
            self.token()
            rhs = self.product()
            expr = expr + rhs if m.group(4) == "+" else expr - rhs
        return expr

    def product(self):
        expr = self.unary()
        while (m := self.token(False)) is not None and m.group(4) in (
                "*", "//", "%"):
            self.token()
            rhs = self.unary()
            op = m.group(4)
            expr = (expr * rhs if op == "*" else self.floordiv(expr, rhs)
                    if op == "//" else self.sympy.Mod(expr, rhs))
        return expr

    def unary(self):
        self.depth += 1
        if self.depth > 200:
            self.fail("nested too deeply")
        m = self.token(False)
        if m is not None and m.group(4) == "-":
            self.token()
            out = -self.unary()
        else:
            out = self.atom()
            if (m := self.token(False)) is not None and m.group(4) == "**":
                out = out ** self.exponent()
        self.depth -= 1
        return out

    def exponent(self):
        """After `**`: sympy prints powers of sizes with integer exponents."""
        self.token()
        m = self.token()
        if m is None or m.group(1) is None:
            self.fail("expected an integer exponent")
        if int(m.group(1)) > 64:
            self.fail("exponent too large")
        return int(m.group(1))

    def atom(self):
        m = self.token()
        if m is None:
            self.fail("expected a number, a symbol or '('")
        if m.group(1) is not None:
            out = self.sympy.Integer(int(m.group(1)))
        elif m.group(2) is not None:
            a = self.sum()
            self.expect(",")
            b = self.sum()
            self.expect(")")
            out = (self.floordiv(a, b) if m.group(2) == "FloorDiv"
                   else self.sympy.Mod(a, b))
        elif m.group(3) is not None:
            out = self.sympy.Symbol(m.group(3), positive=True, integer=True)
        elif m.group(4) == "(":
            out = self.sum()
            self.expect(")")
        else:
            self.fail("expected a number, a symbol or '('")
        return out


def symint(text, where="symint"):
    """torch 1.13's SymInt for an expression of the format's "symint"."""
    global _SHAPE_ENV
    from torch.fx.experimental import symbolic_shapes
    if not isinstance(text, str):
        raise BundleError(f"{where}: 'symint' must hold a string")
    expr = _SymParser(text, where).parse()
    if _SHAPE_ENV is None:
        _SHAPE_ENV = symbolic_shapes.ShapeEnv()
    return torch.SymIntNode.new_symint(
        symbolic_shapes.PySymInt(expr, _SHAPE_ENV))


def decode_meta(key, value, nodes, where):
    """A meta value; tensor_meta in the spec's form becomes shape_prop's
    TensorMetadata and meta['type'] the class, as torch.fx's ShapeProp
    leaves them."""
    decoded = decode(value, nodes, where)
    if key == "tensor_meta":
        return tensor_metadata(decoded)
    if key == "type":
        return meta_type(decoded)
    return decoded


def meta_type(name):
    """The class a meta['type'] string names (ShapeProp records
    type(result): torch.Tensor, tuple, int, torch.Size, ...), or the string
    itself when it names none."""
    if not isinstance(name, str):
        return name
    import builtins
    if name == "NoneType":
        return type(None)
    found = getattr(builtins, name, None) if "." not in name else None
    if isinstance(found, type):
        return found
    try:
        found = resolve(name, "type")
    except BundleError:
        return name
    return found if isinstance(found, type) else name


def tensor_metadata(value):
    """A decoded tensor_meta value: shape_prop's TensorMetadata when it has
    the spec's form, else the value itself."""
    if isinstance(value, dict) and {"shape", "dtype", "stride"} <= value.keys():
        from torch.fx.passes.shape_prop import TensorMetadata
        return TensorMetadata(
            torch.Size(value["shape"]), value["dtype"],
            value.get("requires_grad", False), tuple(value["stride"]),
            value.get("memory_format"), False, {})
    return value


def set_path(root, path, value):
    *parents, leaf = path.split(".")
    for atom in parents:
        if not hasattr(root, atom):
            root.add_module(atom, torch.nn.Module())
        root = getattr(root, atom)
    if isinstance(value, torch.nn.Module):
        root.add_module(leaf, value)
    elif isinstance(value, torch.nn.Parameter):
        root.register_parameter(leaf, value)
    else:
        root.register_buffer(leaf, value)


def load_bundle(directory):
    path = os.path.join(directory, "graph.fx.json")
    try:
        with open(path) as f:
            doc = json.load(f)
    except (OSError, ValueError) as e:
        raise BundleError(f"{path}: {e}")
    if doc.get("format") != "fx-graph" or doc.get("version") != 1:
        raise BundleError(f"{path}: not an fx-graph version 1 file")
    weights = {}
    if "weights" in doc:
        weights = torch.load(os.path.join(directory, doc["weights"]))
    return build_graph_module(doc, weights)


def is_wrapped_by_default(target):
    """As the spec says: a call_function target outside torch, operator and
    builtins.getattr comes from torch.fx.wrap unless meta says otherwise."""
    return not (target.startswith(("torch.", "operator.", "_operator."))
                or target == "builtins.getattr")


def new_module(cls, config, share):
    """cls(**config); with share, without initialising weights that are
    about to be replaced (torch.nn.utils.skip_init) where cls allows it."""
    if share:
        try:
            return torch.nn.utils.skip_init(cls, **config)
        except (TypeError, ValueError, RuntimeError):
            pass
    return cls(**config)


def share_tensor(root, key, tensor, requires_grad=None):
    """Makes `tensor` itself the parameter or buffer `key` of root; a
    parameter requires grad as `requires_grad` says (None: as the module's
    own parameter did)."""
    owner_path, _, leaf = key.rpartition(".")
    owner = root.get_submodule(owner_path)
    old = owner._parameters.get(leaf)
    if old is not None or leaf in owner._parameters:
        if requires_grad is None:
            requires_grad = old.requires_grad if old is not None else True
        owner._parameters[leaf] = as_parameter(tensor, requires_grad)
    else:
        owner._buffers[leaf] = tensor


WEIGHT_KINDS = ("parameter", "frozen_parameter", "buffer",
                "non_persistent_buffer", "tensor")


def weight_kinds(doc):
    """The document's "weight_kinds" (weights key -> kind), checked."""
    kinds = doc.get("weight_kinds", {})
    if not isinstance(kinds, dict):
        raise BundleError("field 'weight_kinds' must be an object")
    for key, kind in kinds.items():
        if kind not in WEIGHT_KINDS:
            raise BundleError(f"field 'weight_kinds': weight '{key}': the "
                              f"kind must be one of {', '.join(WEIGHT_KINDS)}")
    return kinds


def as_parameter(tensor, requires_grad):
    """`tensor` as a Parameter requiring grad or not (itself when it is
    one already, else a Parameter sharing its data)."""
    if (isinstance(tensor, torch.nn.Parameter)
            and tensor.requires_grad == requires_grad):
        return tensor
    return torch.nn.Parameter(tensor.detach(), requires_grad=requires_grad)


def place_tensor(root, path, tensor, kind):
    """Makes `tensor` the attribute at `path` of root as the weight kind
    says (a parameter, a buffer, persistent or not, or a plain attribute),
    replacing what is there; containers are made on the way."""
    *parents, leaf = path.split(".")
    for atom in parents:
        if not hasattr(root, atom):
            root.add_module(atom, torch.nn.Module())
        root = getattr(root, atom)
    root._parameters.pop(leaf, None)
    root._buffers.pop(leaf, None)
    root._non_persistent_buffers_set.discard(leaf)
    root.__dict__.pop(leaf, None)
    if kind in ("parameter", "frozen_parameter"):
        root.register_parameter(leaf, as_parameter(tensor, kind == "parameter"))
    elif kind == "tensor":
        object.__setattr__(root, leaf, tensor)
    else:
        root.register_buffer(leaf, tensor, persistent=kind == "buffer")


def restore_weight_kinds(gm, doc, weights):
    """Gives gm's get_attr tensors outside its modules the kinds the
    document records: torch.fx's GraphModule constructor makes a buffer of
    every tensor that is not a parameter (persistent, and a plain attribute
    too)."""
    modules = doc.get("modules", {})
    for key, kind in weight_kinds(doc).items():
        if (kind in ("non_persistent_buffer", "tensor") and key in weights
                and not any(is_within(key, p) for p in modules)):
            place_tensor(gm, key, weights[key], kind)


def node_type(entry, types):
    """The Python type an entry's "type" names: from `types` (name -> type,
    those seen when the graph was exported), else resolved; None if
    neither."""
    name = entry.get("type")
    if name is None:
        return None
    if types and name in types:
        return types[name]
    try:
        return resolve(name, f"node '{entry['name']}' type")
    except BundleError:
        return None


GRAPH_MODULE_TYPE = "torch.fx.graph_module.GraphModule"


def dict_arg(value, where):
    """The object a dict ARG ({"dict": {...}}) holds."""
    if not (isinstance(value, dict) and list(value) == ["dict"]
            and isinstance(value["dict"], dict)):
        raise BundleError(f"{where}: must be a dict ARG ({{\"dict\": ...}})")
    return value["dict"]


def unwrapped(entry, keys, where):
    """A copy of entry (a dict ARG) with the dict ARGs under `keys`
    unwrapped."""
    out = dict(dict_arg(entry, where))
    for key in keys:
        if key in out:
            out[key] = dict_arg(out[key], f"{where} field '{key}'")
    return out


def is_within(target, path):
    return target == path or target.startswith(path + ".")


def build_child(qualified, config, weights, share, types, kinds):
    """A child GraphModule from its constructor's arguments (root, graph,
    class_name); its get_attr tensors come from the weights under
    `qualified`."""
    where = f"module '{qualified}'"
    unknown = set(config) - {"root", "graph", "class_name"}
    if unknown:
        raise BundleError(f"{where}: config: unknown GraphModule argument "
                          f"'{sorted(unknown)[0]}'")
    if not isinstance(config.get("graph"), list):
        raise BundleError(f"{where}: config.graph must be an array of nodes")
    root = {}
    for path, entry in dict_arg(config.get("root", {"dict": {}}),
                                f"{where} config.root").items():
        at = f"{where} config.root.{path}"
        root[path] = build_module(f"{qualified}.{path}",
                                  unwrapped(entry, ["config"], at),
                                  weights, share, types, kinds)
    nodes = [unwrapped(entry, ["kwargs", "meta"], f"{where} config.graph[{i}]")
             for i, entry in enumerate(config["graph"])]
    graph = build_graph(nodes, share, types, f"{where} config.graph ")
    for node in graph.nodes:
        if node.op != "get_attr" or any(is_within(node.target, p) for p in root):
            continue
        key = f"{qualified}.{node.target}"
        if key not in weights:
            raise BundleError(f"{where}: node '{node.name}' reads "
                              f"'{node.target}', but the weights lack '{key}'")
        root[node.target] = weights[key]
    child = torch.fx.GraphModule(root, graph,
                                 config.get("class_name", "GraphModule"))
    for target, tensor in root.items():
        key = f"{qualified}.{target}"
        if isinstance(tensor, torch.Tensor) and key in kinds:
            place_tensor(child, target, tensor, kinds[key])
    return child


def build_module(qualified, spec, weights, share, types, kinds):
    """The module a MODULE entry describes."""
    if spec.get("type") == GRAPH_MODULE_TYPE:
        module = build_child(qualified, spec.get("config", {}), weights,
                             share, types, kinds)
        # Its own mode only: its modules keep theirs (fuse_by_partitions'
        # children are in training mode around modules in eval mode).
        module.training = spec.get("training", False)
        return module
    else:
        cls = resolve(spec["type"], f"module '{qualified}'")
        config = {k: decode(v, {}, f"module '{qualified}' config '{k}'")
                  for k, v in spec.get("config", {}).items()}
        module = new_module(cls, config, share)
    module.train(spec.get("training", False))
    return module


def build_graph(entries, share, types, where_prefix=""):
    """A torch.fx Graph from NODE entries."""
    graph = torch.fx.Graph()
    nodes = {}
    for entry in entries:
        name, op, target = entry["name"], entry["op"], entry["target"]
        where = f"{where_prefix}node '{name}'"
        args = tuple(decode(a, nodes, where + " args") for a in entry.get("args", []))
        kwargs = {k: decode(v, nodes, where + " kwargs")
                  for k, v in entry.get("kwargs", {}).items()}
        type_expr = node_type(entry, types) if share else None
        if op == "call_function":
            target = resolve(target, where)
        if op == "output":
            node = graph.output(args[0], type_expr=type_expr)
        else:
            node = graph.create_node(op, target, args, kwargs, name=name,
                                     type_expr=type_expr)
            if node.name != name:
                raise BundleError(f"{where}: torch.fx renamed it '{node.name}'")
            if op == "call_function":
                wrapped = entry.get("meta", {}).get(
                    "is_wrapped", is_wrapped_by_default(entry["target"]))
                if wrapped is True:
                    node.meta["is_wrapped"] = True
        nodes[name] = node
        for key, value in entry.get("meta", {}).items():
            if key != "is_wrapped":
                node.meta[key] = decode_meta(key, value, nodes,
                                             f"{where} meta '{key}'")
    graph.lint()
    return graph


def build_root(doc, weights, share=False, types=None):
    """The module holding a document's modules and weights, as the
    GraphModule's constructor copies them: modules built from their types
    and configs (child GraphModules from their graphs), the weights copied
    into them (with share=True the given tensors themselves). Each weight
    is of the kind the document's "weight_kinds" gives it; without one a
    module's weight is as its module makes it, and a get_attr tensor a
    parameter when it is a floating point one, except torch.fx's tensor
    constants. (torch.fx's GraphModule constructor then makes a buffer of
    every other tensor: restore_weight_kinds undoes that.) Raises
    BundleError."""
    kinds = weight_kinds(doc)
    root = torch.nn.Module()
    for qualified, spec in doc.get("modules", {}).items():
        set_path(root, qualified,
                 build_module(qualified, spec, weights, share, types, kinds))
    state = root.state_dict(keep_vars=True)
    for key, tensor in weights.items():
        kind = kinds.get(key)
        if key in state:
            if state[key].shape != tensor.shape:
                raise BundleError(f"weight '{key}': shape {tuple(tensor.shape)}"
                                  f" but the module has {tuple(state[key].shape)}")
            requires_grad = (None if kind not in ("parameter", "frozen_parameter")
                             else kind == "parameter")
            if share:
                share_tensor(root, key, tensor, requires_grad)
            else:
                with torch.no_grad():
                    state[key].copy_(tensor)
                if requires_grad is not None:
                    state[key].requires_grad_(requires_grad)
        elif kind is not None:
            place_tensor(root, key, tensor, kind)
        elif key.startswith("_tensor_constant") or not tensor.is_floating_point():
            set_path(root, key, tensor)
        elif isinstance(tensor, torch.nn.Parameter):
            set_path(root, key, tensor)
        else:
            set_path(root, key, torch.nn.Parameter(
                tensor, requires_grad=tensor.requires_grad or not share))
    return root


_TREE_TYPES = {"tuple": tuple, "list": list, "dict": dict,
               "namedtuple": collections.namedtuple,
               "OrderedDict": collections.OrderedDict,
               "immutable_list": torch.fx.immutable_collections.immutable_list,
               "immutable_dict": torch.fx.immutable_collections.immutable_dict}


def tree_type(name, where):
    """The Python type a SPEC's "type" names (torch's pytree node types)."""
    if name not in _TREE_TYPES:
        raise BundleError(f"{where}: unknown TreeSpec type {name!r}")
    return _TREE_TYPES[name]


def tree_spec(entry, where, classes=None):
    """A torch TreeSpec from the format's SPEC form; a namedtuple's class
    from `classes` (name -> class) or resolved from its name."""
    if entry == "*":
        return pytree.LeafSpec()
    if not isinstance(entry, dict) or not isinstance(entry.get("children"), list):
        raise BundleError(f"{where}: a TreeSpec is \"*\" or an object with children")
    typ = tree_type(entry.get("type"), where)
    children = [tree_spec(c, where, classes) for c in entry["children"]]
    context = entry.get("context")
    if entry["type"] == "namedtuple":
        name = context.get("class") if isinstance(context, dict) else None
        if not isinstance(name, str):
            raise BundleError(f"{where}: a namedtuple's context names its class")
        context = (classes or {}).get(name) or resolve(name, where)
    elif context is not None:
        context = [decode(key, {}, where) for key in context]
    return pytree.TreeSpec(typ, context, children)


def pytree_info(doc, classes=None):
    """torch's _PyTreeInfo for the document's "pytree" entry, or None."""
    entry = doc.get("pytree")
    if entry is None:
        return None
    if not isinstance(entry, dict) or "in_spec" not in entry or not \
            isinstance(entry.get("orig_args"), list):
        raise BundleError("field 'pytree' must hold orig_args and in_spec")
    out_spec = entry.get("out_spec")
    return torch.fx.graph._PyTreeInfo(
        list(entry["orig_args"]), tree_spec(entry["in_spec"], "pytree in_spec",
                                            classes),
        None if out_spec is None else tree_spec(out_spec, "pytree out_spec",
                                                classes))


def set_pytree_codegen(graph, doc, classes=None):
    """Gives `graph` torch's _PyTreeCodeGen when the document has "pytree"."""
    info = pytree_info(doc, classes)
    if info is not None:
        graph._codegen = torch.fx.graph._PyTreeCodeGen(info)


def build_graph_module(doc, weights, share=False, types=None):
    """A torch.fx GraphModule from an fx-graph document (a dict) and its
    weights (qualified name -> tensor). Module weights are copied into
    modules built from their configs; with share=True the given tensors
    become the parameters and buffers themselves (no copies), and the
    nodes' types are set from `types` or resolved from their names."""
    root = build_root(doc, weights, share, types)
    graph = build_graph(doc["nodes"], share, types)
    set_pytree_codegen(graph, doc)
    gm = torch.fx.GraphModule(root, graph)
    restore_weight_kinds(gm, doc, weights)
    return gm


def flatten(value):
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, (tuple, list)):
        return [t for v in value for t in flatten(v)]
    return []


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("directory")
    parser.add_argument("--inputs")
    parser.add_argument("--expected")
    parser.add_argument("--rtol", type=float, default=1e-4)
    parser.add_argument("--atol", type=float, default=1e-5)
    parser.add_argument("--print", action="store_true")
    args = parser.parse_args(argv)
    try:
        gm = load_bundle(args.directory)
    except BundleError as e:
        print(f"torchfx_import: {e}", file=sys.stderr)
        return 2
    if args.print:
        print(gm.graph)
        print(gm.code)
    inputs = args.inputs or os.path.join(args.directory, "input.pt")
    expected = args.expected or os.path.join(args.directory, "expected.pt")
    if not os.path.exists(inputs):
        return 0
    with torch.no_grad():
        out = gm(*torch.load(inputs))
    if not os.path.exists(expected):
        return 0
    got, want = flatten(out), flatten(torch.load(expected))
    ok = len(got) == len(want) and all(
        torch.allclose(g, w, rtol=args.rtol, atol=args.atol) for g, w in zip(got, want))
    diff = max((float((g.float() - w.float()).abs().max()) for g, w in zip(got, want)),
               default=0.0)
    print(f"torchfx_import: {'allclose' if ok else 'DIFFERENT'} "
          f"(max abs diff {diff:g}, rtol {args.rtol:g}, atol {args.atol:g})")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
