"""fx_sdk: the fx SDK from Python, in memory.

    import torch, fx_sdk
    gm = torch.fx.symbolic_trace(model)
    sdk_gm = fx_sdk.from_torch_fx(gm)       # the SDK's GraphModule
    sdk_gm.graph_text, sdk_gm.code         # print(gm.graph), gm.code
    y = sdk_gm(x)                           # runs the SDK's compiled plan
    back = fx_sdk.to_torch_fx(sdk_gm)       # a torch.fx GraphModule again
    for node in sdk_gm.graph.nodes: ...     # torch.fx's graph API (graph.py)
    sdk_gm.recompile()
    out, report = fx_sdk.run_pipeline(gm, "dce,cse")
    out, report = fx_sdk.run_pipeline(gm, "O2")  # a named pipeline
    fast = fx_sdk.compile(gm, [x])          # 'inference', then the plan
    fast.passes                             # the passes that ran
    every = fx_sdk.compile(gm, [x], dynamic=True)  # one plan, every shape
    sdk_gm.shape_env.format_guards()       # make_fx symbolic: torch's guards
    y = fast(x)
    f = functorch.compile.aot_function(fn, fw_compiler=fx_sdk.compile)

Graphs cross as the fx-graph interchange format (specified in
docs/fx-graph-json.md) in memory, never as files; parameters, buffers and
get_attr tensors are shared, not copied: the SDK's modules hold the same
storage as the torch.fx GraphModule's, and so does the GraphModule
to_torch_fx returns. Submodules of a module kind the SDK knows (torch.nn's)
cross by type and constructor config (tools/torchfx_export.py's
module_config).

Python callables stay Python, in process: a call_function target the SDK
has no kernel for (a user's function, a torch.fx.wrap'ed helper, a lambda)
and a submodule of a class the SDK does not know (a user's leaf module)
run by calling the Python object (with the GIL), are opaque calls to
passes, keep their identity through pipelines and come back from
to_torch_fx as the very same objects. So do get_attr targets whose values
are no tensors (a ParameterList, a submodule handed to a function, a
ProxyableClassMeta instance): the SDK holds the objects and the calls that
take them run in Python. A graph holding them cannot be written to a file
(ValueError naming the target, module or attribute). Node meta crosses both ways where the format can hold
it (ARG values; shape_prop's TensorMetadata as the spec's tensor_meta);
the rest (tensors, types, other objects) is left out.

Errors: a graph the SDK cannot represent or load (an unsupported argument
value, module or target) raises ValueError naming the node or module; a
pipeline that does not parse or names an unknown pass raises ValueError; one
that stops at a failing pass raises RuntimeError naming it.

Installed with `bazel run //:install -- PREFIX`, the package is
PREFIX/lib/python/fx_sdk and finds its plugins in PREFIX/lib/fx-sdk/plugins.
Import torch before this module (it links the same LibTorch).
"""

import builtins
import contextlib
import functools
import gc
import json
import logging
import os
import re
import types

import torch
import torch.fx

from . import _C
from . import graph as _graph
from . import torchfx_export as _export
from . import torchfx_import as _import

__all__ = ["GraphModule", "Graph", "Node", "CompiledGraph", "ShapeEnv",
           "from_torch_fx", "to_torch_fx", "run_pipeline", "compile",
           "PLUGIN_DIR"]

GraphModule = _C.GraphModule
CompiledGraph = _C.CompiledGraph
ShapeEnv = _C.ShapeEnv  # sdk_gm.shape_env of a symbolic graph
Graph = _graph.Graph  # sdk_gm.graph: torch.fx's Graph API (graph.py)
Node = _graph.Node



def _plugin_dir():
    """The first-party plugins (dce, cse, shape_prop, decompose, ...): inside
    the package as Bazel builds it (bazel-bin/python/fx_sdk/plugins), or where
    `bazel run //:install -- PREFIX` puts them beside the installed package
    (PREFIX/lib/python/fx_sdk -> PREFIX/lib/fx-sdk/plugins)."""
    package = os.path.dirname(os.path.abspath(__file__))
    inside = os.path.join(package, "plugins")
    installed = os.path.join(package, os.pardir, os.pardir, "fx-sdk",
                             "plugins")
    if not os.path.isdir(inside) and os.path.isdir(installed):
        return os.path.normpath(installed)
    return inside


PLUGIN_DIR = _plugin_dir()

# run_pipeline and compile log the passes each pipeline ran (INFO) and the
# passes rolled back (WARNING) here.
_log = logging.getLogger("fx_sdk")

# Type names seen in graphs converted from torch.fx -> the Python types, so
# that to_torch_fx gives nodes back the types they had (torch.Tensor,
# typing.List[int], a user's class).
_types = {}
# Names the annotations in generated code use -> the objects gm.forward's
# globals held for them (typing_List -> typing.List, _1 -> 1).
_annotation_globals = {}


def from_torch_fx(gm):
    """The SDK's GraphModule for a torch.fx GraphModule `gm` (parameters,
    buffers and get_attr tensors shared). Raises ValueError naming the node
    or module the SDK cannot take.

    The nodes are read straight into the SDK's graph
    (python/torch_fx_reader.cc), as the fx-graph reader would read what
    tools/torchfx_export.py writes for them; the modules' specs still go
    through the format."""
    if not isinstance(gm, torch.fx.GraphModule):
        raise TypeError(f"from_torch_fx takes a torch.fx.GraphModule, not "
                        f"{type(gm).__name__}")
    modules, weights, kinds, kept, objects = {}, {}, {}, {}, {}
    for node in _C._attribute_nodes(gm.graph):
        if node.op == "call_module" and _kept_in_python(gm, node, kept):
            continue
        if node.op == "get_attr" and _object_attribute(gm, node, objects):
            continue
        _export.add_attributes(gm, node, modules, weights, copy_weights=False,
                               kinds=kinds)
    annotations, return_annotation = _export.code_form_annotations(gm)
    _record_annotation_types(gm, annotations, return_annotation)
    env = _export.shape_env(gm) or {"hints": {}, "guards": []}
    printed = _printed_guards(gm) if env["guards"] else []
    with _no_gc():
        return _C._from_torch_fx(
            gm.graph, annotations, return_annotation or "",
            json.dumps(modules), list(weights.items()),
            _export.qualified_function_name, _type_name, _node_meta,
            list(env["hints"].items()), env["guards"], printed,
            weight_kinds_json=json.dumps(kinds),
            opaque_modules=list(kept.values()),
            pytree_json="" if _user_codegen(gm) else _pytree_json(gm),
            node_types=_export.code_form_node_types(gm),
            python_attributes=list(objects.items()),
            named_tuple_info=_named_tuple_info,
            codegen=_user_codegen(gm))


# Namedtuple classes seen in pytree specs (the name the SDK holds -> the
# class), so that outputs and to_torch_fx give back the class itself, even
# one defined inside a function.
_namedtuple_classes = {}


def _pytree_json(gm):
    """The format's "pytree" entry for gm (its _PyTreeCodeGen's specs) as
    JSON text, the namedtuple classes in them remembered; "" without one."""
    entry = _export.pytree_entry(gm, name_of=_namedtuple_name)
    return "" if entry is None else json.dumps(entry)


def _namedtuple_name(cls):
    """The name the SDK holds a namedtuple class by: its module and
    qualified name, made unique ("mod.Pair#7f..") when that name does not
    find this very class (a class made inside a function)."""
    name = _export.class_name(cls)
    if _namedtuple_classes.get(name, cls) is not cls or not _names(name, cls):
        name = f"{name}#{id(cls):x}"
    _namedtuple_classes[name] = cls
    return name


def _names(name, cls):
    try:
        return _import.resolve(name, "namedtuple class") is cls
    except _import.BundleError:
        return False


def _user_codegen(gm):
    """gm's code generator when the SDK's graph keeps the Python object and
    asks it (python_codegen.cc): a user's torch.fx CodeGen subclass, or a
    _PyTreeCodeGen whose specs hold a user's pytree node type (its flatten
    and unflatten functions are Python). None for the others, which the
    SDK's own CodeGen and PyTreeCodeGen are."""
    codegen = gm.graph._codegen
    if type(codegen) is torch.fx.graph.CodeGen:
        return None
    if type(codegen) is torch.fx.graph._PyTreeCodeGen:
        info = codegen.pytree_info
        if info is None or (_export.user_tree_type(info.in_spec) is None and
                            _export.user_tree_type(info.out_spec) is None):
            return None
    return codegen


class _CodeName:
    """A node in the output_args a user's CodeGen.generate_output gets from
    the SDK: repr() is its name, as Node.__repr__ gives."""

    def __init__(self, name):
        self._name = name

    def __repr__(self):
        return self._name


# Objects a user's CodeGen.additional_globals() named, by the qualified
# name the SDK's code globals hold for them.
_codegen_globals = {}


def _codegen_global(obj):
    """The name the SDK's code globals hold `obj` by (one of a user's
    CodeGen.additional_globals()); remembered for to_torch_fx."""
    name = f"fx_sdk.codegen_global#{id(obj):x}"
    _codegen_globals[name] = obj
    return name


def _named_tuple_info(value):
    """(class name, fields, fields_repr) of a NamedTuple value in a node's
    arguments (argument.h's NamedTupleType): the class as torch.fx's code
    names it (module and __name__), made unique as _namedtuple_name does and
    remembered; fields_repr when the class's _custom_fx_repr_fn prints the
    value as `Name(field=..., ...)`. Raises ValueError for a
    _custom_fx_repr_fn that prints anything else (the SDK's graph text
    could not be torch.fx's)."""
    cls = type(value)
    name = torch.fx.node._get_qualified_name(cls)
    if _namedtuple_classes.get(name, cls) is not cls or not _names(name, cls):
        name = f"{name}#{id(cls):x}"
    _namedtuple_classes[name] = cls
    fields = [str(f) for f in cls._fields]
    custom = getattr(value, "_custom_fx_repr_fn", None)
    if custom is None:
        return name, fields, False
    shown = custom()
    format_arg = torch.fx.node._format_arg
    by_fields = f"{cls.__name__}(" + ", ".join(
        f"{f}={format_arg(v)}" for f, v in zip(fields, value)) + ")"
    if shown == by_fields:
        return name, fields, True
    if shown == format_arg(tuple(value)):
        return name, fields, False
    raise ValueError(f"{name.split('#')[0]}'s _custom_fx_repr_fn prints "
                     f"{shown!r}, which the SDK's graph text cannot show (it "
                     f"shows {by_fields!r} or the tuple)")


def _namedtuple_class(name):
    """The class a named tuple value of the SDK names (fx_sdk._C's
    to_python): one seen in a pytree spec, else resolved by its name."""
    if name not in _namedtuple_classes:
        _namedtuple_classes[name] = _import.resolve(name, "namedtuple class")
    return _namedtuple_classes[name]


_MISSING = object()


def _object_attribute(gm, node, objects):
    """Whether the get_attr node's target is an object that is no tensor
    (a ParameterList, a submodule handed to a function, a ProxyableClassMeta
    instance, a ScriptModule's _c): if so it is in `objects` (target ->
    object), held by the SDK as the Python object it is. ValueError naming
    the node when gm has no such attribute."""
    target = node.target
    if target in objects:
        return True
    value = gm
    for atom in target.split("."):
        value = getattr(value, atom, _MISSING)
        if value is _MISSING:
            raise ValueError(f"node '{node.name}' (get_attr) refers to "
                             f"'{target}', which the module does not have")
    if isinstance(value, torch.Tensor):
        return False
    objects[target] = value
    return True


def _set_attribute(root, path, value):
    """Sets the object `value` at the dotted `path` of `root` (as
    torch.fx's GraphModule._copy_attr would find it), making plain
    containers on the way and replacing what the path held."""
    *parents, leaf = path.split(".")
    for atom in parents:
        if not hasattr(root, atom):
            root.add_module(atom, torch.nn.Module())
        root = getattr(root, atom)
    for table in ("_parameters", "_buffers", "_modules"):
        held = getattr(root, table, None)
        if held is not None and leaf in held and not (
                table == "_modules" and isinstance(value, torch.nn.Module)):
            del held[leaf]
    setattr(root, leaf, value)


def _kept_in_python(gm, node, kept):
    """Whether the submodule the call_module `node` calls stays a Python
    object (its class is no module kind the SDK knows); if so it is in
    `kept` as (path, module, class name). One gm lacks is kept as an
    _AbsentSubmodule."""
    target = node.target
    if target in kept:
        return True
    try:
        module = gm.get_submodule(target)
    except AttributeError:
        module = _AbsentSubmodule(gm, target)
        kept[target] = (target, module, _export.module_type_name(module))
        return True
    if isinstance(module, torch.fx.GraphModule):
        return False
    type_name = _export.module_type_name(module)
    if _C._module_kind_known(type_name):
        return False
    kept[target] = (target, module, type_name)
    return True


class _AbsentSubmodule(torch.nn.Module):
    """Stands for a submodule a graph calls and its root lacks. torch.fx's
    recompile() takes such a graph (its subgraph rewriter makes one before
    it copies the replacement's submodules in); so does from_torch_fx, and
    calling it raises the AttributeError torch.fx's code would. to_torch_fx
    leaves the target absent again."""

    def __init__(self, gm, target):
        super().__init__()
        self._owner = type(gm).__name__
        self._target = target

    def forward(self, *args, **kwargs):
        raise AttributeError(f"'{self._owner}' object has no attribute "
                             f"'{self._target}'")


def _remove_absent(gm, python_modules):
    """Removes from gm the _AbsentSubmodule stand-ins torch.fx's
    constructor copied in (it requires every call_module target)."""
    for path, module in python_modules:
        if isinstance(module, _AbsentSubmodule):
            *parents, leaf = path.split(".")
            owner = gm
            for atom in parents:
                owner = getattr(owner, atom)
            delattr(owner, leaf)


def _printed_guards(gm):
    """Each guard of torch's gm.shape_env as its format_guards() prints it
    (without " - "), kept for sdk_gm.shape_env.format_guards(); [] when the
    lines do not match the guards one to one."""
    env = gm.shape_env
    text = env.format_guards()
    lines = text.split("\n") if text else []
    if len(lines) != len(env.guards):
        return []
    return [line[len(" - "):] for line in lines]


def _record_annotation_types(gm, annotations, return_annotation):
    """The types behind the annotations: placeholders', the output's, and
    other nodes' (gradual typing's TensorType on a call_module node)."""
    for node in gm.graph.nodes:
        if node.op != "placeholder":
            break
        if node.type is not None and node.target in annotations:
            _types.setdefault(annotations[node.target], node.type)
    output = next(iter(reversed(gm.graph.nodes)), None)
    if output is not None and output.type is not None and return_annotation:
        _types.setdefault(return_annotation, output.type)
    node_types = _export.code_form_node_types(gm)
    for node in gm.graph.nodes:  # other nodes' types, as the code spells them
        if node.type is not None and node.name in node_types:
            _types.setdefault(node_types[node.name], node.type)
    _record_annotation_globals(
        gm, list(annotations.values()) + [return_annotation or ""] +
        list(node_types.values()))


def _record_annotation_globals(gm, annotations):
    """The objects behind the names annotations use in gm.code that no
    import finds (a forward reference 'torch.Tensor' is the global
    _torch_Tensor_, a local class __main___Foo, TensorType's sizes _1, _2),
    as gm.forward's globals hold them."""
    code_globals = getattr(gm.forward, "__globals__", {})
    for annotation in annotations:
        for name in _IDENTIFIER.findall(annotation):
            if name in code_globals:
                _annotation_globals.setdefault(name, code_globals[name])


_IDENTIFIER = re.compile(r"(?<![\w.])[A-Za-z_]\w*")


def _type_name(type_expr):
    """A node's type as the code spells it; remembered for to_torch_fx."""
    name = torch.fx.node._type_repr(type_expr)
    _types.setdefault(name, type_expr)
    return name


def _size(value):
    """A tensor_meta size: an int, or a symbolic int as it is."""
    return value if _export.is_symint(value) else int(value)


def _node_meta(node):
    """node.meta's entries the SDK's graphs can hold (those
    tools/torchfx_export.py's node_meta keeps), as Python values;
    shape_prop's TensorMetadata as a dict of its fields, a class in
    meta['type'] by its name, an add's broadcast operand types as
    (code form, text)."""
    meta = {}
    for key, value in node.meta.items():
        if key == "is_wrapped" or not isinstance(key, str) or value is None:
            continue
        operand_type = _export.broadcast_operand_type(node, key, value)
        if operand_type is not None:
            value = operand_type
        elif key == "tensor_meta" and \
                type(value).__name__ == "TensorMetadata":
            if getattr(value, "is_quantized", True):
                continue
            value = {"shape": [_size(d) for d in value.shape],
                     "dtype": value.dtype,
                     "stride": [_size(d) for d in value.stride],
                     "requires_grad": bool(value.requires_grad),
                     "memory_format": value.memory_format}
        elif key == "type" and isinstance(value, type):
            value = _export.meta_type_name(value)
        elif isinstance(value, torch.nn.Module):
            continue
        else:
            try:
                _export.encode(value, key)
            except ValueError:
                continue
        meta[key] = value
    return meta


def to_torch_fx(sdk_gm, lazy=True):
    """A torch.fx GraphModule for the SDK's GraphModule `sdk_gm`: the same
    graph text and code, its parameters and buffers shared with sdk_gm's.
    gm.code is set at once; with lazy (the default) gm.forward is made
    from it on first use of forward instead of now.

    Built in bulk, not node by node through torch.fx's Graph API: the SDK
    makes the torch.fx Nodes (python/torch_fx_builder.cc) and the code
    (byte-identical to torch.fx's python_code); torch.fx's own GraphModule
    constructor builds the module, and forward is the function
    recompile() would install, its code object made by the SDK without
    compiling where the code's forms allow (_forward_from_src). The
    result is an ordinary torch.fx GraphModule (later edits and
    recompile() work as on any other)."""
    if not isinstance(sdk_gm, GraphModule):
        raise TypeError(f"to_torch_fx takes an fx_sdk.GraphModule, not "
                        f"{type(sdk_gm).__name__}")
    text, weights = _C._to_bundle(sdk_gm, include_nodes=False,
                                  in_process=True)
    doc, weights = json.loads(text), dict(weights)
    python_modules, functions, attributes = _C._python_objects(sdk_gm)
    try:
        root = _import.build_root(doc, weights, share=True)
    except _import.BundleError as e:
        raise ValueError(str(e)) from None
    for path, module in python_modules:  # the very objects from_torch_fx had
        _import.set_path(root, path, module)
    for path, value in attributes:  # get_attr objects, as they were
        _set_attribute(root, path, value)
    graph = torch.fx.Graph()
    _import.set_pytree_codegen(graph, doc, _namedtuple_classes)
    codegen = _C._python_codegen(sdk_gm)
    if codegen is not None:  # the user's CodeGen object from_torch_fx had
        graph._codegen = codegen
    dimension_globals = {}
    with _no_gc():
        code, names = _C._build_torch_fx_graph(
            sdk_gm, graph,
            functools.partial(_call_function_target, functions=functions),
            functools.partial(_node_type, globals_out=dimension_globals),
            _import.tensor_metadata)
    gm = _graph_module(root, graph, code, names, lazy, functions,
                       dimension_globals)
    _remove_absent(gm, python_modules)
    _import.restore_weight_kinds(gm, doc, weights)
    return gm


@contextlib.contextmanager
def _no_gc():
    """Python's cycle collector paused while many objects are made at once
    (every few hundred new objects it would walk all the young ones,
    the new graph's included, to find no garbage)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _call_function_target(name, functions=None):
    """The call_function target `name` stands for: the Python object the
    SDK's graph holds for it (`functions`), else the object it imports."""
    if functions and name in functions:
        return functions[name]
    try:
        return _import.resolve(name, "call_function target")
    except _import.BundleError as e:
        raise ValueError(str(e)) from None


def _node_type(name, text=None, globals_out=None):
    """node.type for a type string (`text`: how print(graph) shows it when
    that is not derived from the string): a gradual type (TensorType, Dyn)
    built from its parts, the type seen when the graph came from torch.fx,
    else the type the name resolves to, else None. A gradual type's
    dimensions go into `globals_out` by the names the code gives them."""
    gradual = _import.gradual_type(name, text)
    if gradual is not None:
        if globals_out is not None:
            globals_out.update(_import.gradual_globals(name, gradual))
        return gradual
    if name in _types:
        return _types[name]
    try:
        return _import.resolve(name, "type")
    except (_import.BundleError, ValueError):
        return None


def _global_object(name, qualified, functions=None):
    """The object a global of generated code stands for (`functions`: the
    graph's Python callables by target)."""
    if functions and qualified in functions:
        return functions[qualified]
    if qualified in _namedtuple_classes:  # a NamedTuple argument's class
        return _namedtuple_classes[qualified]
    if qualified in _codegen_globals:  # a user CodeGen's additional global
        return _codegen_globals[qualified]
    builtin = torch.fx.graph._custom_builtins.get(name)
    if builtin is not None:
        return builtin.obj
    if name in _annotation_globals:
        return _annotation_globals[name]
    size = _import.gradual_size(name)
    if size is not None:  # a TensorType's size (_3 is 3), as torch.fx names it
        return size
    if name in _types:  # a type the graph's annotations name by its global
        return _types[name]
    try:  # a module a file may name (torchfx_import.trusted_module)
        return _import.trusted_module(qualified)
    except _import.BundleError:
        return _call_function_target(qualified)


def _graph_module(root, graph, code, names, lazy, functions=None,
                  dimensions=None):
    """torch.fx.GraphModule(root, graph) with `code` (graph.python_code's
    src, generated by the SDK) as its code. The constructor's recompile()
    takes the code from graph.python_code, here answered with a stand-in
    (not generating the code again); then gm gets the code and the forward
    recompile() would install, made by _forward_from_src, or with `lazy` a
    forward made on first use. `dimensions`: the gradual types' sizes,
    symbols and expressions by their globals (_node_type's globals_out)."""
    dimensions = dimensions or {}
    code_globals = {name: dimensions[name] if name in dimensions else
                    _global_object(name, qualified, functions)
                    for name, qualified in names}

    def python_code(root_module, *args, **kwargs):
        return torch.fx.graph.PythonCode(_STAND_IN, code_globals)

    graph.python_code = python_code  # the instance's, for this call only
    try:
        gm = torch.fx.GraphModule(root, graph)
    finally:
        del graph.python_code
    gm._code = code
    type(gm).forward = (_CompileOnFirstUse(code, code_globals) if lazy else
                        _forward_from_src(code, code_globals))
    return gm


# A forward of every form _C._forward_code takes (its header lists them).
_BYTECODE_PROBE = """


def forward(self, x, y):
    conv = self.conv(x, stride = 2);  x = None
    getitem = y[0]
    add = conv + getitem;  conv = getitem = None
    view = add.view(-1, 3.5, 'a', None, True);  add = None
    relu = torch.nn.functional.relu(view, inplace = False);  view = None
    return relu
    """

_CODE_FIELDS = ("co_argcount", "co_posonlyargcount", "co_kwonlyargcount",
                "co_nlocals", "co_stacksize", "co_flags", "co_code",
                "co_consts", "co_names", "co_varnames", "co_freevars",
                "co_cellvars", "co_filename", "co_name", "co_qualname",
                "co_firstlineno", "co_linetable", "co_exceptiontable")


@functools.lru_cache(maxsize=None)
def _bytecode_agrees():
    """Whether _C._forward_code makes what this interpreter's compile()
    makes, checked once per process on a probe of every form it takes; the
    fast path is used only then (and never with FX_SDK_FORWARD=compile)."""
    if os.environ.get("FX_SDK_FORWARD") == "compile":
        return False
    made = _C._forward_code(_BYTECODE_PROBE, "<fx_sdk probe>")
    if made is None:
        return False
    scope = {}
    exec(builtins.compile(_BYTECODE_PROBE, "<fx_sdk probe>", "exec"), scope)
    want = scope["forward"].__code__
    same_types = ([type(c) for c in made.co_consts] ==
                  [type(c) for c in want.co_consts])
    return same_types and all(
        getattr(made, f, None) == getattr(want, f, None) for f in _CODE_FIELDS)


def _forward_from_src(src, code_globals):
    """torch.fx.graph_module._forward_from_src(src, code_globals): the
    forward function that torch.fx's generated code `src` defines, its
    source registered in linecache under a fresh <eval_with_key>.N name, as
    GraphModule.recompile() makes it. The code object comes from
    _C._forward_code (python/forward_bytecode.cc: the one compile() makes,
    without compiling) when src is in the forms it takes; otherwise src is
    compiled and run as torch.fx does."""
    globals_copy = dict(code_globals)
    key = torch.fx.graph_module._loader.cache(src, globals_copy)
    code = _C._forward_code(src, key) if _bytecode_agrees() else None
    if code is None:
        exec(builtins.compile(src, key, "exec"), globals_copy)
        return globals_copy.pop("forward")
    # What exec() adds to the globals the function keeps.
    globals_copy.setdefault("__builtins__", builtins.__dict__)
    return types.FunctionType(code, globals_copy)


_STAND_IN = "\n\n\ndef forward(self, *args, **kwargs):\n    pass\n"


class _CompileOnFirstUse:
    """A GraphModule's forward until it is first looked up (a call,
    inspect.signature, symbolic_trace): then the code is compiled as
    GraphModule.recompile() compiles it and the function takes this
    descriptor's place in the GraphModule's class. recompile() before
    then replaces it as usual. (PyTorch 2's _LazyGraphModule defers the
    same work the same way.)"""

    def __init__(self, code, code_globals):
        self._code = code
        self._globals = code_globals

    def __get__(self, gm, cls):
        if cls.__dict__.get("forward") is self:
            cls.forward = _forward_from_src(self._code, self._globals)
        return cls.__dict__["forward"].__get__(gm, cls)


def _plugin_sources(plugins, default_plugins):
    """(files, dirs): `plugins` split into files and directories, then the
    first-party plugins unless default_plugins is False."""
    files, dirs = [], []
    for p in plugins:
        (dirs if os.path.isdir(p) else files).append(os.fspath(p))
    if default_plugins and os.path.isdir(PLUGIN_DIR):
        dirs.append(PLUGIN_DIR)
    return files, dirs


def _log_report(pipeline, report):
    """Logs the passes `pipeline` ran, and those rolled back with why."""
    ran = [r["pass"] for r in report if r["outcome"] == "ran"]
    _log.info("pipeline %s: ran %s", pipeline, ", ".join(ran) or "no pass")
    for r in report:
        if r["outcome"] == "rolled_back":
            _log.warning("pipeline %s: pass %s failed and was rolled back: %s",
                         pipeline, r["pass"], r["error"])


def run_pipeline(gm, pipeline, plugins=(), example_inputs=(),
                 default_plugins=True, lazy=True, example_batches=()):
    """Runs the SDK's pass pipeline `pipeline` (fx run's text form:
    "shape_prop{shapes=1x3x224x224},decompose{rules=relu},dce", or a named
    pipeline: "O1", "O2", "inference", as `fx pipelines` lists them) on a
    torch.fx GraphModule. `plugins` are plugin files or directories, loaded
    before the first-party plugins (PLUGIN_DIR) and $FX_PLUGIN_PATH
    (default_plugins=False leaves those out). `example_inputs` are the
    tensors passes get as example inputs; `example_batches` more batches of
    them (lists of tensors, one per placeholder: calibration data for
    quantize_calibrate). `lazy` is to_torch_fx's.

    Returns (GraphModule, report): a new torch.fx GraphModule (parameters
    shared with gm's unless a pass replaced them) and one dict per pass:
    pass, plugin, outcome ("ran", "rolled_back", "not_run"), changed,
    seconds (run wall time), verify_seconds, error. A pass that failed and
    was rolled back is in the report; a pipeline that stops raises
    RuntimeError. The passes that ran are logged (logger "fx_sdk", INFO);
    an unknown pass or named pipeline raises ValueError naming it (and the
    named pipelines), as does a named pipeline's pass whose plugin is not
    loaded (naming the pass and the plugin)."""
    sdk_gm = from_torch_fx(gm)
    files, dirs = _plugin_sources(plugins, default_plugins)
    # sdk_gm is only converted and dropped: its code and compiled plan are
    # not regenerated after the passes (to_torch_fx reads the graph).
    report = _C._run_pipeline(sdk_gm, pipeline, files, dirs, default_plugins,
                              list(example_inputs), recompile=False,
                              example_batches=[list(b) for b in
                                               example_batches])
    _log_report(pipeline, report)
    return to_torch_fx(sdk_gm, lazy=lazy), report


def symbolic_shape_prop(gm, shapes=None, hints=None):
    """Symbolic shape propagation on the SDK GraphModule `gm`: every node's
    meta['tensor_meta'] gets sizes that are expressions of the inputs'
    symbolic sizes (as torch 1.13's make_fx(tracing_mode="symbolic") leaves
    meta['val']), and symbolic ints (sym_size and its arithmetic)
    meta['val']. Without `shapes`, a symbolic graph's own placeholder sizes
    and hints are used. `shapes` maps placeholder names to sizes: a string
    "Bx3x224x224" or a list of ints and expression strings ("s0", "2*s0");
    `hints` gives symbols the values to trace with (others take 64, 96,
    128, ... in order: distinct, divisible by 32). Returns the guards the
    propagation took (sympy text). Raises ValueError naming the placeholder,
    dimension or node that is wrong; the graph is then unchanged."""
    spec = {name: sizes if isinstance(sizes, str) else list(sizes)
            for name, sizes in (shapes or {}).items()}
    return _C._symbolic_shape_prop(gm, spec, dict(hints or {}))


# What fx_sdk.compile runs before planning unless told otherwise.
DEFAULT_COMPILE_PIPELINE = "inference"


def _pipeline_graph(gm, pipeline, example_inputs, plugins, default_plugins,
                    explicit):
    """An SDK GraphModule of `gm` after `pipeline`, never gm itself (an SDK
    GraphModule is deep-copied first), and the pipeline's report. The
    example inputs are the passes' when they are all tensors. An explicit
    pipeline stops at a failing pass (RuntimeError); the default one rolls
    it back, skips it and logs a warning."""
    if isinstance(gm, GraphModule):
        sdk_gm = _C._deepcopy(gm)
    else:
        sdk_gm = from_torch_fx(gm)
    tensors = list(example_inputs)
    if not all(isinstance(x, torch.Tensor) for x in tensors):
        tensors = []
    files, dirs = _plugin_sources(plugins, default_plugins)
    report = _C._run_pipeline(sdk_gm, pipeline, files, dirs, default_plugins,
                              tensors, recompile=True,
                              on_failure="stop" if explicit else "skip")
    _log_report(pipeline, report)
    return sdk_gm, report


def compile(gm, example_inputs, dynamic=False,  # noqa: A001 (torch's name)
            pipeline=None, plugins=(), default_plugins=True):
    """A callable that runs the SDK's InferencePlan
    (fx_core/compile/inference_plan.h) for `gm`, a torch.fx
    GraphModule or an fx_sdk.GraphModule, planned on `example_inputs`.
    Call it as gm: compiled(*inputs) returns what gm returns.

    First it runs `pipeline` on a copy of gm (gm itself is left as it is):
    for a torch.fx GraphModule by default the named pipeline "inference"
    (DEFAULT_COMPILE_PIPELINE: shape_prop, fold_bn, fuse_conv, fuse_linear,
    fuse_matmul, fuse_window_attention, fuse_pointwise, the InferencePlan's
    fast path); an fx_sdk.GraphModule is the caller's to optimise and by
    default is planned as it is (the callable's graph_module is then gm). Any
    pipeline text or named pipeline ("O1", "O2", "inference") given runs
    on either (an fx_sdk.GraphModule deep-copied first); pipeline="" runs
    none. The callable records what ran: `pipeline` (the
    text or name), `passes` (the passes that ran, in order) and
    `pipeline_report` (run_pipeline's report); the passes are also logged
    (logger "fx_sdk"). Under the default pipeline a pass that fails on
    this graph is rolled back and skipped (a logged warning, in the
    report); a pipeline given explicitly stops there and raises
    RuntimeError. `plugins` and `default_plugins` are run_pipeline's.

    It has the signature of a functorch.compile.aot_function fw_compiler
    (or bw_compiler): aot_function(fn, fw_compiler=fx_sdk.compile). With
    dynamic=False inputs of other shapes re-plan; with dynamic=True one plan
    runs every shape the graph allows (batch size, sequence length, ...):
    kernels are specialised lazily the first time a shape is seen and kept,
    weights packed once, buffers shared between shapes. The callable's
    `plan_builds` is how many plans it has built (1 for a dynamic plan),
    `stats` says more. Inputs that break a symbolic graph's guard raise the
    guard's RuntimeError. With grad mode on the plan runs the SDK's
    GraphModule.forward. Raises ValueError naming the node the SDK cannot
    take or run on the example inputs, or the pipeline's pass or name that
    is unknown."""
    explicit = pipeline is not None
    if explicit and not isinstance(pipeline, str):
        raise TypeError("compile: pipeline must be pipeline text or a named "
                        "pipeline (O1, O2, inference), got "
                        f"{type(pipeline).__name__}")
    if not explicit:
        # An SDK GraphModule is the caller's to optimise: planned as it is.
        sdk = isinstance(gm, GraphModule)
        pipeline = "" if sdk else DEFAULT_COMPILE_PIPELINE
    report = []
    if pipeline:
        sdk_gm, report = _pipeline_graph(gm, pipeline, example_inputs,
                                         plugins, default_plugins, explicit)
    else:
        sdk_gm = gm if isinstance(gm, GraphModule) else from_torch_fx(gm)
    compiled = _C._compile(sdk_gm, list(example_inputs),
                           dynamic=bool(dynamic))
    compiled.pipeline = pipeline
    compiled.passes = [r["pass"] for r in report if r["outcome"] == "ran"]
    compiled.pipeline_report = report
    return compiled
