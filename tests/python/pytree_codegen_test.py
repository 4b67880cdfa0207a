"""pytree code generation against torch.fx 1.13 (issue 32, item 2): graphs
whose codegen is torch's _PyTreeCodeGen (symbolic_trace with pytree
concrete_args, *args and keyword-only parameters, make_fx of functions
taking nested inputs) go through the SDK and back, in process and through
bundle files, and print, generate and run as torch.fx's own:

- print(gm.graph) and gm.code, against the SDK's graph_text and code;
- gm(*inputs) against sdk_gm(*inputs) (the SDK's run, which flattens the
  inputs through in_spec and rebuilds the output through out_spec) and
  against to_torch_fx(sdk_gm)(*inputs): the same values in the same
  containers (namedtuples as their class);
- to_torch_fx gives back a _PyTreeCodeGen with equal orig_args, in_spec and
  out_spec;
- through files: tools/torchfx_export.py's bundle carries the "pytree"
  entry; `fx print` and `fx code` print torch.fx's text, `fx run -o` writes
  it back unchanged, and tools/torchfx_import.py rebuilds the GraphModule.

torch.fx computes every expected answer here, including its errors.
Run by fx_sdk_test.sh under /usr/bin/python3.
"""

import collections
import json
import os
import subprocess
import sys
import types

import pytest
import torch
import torch.fx
import torch.fx._symbolic_trace as symbolic_trace_module
from torch.fx import PH
from torch.fx.experimental.proxy_tensor import make_fx

import fx_sdk
from fx_command import fx_binary
from same_value import assert_same_value
from fx_sdk import torchfx_export, torchfx_import


def _patch_function(fn, nargs):
    """torch 1.13's _symbolic_trace._patch_function (what tracing a function
    with *args or keyword-only parameters calls), for Python 3.11, whose
    CodeType constructor 1.13's version does not know: the same code object,
    every parameter positional and no *args/**kwargs flags."""
    code = fn.__code__.replace(
        co_argcount=nargs, co_posonlyargcount=0, co_kwonlyargcount=0,
        co_flags=fn.__code__.co_flags & ~symbolic_trace_module.HAS_VARSTUFF)
    return types.FunctionType(code, fn.__globals__, fn.__name__,
                              fn.__defaults__, fn.__closure__)


if sys.version_info >= (3, 11):
    symbolic_trace_module._patch_function = _patch_function


Point = collections.namedtuple("Point", ["x", "y"])


def t(*shape):
    return torch.randn(*shape) if shape else torch.randn(3)


# ------------------------------------------------------------ the programs
# Each returns (torch.fx GraphModule, inputs).

def dict_input():
    def f(x):
        return x["a"] + x["b"]
    gm = torch.fx.symbolic_trace(f, concrete_args={"x": {"a": PH, "b": PH}})
    return gm, ({"a": t(), "b": t()},)


def nested_list_tuple_input():
    def f(x):
        return x[0] * x[1][0] + x[1][1]
    gm = torch.fx.symbolic_trace(f, concrete_args={"x": [PH, (PH, PH)]})
    return gm, ([t(), (t(), t())],)


def namedtuple_in_and_out():
    def f(p):
        return Point(p.x + p.y, p.x * p.y)
    gm = torch.fx.symbolic_trace(f, concrete_args={"p": Point(PH, PH)})
    return gm, (Point(t(), t()),)


def local_namedtuple_out():
    Pair = collections.namedtuple("Pair", ["first", "second"])

    def f(x):
        return Pair(x[0].relu(), x[1] - x[0])
    gm = torch.fx.symbolic_trace(f, concrete_args={"x": (PH, PH)})
    return gm, ((t(), t()),)


def dict_output():
    def f(x):
        return {"s": x[0] + x[1], "l": [x[0], (x[1],)]}
    gm = torch.fx.symbolic_trace(f, concrete_args={"x": (PH, PH)})
    return gm, ((t(), t()),)


def keyword_only():
    def f(x, *, y):
        return Point(x[0] * y, x[1])
    gm = torch.fx.symbolic_trace(f, concrete_args={"x": (PH, PH)})
    return gm, ((t(), t()), t())


def concrete_values_mixed_with_ph():
    def f(x):
        return x["a"] * x["b"] + x["c"][0]
    gm = torch.fx.symbolic_trace(
        f, concrete_args={"x": {"a": PH, "b": 3, "c": [PH]}})
    return gm, ({"a": t(), "b": 3, "c": [t()]},)


def make_fx_list_and_dict():
    def f(xs, d):
        return [xs[0] + d["k"], xs[1].sin()], {"z": d["j"] * 2}
    gm = make_fx(f)([t(), t()], {"k": t(), "j": t()})
    return gm, ([t(), t()], {"k": t(), "j": t()})


def empty_containers():
    def f(x, e, d):
        return x + 1, [], {}
    gm = torch.fx.symbolic_trace(f, concrete_args={"e": [], "d": {}})
    return gm, (t(), [], {})


class WithSelf(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = torch.nn.Linear(3, 3)

    def forward(self, x, y):
        return {"o": self.linear(x[0]) + y, "p": [x[1], 3]}


def method_with_self():
    gm = torch.fx.symbolic_trace(WithSelf(), concrete_args={"x": [PH, PH]})
    return gm, ([t(), t()], t())


PROGRAMS = [dict_input, nested_list_tuple_input, namedtuple_in_and_out,
            local_namedtuple_out, dict_output, keyword_only,
            concrete_values_mixed_with_ph, make_fx_list_and_dict,
            empty_containers, method_with_self]


# ----------------------------------------------------------------- checks

def num_users(text):
    return text.replace("[#users=", "[num_users=")


def assert_same_pytree_info(got, want):
    assert isinstance(got.graph._codegen, torch.fx.graph._PyTreeCodeGen)
    g, w = got.graph._codegen.pytree_info, want.graph._codegen.pytree_info
    assert g.orig_args == w.orig_args
    assert g.in_spec == w.in_spec
    assert g.out_spec == w.out_spec


@pytest.fixture(params=PROGRAMS, ids=lambda p: p.__name__)
def program(request):
    torch.manual_seed(0)
    gm, inputs = request.param()
    assert isinstance(gm.graph._codegen, torch.fx.graph._PyTreeCodeGen)
    return gm, inputs


def test_the_sdk_prints_and_generates_as_torch_fx(program):
    gm, _ = program
    sdk_gm = fx_sdk.from_torch_fx(gm)
    assert sdk_gm.graph_text == num_users(str(gm.graph))
    assert sdk_gm.code == gm.code


def test_the_sdk_runs_pytree_inputs_and_outputs_as_torch_fx(program):
    gm, inputs = program
    sdk_gm = fx_sdk.from_torch_fx(gm)
    with torch.no_grad():
        assert_same_value(sdk_gm(*inputs), gm(*inputs))


def test_to_torch_fx_gives_back_the_pytree_codegen(program):
    gm, inputs = program
    back = fx_sdk.to_torch_fx(fx_sdk.from_torch_fx(gm))
    assert_same_pytree_info(back, gm)
    assert str(back.graph) == str(gm.graph)
    assert back.code == gm.code
    with torch.no_grad():
        assert_same_value(back(*inputs), gm(*inputs))


def test_graph_copies_keep_the_pytree_codegen(program):
    """The SDK's deepcopy of the graph (a pipeline's snapshot) keeps it."""
    gm, inputs = program
    out, _ = fx_sdk.run_pipeline(gm, "dce")
    assert_same_pytree_info(out, gm)
    assert out.code == gm.code
    with torch.no_grad():
        assert_same_value(out(*inputs), gm(*inputs))


# ------------------------------------------------------ what torch refuses

def star_args():
    def f(x, *args):
        return x[0] + args[0]
    return torch.fx.symbolic_trace(f, concrete_args={"x": [PH, PH]})


def test_star_args_print_generate_and_fail_to_run_as_torch_fx():
    """With *args the generated forward takes only x, and in_spec wants
    two arguments: torch.fx's gm fails, and so does the SDK's."""
    gm = star_args()
    sdk_gm = fx_sdk.from_torch_fx(gm)
    assert sdk_gm.graph_text == num_users(str(gm.graph))
    assert sdk_gm.code == gm.code
    back = fx_sdk.to_torch_fx(sdk_gm)
    assert back.code == gm.code
    assert_same_pytree_info(back, gm)
    x = [t(), t()]
    with pytest.raises(IndexError):
        gm(x)
    with pytest.raises(Exception, match="index out of range"):
        sdk_gm(x)
    with pytest.raises(TypeError):
        gm(x, t())
    with pytest.raises(Exception, match="takes 2 positional arguments"):
        sdk_gm(x, t())


def test_keyword_only_with_default_generates_torch_fxs_code():
    """A parameter with a default under pytree codegen: torch.fx writes
    `x_1, x_2, y = 2, = ...`, which does not compile, so torch.fx cannot
    make the GraphModule. The SDK generates the same text, to_torch_fx fails
    as torch.fx does, and the SDK's run computes what torch.fx's
    Interpreter computes on the same graph."""
    def f(x, *, y=2):
        return x[0] * y + x[1]
    tracer = torch.fx.Tracer()
    graph = tracer.trace(f, concrete_args={"x": (PH, PH)})
    with pytest.raises(SyntaxError):
        torch.fx.GraphModule(tracer.root, graph)
    gm = torch.fx.GraphModule(tracer.root, torch.fx.Graph())
    gm._graph = graph  # the graph, without compiling its code
    sdk_gm = fx_sdk.from_torch_fx(gm)
    assert sdk_gm.graph_text == num_users(str(graph))
    assert sdk_gm.code == graph.python_code("self").src
    with pytest.raises(SyntaxError):
        fx_sdk.to_torch_fx(sdk_gm, lazy=False)
    x, y = (t(), t()), t()
    want = torch.fx.Interpreter(gm).run(x, y)
    assert_same_value(sdk_gm(x, y), want)


def test_inputs_that_do_not_fit_the_spec_fail_as_in_torch_fx():
    gm, inputs = dict_input()
    sdk_gm = fx_sdk.from_torch_fx(gm)
    missing = {"a": t()}
    with pytest.raises(KeyError):
        gm(missing)
    with pytest.raises(Exception, match="KeyError: 'b'"):
        sdk_gm(missing)
    # Keys in another order are read by the spec's keys, extra ones ignored.
    reordered = {"c": t(), "b": inputs[0]["b"], "a": inputs[0]["a"]}
    assert_same_value(sdk_gm(reordered), gm(reordered))


def test_an_ordered_dict_input_fails_as_in_torch_fx():
    """fx_pytree has no flatten_spec for OrderedDict: torch.fx's forward
    raises, so does the SDK's."""
    def f(x):
        return x["a"] + 1
    gm = torch.fx.symbolic_trace(
        f, concrete_args={"x": collections.OrderedDict(a=PH)})
    sdk_gm = fx_sdk.from_torch_fx(gm)
    assert sdk_gm.code == gm.code
    x = collections.OrderedDict(a=t())
    with pytest.raises(RuntimeError, match="flatten_fn_spec"):
        gm(x)
    with pytest.raises(Exception, match="flatten_fn_spec"):
        sdk_gm(x)


# ------------------------------------------------------------------ files


def write_bundle(gm, directory):
    """gm as tools/torchfx_export.py writes it."""
    document, weights = torchfx_export.graph_document(gm)
    if weights:
        document["weights"] = "model.weights.pt"
        torch.save(weights, os.path.join(directory, "model.weights.pt"))
    path = os.path.join(directory, "graph.fx.json")
    with open(path, "w") as f:
        json.dump(document, f, indent=1)
    return path


def classes_found_by_name(gm):
    """Whether every namedtuple class in gm's specs is found by its name,
    as a bundle names it."""
    def found(spec):
        if spec is None:
            return True
        if spec.type is collections.namedtuple:
            name = torchfx_export.class_name(spec.context)
            try:
                if torchfx_import.resolve(name, "") is not spec.context:
                    return False
            except torchfx_import.BundleError:
                return False
        return all(found(c) for c in spec.children_specs)
    info = gm.graph._codegen.pytree_info
    return found(info.in_spec) and found(info.out_spec)


def fx(*args):
    return subprocess.run([fx_binary(), *args], check=True,
                          capture_output=True, text=True).stdout


def test_bundles_print_generate_and_run_as_torch_fx(program, tmp_path):
    gm, inputs = program
    (tmp_path / "in").mkdir()
    (tmp_path / "out").mkdir()
    path = write_bundle(gm, str(tmp_path / "in"))
    assert "pytree" in json.load(open(path))
    assert fx("print", path) == num_users(str(gm.graph)) + "\n"
    assert fx("code", path) == gm.code
    out = str(tmp_path / "out" / "graph.fx.json")
    fx("run", path, "--pipeline", "dce", "-o", out)
    with open(path) as a, open(out) as b:
        assert json.load(a)["pytree"] == json.load(b)["pytree"]
    if not classes_found_by_name(gm):  # a namedtuple made in a function
        with pytest.raises(torchfx_import.BundleError, match="does not exist"):
            torchfx_import.load_bundle(str(tmp_path / "out"))
        return
    back = torchfx_import.load_bundle(str(tmp_path / "out"))
    assert_same_pytree_info(back, gm)
    assert back.code == gm.code
    with torch.no_grad():
        assert_same_value(back(*inputs), gm(*inputs))


def test_bundles_without_pytree_are_written_as_before(tmp_path):
    def f(x):
        return x + 1
    gm = torch.fx.symbolic_trace(f)
    document, _ = torchfx_export.graph_document(gm)
    assert "pytree" not in document
    path = write_bundle(gm, str(tmp_path))
    out = str(tmp_path / "out.fx.json")
    fx("run", path, "--pipeline", "dce", "-o", out)
    with open(path) as a, open(out) as b:
        assert a.read() == b.read()
