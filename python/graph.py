"""fx_sdk's graph API: the SDK's Graph and Node (python/graph_api.cc) with
the parts of torch.fx's API that need Python objects.

    sdk_gm = fx_sdk.from_torch_fx(gm)
    graph = sdk_gm.graph
    for node in graph.nodes:
        if node.op == "call_function" and node.target is torch.relu:
            with graph.inserting_after(node):
                new = graph.call_function(torch.sigmoid, (node.args[0],))
            node.replace_all_uses_with(new)
            graph.erase_node(node)
    graph.lint()
    sdk_gm.recompile()

Nodes have torch.fx's name, op, target, args, kwargs, users (a dict, node
-> None), all_input_nodes, prev, next, type, meta; update_arg, update_kwarg,
replace_all_uses_with, replace_input_with, prepend, append, format_node.
Graphs have nodes, placeholder, get_attr, call_function, call_method,
call_module, output, create_node, erase_node, inserting_before,
inserting_after, lint, eliminate_dead_code, owning_module; print(graph)
prints torch.fx's text (in the [num_users=N] form of current torch.fx).

What differs from torch.fx: a call_function target is the function itself
when the graph holds it (a Python callable without a kernel, as
from_torch_fx or call_function left it) or it can be looked up by its
qualified name (torch.relu, operator.add; only where a file may name one:
fx_sdk.torchfx_import.resolve), else the name; node.type is the annotation as gm.code spells it (a str);
meta holds only what the SDK's graphs can (Argument values: no tensors or
arbitrary objects, ValueError naming the node otherwise); prev and next are
None at the ends; graph.nodes is a list (a snapshot).
"""

import collections.abc
import inspect

import torch
import torch.fx

from . import _C
from . import torchfx_export as _export
from . import torchfx_import as _import

Graph = _C.Graph
Node = _C.Node

_functions = {}  # qualified name -> function (or the name, unresolvable)


def _resolve_function(name):
    if name not in _functions:
        _functions[name] = _import_function(name)
    return _functions[name]


def _import_function(name):
    """The function `name` stands for, found only where a file may name
    one (torchfx_import.resolve), else the name itself."""
    try:
        return _import.resolve(name, "call_function target")
    except _import.BundleError:
        return name


def _target_name(op, target):
    if op == "call_function" and not isinstance(target, str):
        name = _export.qualified_function_name(target)
        _functions.setdefault(name, target)
        return name
    if not isinstance(target, str):
        raise TypeError(f"a {op} target is a str, not {type(target).__name__}")
    return target


def _type_name(type_expr):
    if type_expr is None:
        return ""
    if isinstance(type_expr, str):
        return type_expr
    return torch.fx.node._type_repr(type_expr)


class _Meta(collections.abc.MutableMapping):
    """node.meta: a live view of the SDK node's meta."""

    def __init__(self, node):
        self._node = node

    def __getitem__(self, key):
        return self._node._meta_get(key)

    def __setitem__(self, key, value):
        self._node._meta_set(key, value)

    def __delitem__(self, key):
        self._node._meta_del(key)

    def __iter__(self):
        return iter(self._node._meta_keys())

    def __len__(self):
        return len(self._node._meta_keys())

    def __repr__(self):
        return repr(dict(self))


class _InsertPoint:
    """As torch.fx's: the insertion point moves when made, and goes back
    when the with block ends."""

    def __init__(self, graph, anchor, after):
        self._graph = graph
        self._saved = graph._insert_point()
        graph._set_insert_point(anchor, after)

    def __enter__(self):
        return None

    def __exit__(self, *exc):
        self._graph._set_insert_point(*self._saved)
        return False


def _node_target(node):
    target = node._target
    if node.op != "call_function":
        return target
    held = _C._python_function(node.graph.owning_module, target)
    return _resolve_function(target) if held is None else held


def _hold_function(graph, op, target, name):
    """A Python function the graph now calls stays its GraphModule's own
    (python_callables.cc) when no kernel has its name."""
    if op == "call_function" and not isinstance(target, str):
        _C._add_python_function(graph.owning_module, name, target)


def _set_node_target(node, target):
    name = _target_name(node.op, target)
    _hold_function(node.graph, node.op, target, name)
    node._target = name


def _node_type(node):
    return node._type


def _set_node_type(node, type_expr):
    node._type = _type_name(type_expr)


def _create_node(graph, op, target, args=None, kwargs=None, name=None,
                 type_expr=None):
    name_ = _target_name(op, target)
    _hold_function(graph, op, target, name_)
    node = graph._create_node(op, name_, args, kwargs, name,
                              _type_name(type_expr))
    if op == "call_function" and _export.is_wrapped_by_default(name_):
        # Called, not torch.fx.wrap'ed (what torch.fx's own nodes say).
        node._meta_set("is_wrapped", False)
    return node


def _placeholder(graph, name, type_expr=None,
                 default_value=inspect.Signature.empty):
    if default_value is inspect.Signature.empty:
        return graph._placeholder(name, _type_name(type_expr))
    return graph._placeholder(name, _type_name(type_expr), default_value)


def _get_attr(graph, qualified_name, type_expr=None):
    return _create_node(graph, "get_attr", qualified_name,
                        type_expr=type_expr)


def _call_function(graph, the_function, args=None, kwargs=None,
                   type_expr=None):
    return _create_node(graph, "call_function", the_function, args, kwargs,
                        type_expr=type_expr)


def _call_method(graph, method_name, args=None, kwargs=None, type_expr=None):
    return _create_node(graph, "call_method", method_name, args, kwargs,
                        type_expr=type_expr)


def _call_module(graph, module_name, args=None, kwargs=None, type_expr=None):
    return _create_node(graph, "call_module", module_name, args, kwargs,
                        type_expr=type_expr)


def _output(graph, result, type_expr=None):
    return graph._output(result, _type_name(type_expr))


def _inserting_before(graph, n=None):
    # Before None: the start of the graph (after the root, in torch.fx).
    return _InsertPoint(graph, n, after=n is None)


def _inserting_after(graph, n=None):
    # After None: the end of the graph (before the root, in torch.fx).
    return _InsertPoint(graph, n, after=n is not None)


Node.target = property(_node_target, _set_node_target,
                       doc="The target: a call_function's function (or its "
                       "qualified name when it does not import), else a str.")
Node.type = property(_node_type, _set_node_type,
                     doc="The type annotation as gm.code spells it, or None.")
Node.meta = property(_Meta, doc="The node's meta, a dict-like live view.")
Graph.create_node = _create_node
Graph.placeholder = _placeholder
Graph.get_attr = _get_attr
Graph.call_function = _call_function
Graph.call_method = _call_method
Graph.call_module = _call_module
Graph.output = _output
Graph.inserting_before = _inserting_before
Graph.inserting_after = _inserting_after
