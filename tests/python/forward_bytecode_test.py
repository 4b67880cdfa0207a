"""fx_sdk._C._forward_code (python/forward_bytecode.cc): the forward code
object it makes without compiling is the one Python's compile() makes of
the same source, field by field; sources outside its forms give None (and
fx_sdk compiles them). Run by fx_sdk_test.sh.
"""

import linecache
import sys
import traceback

import pytest
import torch
import torch.fx
import torchvision.models

import fx_sdk
from fx_sdk import _C

pytestmark = pytest.mark.skipif(sys.version_info[:2] != (3, 11),
                                reason="the emitter writes CPython 3.11 code")

FIELDS = ("co_argcount", "co_posonlyargcount", "co_kwonlyargcount",
          "co_nlocals", "co_stacksize", "co_flags", "co_code", "co_consts",
          "co_names", "co_varnames", "co_freevars", "co_cellvars",
          "co_filename", "co_name", "co_qualname", "co_firstlineno",
          "co_linetable", "co_exceptiontable")


def compiled(src, filename):
    """The forward code object compile() makes of src."""
    module = compile(src, filename, "exec")
    return next(c for c in module.co_consts if hasattr(c, "co_code"))


def assert_same_code(ours, want):
    for field in FIELDS:
        assert getattr(ours, field) == getattr(want, field), field
    # Equal constants of different types (1, 1.0, True) are not the same.
    assert [type(c) for c in ours.co_consts] == [type(c)
                                                 for c in want.co_consts]


def chain(nodes):
    root = torch.nn.Module()
    root.register_buffer("w", torch.rand(4, 16))
    graph = torch.fx.Graph()
    x = graph.placeholder("x")
    w = graph.get_attr("w")
    ops = [(torch.relu, lambda v: (v,)), (torch.add, lambda v: (v, w)),
           (torch.mul, lambda v: (v, w))]
    for i in range(nodes):
        fn, args = ops[i % 3]
        x = graph.call_function(fn, args(x))
    graph.output(x)
    return torch.fx.GraphModule(root, graph)


SOURCES = {
    "kwargs": "\n\n\ndef forward(self, x):\n"
              "    add = torch.add(x, x, alpha=2);  x = None\n"
              "    return add\n    ",
    "constants": "\n\n\ndef forward(self, x):\n"
                 "    view = x.view(-1, 4);  x = None\n"
                 "    mul = torch.mul(view, 1e-05)\n"
                 "    sum_1 = torch.sum(mul, dim=1, keepdim=True, "
                 "dtype=torch.float32);  mul = view = None\n"
                 "    return sum_1\n    ",
    "types_of_constants": "\n\n\ndef forward(self, x):\n"
                          "    a = torch.add(x, -0.0)\n"
                          "    b = torch.add(a, 0.0)\n"
                          "    c = torch.add(b, 0)\n"
                          "    d = torch.add(c, False);  a = b = c = None\n"
                          "    e = foo(d, 'name', \"other\", None, True, "
                          "12345678901234567890)\n"
                          "    return e\n    ",
    "modules_and_attributes": "\n\n\ndef forward(self, x, y):\n"
                              "    conv1 = self.conv1(x);  x = None\n"
                              "    g = getattr(conv1, 'shape')\n"
                              "    s = self.a.b.c\n"
                              "    l = getattr(self.layer1, \"0\").conv1(y)\n"
                              "    f = torch.nn.functional.relu(conv1, "
                              "inplace=False);  conv1 = s = l = None\n"
                              "    return f\n    ",
    "operators_and_subscripts": "\n\n\ndef forward(self, x):\n"
                                "    a = x + 1\n"
                                "    b = a ** x;  a = None\n"
                                "    c = x // b\n"
                                "    d = c[0];  c = None\n"
                                "    e = d @ d\n"
                                "    f = 2 * e\n"
                                "    g = e - f;  e = f = None\n"
                                "    h = foo(g, k=1)\n"
                                "    return h\n    ",
    "long_line": "\n\n\ndef forward(self, x):\n"
                 "    cat = torch.cat(" + ", ".join(["x"] * 25) +
                 ", torch.add(x, x), dim=0)\n    return cat\n    ",
    "call_at_the_stack_guideline": "\n\n\ndef forward(self, x):\n"
                                   "    a = foo(" + "x, " * 10 +
                                   ", ".join("k%d=1" % i for i in range(10)) +
                                   ")\n    return a\n    ",
    "no_parameters": "\n\n\ndef forward(self):\n"
                     "    w = self.w\n    return w\n    ",
}


@pytest.mark.parametrize("name", sorted(SOURCES))
def test_same_code_as_compile(name):
    src = SOURCES[name]
    ours = _C._forward_code(src, "<eval_with_key>.t")
    assert ours is not None
    assert_same_code(ours, compiled(src, "<eval_with_key>.t"))


@pytest.mark.parametrize("nodes", [4, 300, 10000])
def test_same_code_as_compile_for_torch_fx_code(nodes):
    # Past 256 locals and names the operands take EXTENDED_ARG.
    src = chain(nodes).code
    ours = _C._forward_code(src, "k")
    assert ours is not None
    assert_same_code(ours, compiled(src, "k"))


def test_more_args_than_the_method_call_form_takes():
    src = ("\n\n\ndef forward(self, x):\n    cat = torch.cat(" +
           ", ".join(["x"] * 30) + ")\n    return cat\n    ")
    assert _C._forward_code(src, "k") is None


@pytest.mark.parametrize("src", [
    "\n\n\ndef forward(self, x : torch.Tensor):\n    return x\n    ",
    "\n\n\ndef forward(self, x, y = 2.0):\n    return x\n    ",
    "\n\n\ndef forward(self, x):\n    t = (x, x)\n    return t\n    ",
    "\n\n\ndef forward(self, x):\n    s = x[(slice(None, 2, None),)]\n"
    "    return s\n    ",
    "\n\n\ndef forward(self, x):\n    a = 1 + 2\n    return a\n    ",
    "\n\n\ndef forward(self, x):\n    a = 'caf\u00e9'\n    return a\n    ",
    "\n\n\ndef forward(self, x):\n    a = 'a\\'b'\n    return a\n    ",
    "\n\n\ndef forward(self, x):\n    a = x\n    ",  # no return
    "\n\n\ndef forward(self, x):\n    return x\n    y = x\n    ",
    "\n\n\ndef forward(self, x):\n    a = 0x10\n    return a\n    ",
    "\n\n\ndef forward(self, x):\n    a = 'abc'[0]\n    return a\n    ",
    "\n\n\ndef forward(self, x):\n    a = foo(" + "x, " * 11 +
    ", ".join("k%d=1" % i for i in range(10)) + ")\n    return a\n    ",
    "\n\n\ndef forward(self, x):\n    a = getattr(self, 'f')(x)\n"
    "    return a\n    ",
    "import torch\n\ndef forward(self, x):\n    return x\n    ",
])
def test_other_forms_are_left_to_compile(src):
    compile(src, "k", "exec")  # valid Python all the same
    assert _C._forward_code(src, "k") is None


def test_round_trip_forward_is_compiles_and_traces_back_to_its_code():
    gm = chain(50)
    for lazy in (True, False):
        back = fx_sdk.to_torch_fx(fx_sdk.from_torch_fx(gm), lazy=lazy)
        x = torch.rand(4, 16)
        assert torch.equal(back(x), gm(x))
        code = type(back).forward.__code__
        assert code.co_filename.startswith("<eval_with_key>.")
        assert_same_code(code, compiled(back.code, code.co_filename))
        # The source is in linecache under the code's file name, as
        # recompile() registers it: tracebacks show the generated lines.
        # (linecache ends the last line with a newline.)
        lines = linecache.getlines(code.co_filename)
        assert "".join(lines) == back.code + "\n"
        # (forward itself: GraphModule.__call__ drops the traceback.)
        with pytest.raises(RuntimeError) as info:
            type(back).forward(back, torch.rand(3, 3))
        frames = traceback.extract_tb(info.tb)
        frame = next(f for f in frames if f.filename == code.co_filename)
        assert frame.line == back.code.splitlines()[frame.lineno - 1].strip()
        assert "__builtins__" in type(back).forward.__globals__


def test_torchvision_code_in_other_forms_still_round_trips():
    gm = torch.fx.symbolic_trace(torchvision.models.resnet18().eval())
    back = fx_sdk.to_torch_fx(fx_sdk.from_torch_fx(gm), lazy=False)
    x = torch.rand(1, 3, 64, 64)
    with torch.no_grad():
        assert torch.equal(back(x), gm(x))
    assert back.code == gm.code


def test_the_fast_path_checks_itself_once_per_process(monkeypatch):
    """fx_sdk uses the emitter only after it made, for a probe of every form
    it takes, what this interpreter's compile() makes; FX_SDK_FORWARD=compile
    turns it off, and the round trip still gives a working forward."""
    fx_sdk._bytecode_agrees.cache_clear()
    assert fx_sdk._bytecode_agrees()
    monkeypatch.setenv("FX_SDK_FORWARD", "compile")
    fx_sdk._bytecode_agrees.cache_clear()
    try:
        assert not fx_sdk._bytecode_agrees()
        gm = torch.fx.symbolic_trace(torch.nn.Sequential(torch.nn.ReLU()))
        back = fx_sdk.to_torch_fx(fx_sdk.from_torch_fx(gm), lazy=False)
        x = torch.randn(3)
        assert torch.equal(back(x), gm(x))
    finally:
        fx_sdk._bytecode_agrees.cache_clear()
