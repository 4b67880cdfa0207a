#!/usr/bin/python3
"""Rebuilds a torch.fx GraphModule from an fx-graph bundle and checks it.

    python3 tools/torchfx_import.py DIR [--inputs IN.pt] [--expected OUT.pt]
        [--rtol 1e-4] [--atol 1e-5] [--print]

reads DIR/graph.fx.json (docs/fx-graph-json.md specifies it) and the weights it
names, builds the modules from their types and configs, and the graph node by
node with torch.fx's Graph API. With inputs (default DIR/input.pt when
present) it runs the GraphModule and compares with the expected output
(default DIR/expected.pt when present): exit status 0 when allclose, 1 when
not, 2 on a bundle it cannot read. --print shows the graph and gm.code.

No file larger than 16 GiB is read (the C++ readers' limit): the graph,
weights, inputs and expected outputs are refused with their size and the
limit before anything is read; --max-file-bytes N or $FX_MAX_FILE_BYTES
sets another limit (the option wins).

Use it to bring a graph back to Python after C++ passes: the rebuilt module
is a plain torch.fx GraphModule.
"""

import argparse
import collections
import importlib
import inspect
import json
import operator
import os
import pickle
import re
import stat
import sys

import torch
import torch.fx
import torch.fx.immutable_collections
import torch.utils._pytree as pytree


class BundleError(Exception):
    pass


# Files larger than this are refused before anything is read (issue 34,
# item 5), as fx_core/io/regular_file.cc does: 16 GiB unless
# $FX_MAX_FILE_BYTES (a positive integer) or --max-file-bytes says otherwise.
DEFAULT_MAX_FILE_BYTES = 16 << 30
_max_file_bytes_option = None  # --max-file-bytes, which wins over the env


def max_file_bytes():
    """The limit: --max-file-bytes, else $FX_MAX_FILE_BYTES when it is a
    positive integer, else DEFAULT_MAX_FILE_BYTES."""
    if _max_file_bytes_option is not None:
        return _max_file_bytes_option
    text = os.environ.get("FX_MAX_FILE_BYTES", "")
    if text.isascii() and text.isdigit() and int(text) > 0:
        return int(text)
    return DEFAULT_MAX_FILE_BYTES


def set_max_file_bytes(limit):
    """Sets the limit for this process (None: the environment's again)."""
    global _max_file_bytes_option
    _max_file_bytes_option = limit


_FILE_KINDS = ((stat.S_ISDIR, "a directory"),
               (stat.S_ISCHR, "a character device"),
               (stat.S_ISBLK, "a block device"),
               (stat.S_ISFIFO, "a FIFO"),
               (stat.S_ISSOCK, "a socket"))


def open_within_limit(path, mode="rb"):
    """`path` opened for reading when it is a regular file no larger than
    max_file_bytes() (os.fstat on the open descriptor, so the file checked
    is the file read); BundleError naming its size and the limit, or its
    kind, otherwise. Opened non-blocking first: a FIFO does not block."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as e:
        raise BundleError(f"cannot read '{path}': {e.strerror}")
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            kind = next((k for test, k in _FILE_KINDS if test(st.st_mode)),
                        "not a plain file")
            raise BundleError(
                f"cannot read '{path}': not a regular file ({kind})")
        limit = max_file_bytes()
        if st.st_size > limit:
            raise BundleError(
                f"cannot read '{path}': {st.st_size} bytes is more than the "
                f"limit of {limit} bytes (raise it with --max-file-bytes N "
                f"or FX_MAX_FILE_BYTES)")
        os.set_blocking(fd, True)
        f = os.fdopen(fd, mode, **({} if "b" in mode else
                                   {"encoding": "utf-8"}))
    except BaseException:
        os.close(fd)
        raise
    return f


# What a file may name (issue 34, "nothing executable from data"): the
# grammar of fx_core/format/code_names.h, which the C++ reader applies to
# the same fields. ASCII identifiers only (Python folds non-ASCII ones by
# NFKC: a look-alike would be another name), no dunder atoms except a
# leading __main__ and a function's name before <locals>.
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_LOCAL_ATOMS = ("<locals>", "<lambda>")


def is_dunder(atom):
    return len(atom) > 4 and atom.startswith("__") and atom.endswith("__")


def is_plain_name(text):
    """A method, keyword, field or parameter name: an ASCII identifier, not
    a dunder name."""
    return (isinstance(text, str) and _IDENTIFIER.fullmatch(text) is not None
            and not is_dunder(text))


_OPERATOR_METHODS = ("add", "sub", "mul", "matmul", "truediv", "floordiv",
                     "mod", "divmod", "pow", "lshift", "rshift", "and",
                     "xor", "or")
_OTHER_METHODS = ("call", "getitem", "setitem", "delitem", "len", "contains",
                  "iter", "next", "reversed", "neg", "pos", "abs", "invert",
                  "round", "trunc", "floor", "ceil", "bool", "int", "float",
                  "complex", "index", "eq", "ne", "lt", "le", "gt", "ge")
_DATA_MODEL_METHODS = frozenset(
    [f"__{m}__" for m in _OTHER_METHODS] +
    [f"__{p}{m}__" for m in _OPERATOR_METHODS for p in ("", "r", "i")])


def is_method_name(text):
    """A call_method target: a plain name or one of the data model's
    operator methods (__call__, __getitem__, __add__, ...), never a dunder
    that reaches an object's internals (code_names.h)."""
    return is_plain_name(text) or text in _DATA_MODEL_METHODS


def is_parameter_name(text):
    return isinstance(text, str) and is_plain_name(
        text[2:] if text.startswith("**") else text[1:]
        if text.startswith("*") else text)


def is_qualified_name(text, class_suffix=False):
    """A call_function target or a class: dotted ASCII identifiers (after
    the first, <locals> and <lambda> too); with class_suffix, maybe `#` and
    hex digits after it."""
    if not isinstance(text, str):
        return False
    if class_suffix and "#" in text:
        text, _, suffix = text.partition("#")
        if re.fullmatch(r"[0-9A-Fa-f]+", suffix) is None:
            return False
    atoms = text.split(".")
    for i, atom in enumerate(atoms):
        if atom in _LOCAL_ATOMS:
            if i == 0:
                return False
            continue
        if _IDENTIFIER.fullmatch(atom) is None:
            return False
        if is_dunder(atom) and not (
                (i == 0 and atom == "__main__") or
                (i + 1 < len(atoms) and atoms[i + 1] == "<locals>")):
            return False
    return True


def is_module_name(atom):
    """A name torch.nn takes for a module (conv1, 0, regnet's block1-0) that
    code can hold in a string literal as it is (torch 1.13 writes
    getattr(self, "ATOM") unescaped): printable ASCII without quotes or
    backslashes, no dunder name."""
    return (atom != "" and all(" " <= c <= "~" and c not in "\"'\\"
                               for c in atom)
            and not (len(atom) >= 4 and atom.startswith("__")
                     and atom.endswith("__")))


def is_attribute_path(text):
    """A get_attr or call_module target, a module's or weight's path
    (layer1.0.conv1): module names joined by dots."""
    return isinstance(text, str) and all(
        is_module_name(atom) for atom in text.split("."))


ATTRIBUTE_PATH = ("an attribute path (module names of printable ASCII joined "
                  "by dots, no quotes, backslashes or dunder names)")


def is_type_expression(text):
    """A node's "type" as code writes it (typing_Tuple[int, ...])."""
    if not isinstance(text, str):
        return False
    depth = 0
    for name in re.split(r"([\[\], ])", text):
        if name == "[":
            depth += 1
        elif name == "]":
            depth -= 1
            if depth < 0:
                return False
        elif name not in ("", ",", " ", "...") and not (
                name.isascii() and name.isdigit()) and (
                "<" in name or not is_qualified_name(name)):
            return False
    return depth == 0


def check_name(check, text, where, what):
    """BundleError naming the place unless check(text)."""
    if not check(text):
        raise BundleError(f"{where}: {text!r} is not {what}")


_TARGET_CHECKS = {
    "placeholder": (is_parameter_name,
                    "a parameter name (x, *args or **kwargs)"),
    "call_function": (is_qualified_name,
                      "a qualified Python name (dotted ASCII identifiers "
                      "such as operator.add or torch.relu, no dunder "
                      "attributes)"),
    "call_method": (is_method_name, "a method name (an ASCII identifier, "
                    "not a dunder name but the data model's operators such "
                    "as __call__ or __add__)"),
    "get_attr": (is_attribute_path, ATTRIBUTE_PATH),
    "call_module": (is_attribute_path, ATTRIBUTE_PATH),
    "output": (is_plain_name, "the output node's target (output)"),
}


def check_node(entry, where_prefix=""):
    """Checks what a NODE entry gives generated code (name, op, target,
    type, keyword names) before anything is built from it."""
    if not isinstance(entry, dict):
        raise BundleError(f"{where_prefix}node: must be an object")
    name = entry.get("name")
    check_name(is_plain_name, name, f"{where_prefix}node {name!r}",
               "a node name (an ASCII identifier)")
    where = f"{where_prefix}node '{name}'"
    op = entry.get("op")
    if op not in _TARGET_CHECKS:
        raise BundleError(f"{where}: field 'op': unknown opcode {op!r}")
    check, what = _TARGET_CHECKS[op]
    check_name(check, entry.get("target"), f"{where}: field 'target'", what)
    if entry.get("type") is not None:
        check_name(is_type_expression, entry["type"], f"{where}: field 'type'",
                   "a type expression (dotted ASCII names, [ ] and commas)")
    kwargs = entry.get("kwargs", {})
    if not isinstance(kwargs, dict):
        raise BundleError(f"{where}: field 'kwargs' must be an object")
    for key in kwargs:
        check_name(is_plain_name, key, f"{where}: field 'kwargs'",
                   "a Python identifier")


# Packages a file may name objects of. Other modules are never imported
# for a file (importing runs a module's code, and the bundle's own
# directory may be on sys.path); a module the running program imported
# itself from outside the Python installation (its __main__, its own
# modules) may be named too.
_TRUSTED_PACKAGES = frozenset({
    "torch", "torchvision", "operator", "_operator", "math", "builtins",
    "collections", "typing"})
# Within them, what runs code, loads libraries, reads or writes files or
# opens connections when called, by name (each refused with its aliases).
_REFUSED_OBJECTS = (
    "torch.load", "torch.save", "torch.hub", "torch.serialization",
    "torch.package", "torch.utils.cpp_extension", "torch.utils.model_zoo",
    "torch.ops.load_library", "torch.classes.load_library", "torch.jit.load",
    "torch.jit.save", "torch.jit.CompilationUnit", "torch.distributed",
    "torch.multiprocessing", "torch.fx.graph_module._exec_with_source",
    "torch.fx.graph_module._forward_from_src",
    "torch.fx.graph_module._method_from_src", "torch._C.import_ir_module",
    "torch._C._load_for_lite_interpreter",
    "operator.call", "operator.attrgetter", "operator.methodcaller")
# builtins' functions a graph may call (eval, exec, compile, open, input,
# setattr, vars, globals, ... may not).
_SAFE_BUILTINS = frozenset({
    "abs", "all", "any", "ascii", "bin", "callable", "chr", "divmod",
    "format", "getattr", "hasattr", "hash", "hex", "id", "isinstance",
    "issubclass", "iter", "len", "max", "min", "next", "oct", "ord", "pow",
    "print", "repr", "round", "sorted", "sum"})


def _is_trusted_module_name(name):
    top = name.partition(".")[0]
    if top in _TRUSTED_PACKAGES:
        return True
    module = sys.modules.get(name)
    if module is None or top in sys.stdlib_module_names or \
            top in sys.builtin_module_names or top == "fx_sdk":
        return False
    if name == "__main__":  # not this importer run as a program
        return getattr(module, "resolve", None) is not resolve
    import site
    installed = [*site.getsitepackages(), site.getusersitepackages(),
                 sys.prefix, sys.base_prefix]
    path = os.path.realpath(getattr(module, "__file__", None) or "/")
    return not any(path.startswith(os.path.realpath(p) + os.sep)
                   for p in installed)


def trusted_module(name, where="module"):
    """The module `name`, imported only when it is one a file may name."""
    if not is_qualified_name(name) or not _is_trusted_module_name(name):
        raise BundleError(f"{where}: {name} is not a module a file may name "
                          f"(torch, torchvision, operator, math, builtins, "
                          f"collections, typing, or one the program "
                          f"imported itself)")
    try:
        return importlib.import_module(name)
    except ImportError as e:
        raise BundleError(f"{where}: {name} does not exist ({e})")


def _is_refused(obj):
    """Whether obj is one of _REFUSED_OBJECTS (a bound method: equal to
    one, as each lookup makes a new one)."""
    global _REFUSED
    import types
    if _REFUSED is None:
        _REFUSED = []
        for name in _REFUSED_OBJECTS:
            try:
                _REFUSED.append(_lookup(name))
            except (ImportError, AttributeError):
                pass
    if isinstance(obj, types.MethodType):
        return any(isinstance(r, types.MethodType) and r == obj
                   for r in _REFUSED)
    return any(r is obj for r in _REFUSED)


_REFUSED = None


def _lookup(qualified_name):
    """The object at `qualified_name` (the longest module prefix, then
    attributes), no checks; ImportError or AttributeError."""
    atoms = qualified_name.split(".")
    for split in range(len(atoms), 0, -1):
        try:
            obj = importlib.import_module(".".join(atoms[:split]))
        except ImportError:
            if split == 1:
                raise
            continue
        for atom in atoms[split:]:
            obj = getattr(obj, atom)
        return obj
    raise ImportError(qualified_name)


def _check_object(obj, qualified_name, where):
    """Refuses an object a file may not name: a module outside the trusted
    ones (torch.os), a refused object, a builtin outside _SAFE_BUILTINS, a
    callable or class from another module (os.system as torch.hub.xyz)."""
    import types
    refusal = f"{where}: {qualified_name} is not something a file may name"
    if isinstance(obj, types.ModuleType):
        if not _is_trusted_module_name(obj.__name__):
            raise BundleError(f"{refusal} (it is module {obj.__name__})")
        home = obj.__name__
    else:
        home = (f"{getattr(obj, '__module__', None)}."
                f"{getattr(obj, '__qualname__', None)}")
    if _is_refused(obj) or any(home == r or home.startswith(r + ".")
                               for r in _REFUSED_OBJECTS):
        raise BundleError(f"{refusal} (it runs code or touches files)")
    if not callable(obj):
        return
    module = getattr(obj, "__module__", None)
    name = getattr(obj, "__name__", None)
    if module == "builtins" and not isinstance(obj, type):
        if name not in _SAFE_BUILTINS:
            raise BundleError(f"{refusal} (builtin {name} may not be called)")
    elif isinstance(module, str) and not _is_trusted_module_name(module):
        raise BundleError(f"{refusal} (it comes from module {module})")


def resolve(qualified_name, where):
    """The Python object a dotted target names (operator.add, torch.relu,
    torch._C._nn.linear, torchvision.ops.stochastic_depth.stochastic_depth),
    built by lookup only: the name must be a qualified name (the format's
    grammar), its modules ones a file may name (trusted_module), and each
    object on the way one _check_object lets through. BundleError
    otherwise."""
    if qualified_name.startswith("fx_inference."):
        # The SDK's fused inference ops as files of before name them: the
        # PyTorch custom ops fx_sdk registers, torch.ops.fx_inference.*.
        qualified_name = "torch.ops." + qualified_name
    if not is_qualified_name(qualified_name):
        raise BundleError(f"{where}: {qualified_name!r} is not a qualified "
                          f"Python name (dotted ASCII identifiers, no dunder "
                          f"attributes)")
    atoms = qualified_name.split(".")
    if any(atom in _LOCAL_ATOMS for atom in atoms):
        raise BundleError(f"{where}: {qualified_name} does not exist outside "
                          f"the process that defined it (inside a function)")
    if atoms[0] == "builtins":
        import builtins
        if len(atoms) != 2 or not hasattr(builtins, atoms[1]):
            raise BundleError(f"{where}: {qualified_name} does not exist")
        obj = getattr(builtins, atoms[1])
        _check_object(obj, qualified_name, where)
        return obj
    # The longest importable module prefix, then attributes
    # (torchvision.ops.stochastic_depth is both a module and a function).
    for split in range(len(atoms) - 1, 0, -1):
        module = ".".join(atoms[:split])
        if not _is_trusted_module_name(module):
            continue
        try:
            obj = importlib.import_module(module)
        except ImportError:
            continue
        _check_object(obj, qualified_name, where)
        try:
            for atom in atoms[split:]:
                obj = getattr(obj, atom)
                _check_object(obj, qualified_name, where)
            return obj
        except AttributeError:
            continue
    if not _is_trusted_module_name(atoms[0]):
        raise BundleError(f"{where}: {qualified_name} does not exist (or is "
                          f"in a module a file may not name: not torch, "
                          f"torchvision, operator, math, builtins, "
                          f"collections, typing, nor one the program "
                          f"imported itself)")
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
    if kind in ("dtype", "memory_format", "layout", "qscheme"):
        value = resolve(payload, where)
        if not isinstance(value, _TORCH_CONSTANT_TYPES[kind]):
            raise BundleError(f"{where}: {payload} is not a torch {kind}")
        return value
    if kind == "device":
        return torch.device(payload)
    if kind == "symint":
        return symint(payload, where)
    raise BundleError(f"{where}: unknown value kind '{kind}'")


_TORCH_CONSTANT_TYPES = {"dtype": torch.dtype,
                         "qscheme": torch.qscheme,
                         "memory_format": torch.memory_format,
                         "layout": torch.layout}


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
        with open_within_limit(path, "r") as f:
            doc = json.load(f)
    except (OSError, ValueError) as e:
        raise BundleError(f"{path}: {e}")
    if doc.get("format") != "fx-graph" or doc.get("version") != 1:
        raise BundleError(f"{path}: not an fx-graph version 1 file")
    weights = {}
    if "weights" in doc:
        if not isinstance(doc["weights"], str):
            raise BundleError(f"{path}: field 'weights' must be a string")
        weights = load_weights(os.path.join(directory, doc["weights"]))
    return build_graph_module(doc, weights)


def load_tensors(path):
    """What torch.save wrote to `path`, read with torch.load(weights_only=
    True): tensors, numbers, strings and containers (and torch's
    return_types), never a pickle's code. BundleError for a file that
    needs more, or that is larger than max_file_bytes()."""
    _allow_return_types()
    try:
        with open_within_limit(path) as f:
            try:
                return torch.load(f, weights_only=True)
            except pickle.UnpicklingError as e:
                if "Unsupported operand" not in str(e):
                    raise
                # torch 1.13's weights_only unpickler lacks opcodes
                # torch.save writes (BINFLOAT, for a per-tensor quantized
                # tensor's scale): Python's unpickler, allowed the same
                # globals only. (Not through torch.load(pickle_module=...):
                # without weights_only, torch 1.13 replaces any
                # pickle_module by pickle itself.)
                f.seek(0)
                return _load_restricted(f)
    except BundleError:
        raise
    except OSError as e:
        raise BundleError(f"{path}: {e}")
    except Exception as e:  # pickle.UnpicklingError, RuntimeError, ...
        why = str(e).strip("'\"").rpartition("WeightsUnpickler error: ")[2]
        raise BundleError(f"{path}: not a file of tensors that loads without "
                          f"running code (torch.load weights_only=True): "
                          f"{why or type(e).__name__}")


def _load_restricted(f):
    """torch.load's zip-file reading of open file `f` with
    _RestrictedPickle's unpickler."""
    from torch import serialization
    with serialization._open_zipfile_reader(f) as zip_file:
        return serialization._load(zip_file, None, _RestrictedPickle,
                                   encoding="utf-8")


class _RestrictedPickle:
    """A pickle module for torch.load whose Unpickler resolves only the
    globals torch's weights_only unpickler allows (tensor rebuilding,
    qschemes, OrderedDict, return types): any other global in a file is an
    error, so nothing in it can name code to run."""

    class Unpickler(pickle.Unpickler):
        def find_class(self, module, name):
            from torch import _weights_only_unpickler as unpickler
            allowed = unpickler._get_allowed_globals()
            found = allowed.get(f"{module}.{name}")
            if found is None:
                raise pickle.UnpicklingError(
                    f"Unsupported class {module}.{name}")
            return found

    @staticmethod
    def load(file, **kwargs):
        return _RestrictedPickle.Unpickler(file, **kwargs).load()


def load_weights(path):
    """A weights file: qualified name -> tensor (load_tensors)."""
    weights = load_tensors(path)
    if not isinstance(weights, dict) or not all(
            is_attribute_path(k) and isinstance(v, torch.Tensor)
            for k, v in weights.items()):
        raise BundleError(f"{path}: weights must map attribute paths "
                          f"(layer1.0.weight) to tensors")
    return weights


def _allow_return_types():
    """torch 1.13's weights_only unpickler does not know torch.return_types
    (topk's expected output), plain structseq classes built from a tuple,
    nor quantized tensors (_rebuild_qtensor and the qschemes it takes, data
    as much as _rebuild_tensor_v2's): added to its allowed globals once."""
    from torch import _weights_only_unpickler as unpickler
    allowed = unpickler._get_allowed_globals()
    for name in dir(torch.return_types):
        cls = getattr(torch.return_types, name)
        if isinstance(cls, type) and issubclass(cls, tuple):
            allowed.setdefault(f"torch.return_types.{name}", cls)
    allowed.setdefault("torch._utils._rebuild_qtensor",
                       torch._utils._rebuild_qtensor)
    for scheme in (torch.per_tensor_affine, torch.per_channel_affine,
                   torch.per_channel_affine_float_qparams):
        allowed.setdefault(str(scheme), scheme)


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
    try:
        return cls(**config)
    except AssertionError:
        if not issubclass(cls, torch.ao.nn.intrinsic._FusedModule):
            raise
    # A fused module whose parts are no longer the float modules its
    # constructor asserts (convert_to_reference_fx's ConvReLU2d holds a
    # reference Conv2d): the Sequential of its parts it is.
    order = list(inspect.signature(cls.__init__).parameters)[1:]
    module = cls.__new__(cls)
    torch.nn.Sequential.__init__(module, *(config[p] for p in order))
    return module


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
        check_name(is_attribute_path, key, "field 'weight_kinds'",
                   ATTRIBUTE_PATH)
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


TENSOR_TYPE = "torch.fx.tensor_type.TensorType"
DYN_TYPE = "torch.fx.tensor_type._DynType"
_SIZE_GLOBAL = re.compile(r"_([0-9]{1,18})")


def gradual_size(name):
    """The int a TensorType size's global in generated code stands for
    (torch.fx names 3 `_3`), None for any other name."""
    m = _SIZE_GLOBAL.fullmatch(name)
    return int(m.group(1)) if m else None


_VAR = re.compile(r"~([0-9]{1,18})")
# A TensorType's graph text: of a tuple, a list or a torch.Size.
_TENSOR_TEXT = re.compile(r"TensorType\[\((.*)\)\]|TensorType\[\[(.*)\]\]"
                          r"|TensorType\[torch\.Size\(\[(.*)\]\)\]")


_INT_TEXT = re.compile(r"-?[0-9]{1,18}")
_FLOOR = re.compile(r"floor\(~([0-9]{1,18})(?:/([0-9]{1,18}))?"
                    r"(?: ([+-]) ([0-9]{1,18})/([0-9]{1,18}))?\)"
                    r"(?: ([+-]) ([0-9]{1,18}))?")


def sympy_dimension(text):
    """The sympy object unify_refinements' symbolic step prints as `text`:
    the symbol ~3, or a Conv2d's size over one, floor(~3/2 - 1/2) + 1,
    made from its parts (never evaluated); None for any other text."""
    import sympy
    if _VAR.fullmatch(text):
        return sympy.Symbol(text)
    m = _FLOOR.fullmatch(text)
    if not m:
        return None
    var, stride, sign, num, den, outer_sign, outer = m.groups()
    inner = sympy.Symbol("~" + var) / int(stride or 1)
    if num:
        inner += (1 if sign == "+" else -1) * sympy.Rational(int(num),
                                                             int(den))
    value = sympy.floor(inner)
    if outer:
        value += (1 if outer_sign == "+" else -1) * int(outer)
    return value


def _text_dims(code_items, text):
    """The dimensions of a TensorType as its graph text `text` shows them
    (the code's names are globals, which are not always the size they
    look like: torch.fx names -1 `_1`, and after unify_refinements'
    symbolic step `_11` may be 7): ints, Dyn, a ~N the code spells Dyn (a
    unification Var), sympy symbols and expressions. None when the text
    is not a TensorType of these, one per code item."""
    from torch.fx.experimental.unification import Var
    from torch.fx.tensor_type import Dyn
    m = _TENSOR_TEXT.fullmatch(text)
    body = next((g for g in m.groups() if g is not None), "") if m else ""
    items = body.rstrip(",").split(", ") if body else []
    if len(items) != len(code_items):
        return None
    dims = []
    for c, t in zip(code_items, items):
        if _INT_TEXT.fullmatch(t):
            dims.append(int(t))
        elif t == "Dyn" or (c == DYN_TYPE and _VAR.fullmatch(t)):
            dims.append(Dyn if t == "Dyn" else Var(int(t[1:])))
        elif (value := sympy_dimension(t)) is not None:
            dims.append(value)
        else:
            return None
    return dims


def gradual_type(code, text=None):
    """The gradual type (torch.fx.tensor_type) a node's "type" spells, made
    from its parts, never evaluated: DYN_TYPE is Dyn, TENSOR_TYPE[a,b,..]
    (each a size global _N or DYN_TYPE) a TensorType, of a list when `text`
    (the node's "type_text") shows TensorType[[..]], of a torch.Size when it
    shows TensorType[torch.Size(..)], else of a tuple; a Dyn the text shows
    as ~N (unify_refinements' variables) is unification's Var(N). After
    unify_refinements' symbolic step, the code names each dimension's
    global and the text shows its value: sympy symbols and expressions
    (sympy_dimension). None for any other type."""
    from torch.fx.experimental.unification import Var
    from torch.fx.tensor_type import Dyn, TensorType
    if code == DYN_TYPE:
        v = _VAR.fullmatch(text or "")
        return Var(int(v.group(1))) if v else Dyn
    if text and _VAR.fullmatch(text) and code.isidentifier():
        return sympy_dimension(text)
    if not (code.startswith(TENSOR_TYPE + "[") and code.endswith("]")):
        return None
    body = code[len(TENSOR_TYPE) + 1:-1]
    code_items = body.split(",") if body else []
    text = text or ""
    dims = _text_dims(code_items, text) if text else None
    if dims is None:
        dims = []
        for item in code_items:
            size = gradual_size(item)
            if item != DYN_TYPE and size is None:
                return None
            dims.append(Dyn if item == DYN_TYPE else size)
    if text.startswith("TensorType[["):
        return TensorType(dims)
    if text.startswith("TensorType[torch.Size(") and Dyn not in dims:
        return TensorType(torch.Size(dims))
    return TensorType(tuple(dims))


def gradual_globals(code, gradual):
    """The objects a gradual type's code form names (its sizes, symbols and
    expressions), by their globals: gradual is gradual_type(code, ...)."""
    from torch.fx.tensor_type import TensorType
    if not isinstance(gradual, TensorType):
        return {code: gradual} if code.isidentifier() else {}
    body = code[len(TENSOR_TYPE) + 1:-1]
    items = body.split(",") if body else []
    return {item: dim for item, dim in zip(items, gradual.__args__)
            if item.isidentifier()}


def node_type(entry, types):
    """The Python type an entry's "type" names: a gradual type
    (gradual_type), from `types` (name -> type, those seen when the graph
    was exported), else resolved; None if none of these."""
    name = entry.get("type")
    if name is None:
        return None
    gradual = gradual_type(name, entry.get("type_text"))
    if gradual is not None:
        return gradual
    if types and name in types:
        return types[name]
    try:
        found = resolve(name, f"node '{entry['name']}' type")
        if isinstance(found, type) or getattr(found, "__module__",
                                              None) == "typing":
            return found
        return None
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


def attribute_at(module, path, where):
    """The attribute at the dotted `path` below `module` (BundleError when
    there is none)."""
    try:
        return operator.attrgetter(path)(module)
    except AttributeError:
        raise BundleError(f"{where}: a node reads '{path}' of a module that "
                          f"has no such attribute") from None


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
        if node.op != "get_attr":
            continue
        owner = next((p for p in root if is_within(node.target, p)), None)
        if owner is not None:
            # An attribute of a module the graph also holds (get_attr
            # linear.weight, call_module linear): torch.fx's constructor
            # wants every target a key of a dict root.
            if node.target != owner:
                root[node.target] = attribute_at(
                    root[owner], node.target[len(owner) + 1:], where)
            continue
        key = f"{qualified}.{node.target}"
        if key not in weights:
            raise BundleError(f"{where}: node '{node.name}' reads "
                              f"'{node.target}', but the weights lack '{key}'")
        root[node.target] = weights[key]
    class_name = config.get("class_name", "GraphModule")
    check_name(is_plain_name, class_name, f"{where}: config.class_name",
               "a Python identifier")
    child = torch.fx.GraphModule(root, graph, class_name)
    for target, tensor in root.items():
        key = f"{qualified}.{target}"
        if isinstance(tensor, torch.Tensor) and key in kinds:
            place_tensor(child, target, tensor, kinds[key])
    return child


def described_module(value):
    """The MODULE entry a config ARG describes a module with (a dict ARG
    {"type", "config", "training"}: a Transformer stack's layer, a fused
    module's parts), or None for any other value."""
    entry = value.get("dict") if isinstance(value, dict) and len(value) == 1 \
        else None
    if not isinstance(entry, dict) or not isinstance(entry.get("type"), str) \
            or not isinstance(entry.get("config"), dict) \
            or set(entry["config"]) != {"dict"} \
            or not set(entry) <= {"type", "config", "training"}:
        return None
    return {"type": entry["type"], "config": entry["config"]["dict"],
            "training": entry.get("training", False)}


def config_value(value, qualified, share, types, kinds):
    """A constructor argument from its ARG: a module it describes is built
    (its weights come with its owner's), any other value decoded."""
    spec = described_module(value)
    if spec is not None:
        return build_module(qualified, spec, {}, share, types, kinds)
    name, _, key = qualified.rpartition(".")
    return decode(value, {}, f"module '{name}' config '{key}'")


def build_module(qualified, spec, weights, share, types, kinds):
    """The module a MODULE entry describes."""
    check_name(is_attribute_path, qualified, "module", ATTRIBUTE_PATH)
    if not isinstance(spec, dict) or not isinstance(spec.get("type"), str):
        raise BundleError(f"module '{qualified}': field 'type' must be a "
                          f"string")
    check_name(lambda t: is_qualified_name(t, class_suffix=True),
               spec["type"], f"module '{qualified}': field 'type'",
               "a qualified Python name (dotted ASCII identifiers, no dunder "
               "attributes)")
    if spec.get("type") == GRAPH_MODULE_TYPE:
        module = build_child(qualified, spec.get("config", {}), weights,
                             share, types, kinds)
        # Its own mode only: its modules keep theirs (fuse_by_partitions'
        # children are in training mode around modules in eval mode).
        module.training = spec.get("training", False)
        return module
    else:
        cls = resolve(spec["type"], f"module '{qualified}'")
        if not (isinstance(cls, type) and issubclass(cls, torch.nn.Module)):
            raise BundleError(f"module '{qualified}': {spec['type']} is not a "
                              f"torch.nn.Module class")
        config = {k: config_value(v, f"{qualified}.{k}", share, types, kinds)
                  for k, v in spec.get("config", {}).items()}
        module = new_module(cls, config, share)
    module.train(spec.get("training", False))
    return module


def check_attribute_name(function, args, where):
    """getattr(x, NAME) and hasattr(x, NAME): no dunder NAME (the way from
    a value to the interpreter's internals)."""
    import builtins
    if function in (builtins.getattr, builtins.hasattr) and len(args) > 1 \
            and isinstance(args[1], str) and args[1].startswith("__"):
        raise BundleError(f"{where}: args[1]: {args[1]!r} is a dunder "
                          f"attribute, which a file may not read")


def build_graph(entries, share, types, where_prefix=""):
    """A torch.fx Graph from NODE entries."""
    graph = torch.fx.Graph()
    nodes = {}
    for entry in entries:
        check_node(entry, where_prefix)
        name, op, target = entry["name"], entry["op"], entry["target"]
        where = f"{where_prefix}node '{name}'"
        args = tuple(decode(a, nodes, where + " args") for a in entry.get("args", []))
        kwargs = {k: decode(v, nodes, where + " kwargs")
                  for k, v in entry.get("kwargs", {}).items()}
        type_expr = node_type(entry, types) if share else None
        if op == "call_function":
            target = resolve(target, where)
            check_attribute_name(target, args, where)
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
    for key in weights:
        check_name(is_attribute_path, key, "weights", ATTRIBUTE_PATH)
    root = torch.nn.Module()
    weights = dict(weights)
    for qualified, spec in doc.get("modules", {}).items():
        module = build_module(qualified, spec, weights, share, types, kinds)
        if callable(getattr(module, "set_weight_bias", None)) and callable(
                getattr(module, "weight", None)):
            set_packed_weights(module, qualified, weights)
        set_path(root, qualified, module)
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


def set_packed_weights(module, qualified, weights):
    """Gives a lowered quantized module (convert_fx's Conv2d, Linear, ...,
    whose weights are packed) the tensors a file holds for it, taken out of
    `weights`: `weight` (quantized int8), `bias` (none with bias=False),
    and its output's `scale` and `zero_point` (0-dim)."""
    def take(key):
        return weights.pop(f"{qualified}.{key}", None)
    weight, bias = take("weight"), take("bias")
    scale, zero_point = take("scale"), take("zero_point")
    dynamic = ".quantized.dynamic." in type(module).__module__
    if dynamic:  # float in and out: no output quantization
        scale = zero_point = torch.zeros(())
    if weight is None or scale is None or zero_point is None:
        raise BundleError(f"module '{qualified}': a quantized module needs "
                          f"its weight, scale and zero_point in the weights")
    if not weight.is_quantized or scale.numel() != 1 or \
            zero_point.numel() != 1:
        raise BundleError(f"module '{qualified}': its weight must be a "
                          f"quantized tensor and scale and zero_point one "
                          f"number each")
    try:
        module.set_weight_bias(weight, bias)
    except (RuntimeError, TypeError) as e:
        raise BundleError(f"module '{qualified}': {e}") from None
    if not dynamic:
        module.scale = float(scale)
        module.zero_point = int(zero_point)


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
        if not (isinstance(context, type) and issubclass(context, tuple)):
            raise BundleError(f"{where}: {name} is not a NamedTuple class")
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
    for arg in entry["orig_args"]:
        check_name(is_plain_name, arg, "field 'pytree' orig_args",
                   "a parameter name")
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


def _positive_bytes(text):
    if not (text.isascii() and text.isdigit() and int(text) > 0):
        raise argparse.ArgumentTypeError(
            f"needs a positive number of bytes, got '{text}'")
    return int(text)


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("directory")
    parser.add_argument("--inputs")
    parser.add_argument("--expected")
    parser.add_argument("--rtol", type=float, default=1e-4)
    parser.add_argument("--atol", type=float, default=1e-5)
    parser.add_argument("--print", action="store_true")
    parser.add_argument("--max-file-bytes", type=_positive_bytes,
                        help="refuse larger files (default $FX_MAX_FILE_BYTES"
                        " or 16 GiB)")
    args = parser.parse_args(argv)
    set_max_file_bytes(args.max_file_bytes)
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
        try:
            out = gm(*load_tensors(inputs))
            if not os.path.exists(expected):
                return 0
            want = flatten(load_tensors(expected))
        except BundleError as e:
            print(f"torchfx_import: {e}", file=sys.stderr)
            return 2
    got = flatten(out)
    ok = len(got) == len(want) and all(
        torch.allclose(g, w, rtol=args.rtol, atol=args.atol) for g, w in zip(got, want))
    diff = max((float((g.float() - w.float()).abs().max()) for g, w in zip(got, want)),
               default=0.0)
    print(f"torchfx_import: {'allclose' if ok else 'DIFFERENT'} "
          f"(max abs diff {diff:g}, rtol {args.rtol:g}, atol {args.atol:g})")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
