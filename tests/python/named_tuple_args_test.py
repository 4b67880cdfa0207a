"""NamedTuple values inside node arguments, NamedTuple results and dicts whose
keys are not all str (issue 32, items 1-3), against torch.fx 1.13:

- graphs holding them print and generate code as torch.fx's do
  (`Pair(x=%inp, y=1.2)` when the class's _custom_fx_repr_fn prints so,
  `mod_Pair(inp, 1.2)` in code, `{0: x}`), in process and back through
  to_torch_fx (the very class again) and through bundle files (`fx print`,
  `fx code`, tools/torchfx_import.py);
- the SDK's run gives a Python callable the NamedTuple itself and returns a
  NamedTuple result as its class;
- what the SDK cannot show as torch.fx does is refused with ValueError.

torch.fx computes every expected answer. Run by fx_sdk_test.sh under
/usr/bin/python3.
"""

import collections
import json
import os
import subprocess
import typing

import pytest
import torch
import torch.fx
from torch.fx.node import _format_arg

import fx_sdk
import same_value
from fx_command import fx_binary
from fx_sdk import torchfx_export, torchfx_import


class Span(typing.NamedTuple):
    lo: torch.Tensor
    hi: object

    def _custom_fx_repr_fn(self):
        return f"Span(lo={_format_arg(self.lo)}, hi={_format_arg(self.hi)})"


Scale = collections.namedtuple("Scale", ["factor"])


class Odd(typing.NamedTuple):
    a: object

    def _custom_fx_repr_fn(self):
        return "<odd>"


def spread(span, *, scale):
    return (span.hi - span.lo) * scale.factor


torch.fx.wrap("spread")


def measure(x):
    return x.relu(), x.sum()


torch.fx.wrap("measure")


def num_users(text):
    return text.replace("[#users=", "[num_users=")


def assert_same_value(got, want, where="output"):
    same_value.assert_same_value(got, want, where, close=True, plain=True)


# ------------------------------------------------------------ the programs
# Each returns (torch.fx GraphModule, inputs).

def inlined_named_tuples():
    """NamedTuples written into a node's args and kwargs (torch.fx's
    symbolic_trace makes a node for a NamedTuple; a graph edit inlines
    it)."""
    class M(torch.nn.Module):
        def forward(self, x):
            return spread(Span(x, 2.0), scale=Scale(3.0))

    gm = torch.fx.symbolic_trace(M())
    x = next(n for n in gm.graph.nodes if n.op == "placeholder")
    call = next(n for n in gm.graph.nodes if n.target is spread)
    call.update_arg(0, Span(x, 1.5))
    call.update_kwarg("scale", Scale(x))
    gm.recompile()
    return gm, (torch.randn(3),)


def named_tuple_results():
    """A NamedTuple built by the graph (a call of its class) and returned
    inside a dict whose keys are an int, a float and a bool."""
    def f(x):
        s = Span(x, x + 1)
        return {0: s, 2.5: Scale(x.sum()), True: [x]}

    return torch.fx.symbolic_trace(f), (torch.randn(4),)


def named_tuple_output_literal():
    """An output node holding a NamedTuple and a dict with an int key
    (graph edits). torch.fx's code writes `Scale(factor=mul)`, a name its
    globals lack: gm(...) raises NameError, torch.fx's Interpreter runs
    it (reference())."""
    gm = torch.fx.symbolic_trace(lambda x: x * 2)
    out = next(n for n in gm.graph.nodes if n.op == "output")
    mul = out.args[0]
    out.args = ({5: Scale(mul), "s": (mul,)},)
    gm.recompile()
    return gm, (torch.randn(2),)


def reference(gm, inputs):
    """What torch.fx computes: gm(*inputs), or its Interpreter's run where
    torch.fx's own code cannot run (a NamedTuple literal in the output)."""
    try:
        return gm(*inputs)
    except NameError:
        return torch.fx.Interpreter(gm).run(*inputs)


PROGRAMS = [inlined_named_tuples, named_tuple_results,
            named_tuple_output_literal]


@pytest.fixture(params=PROGRAMS, ids=lambda p: p.__name__)
def program(request):
    torch.manual_seed(0)
    return request.param()


def test_the_sdk_prints_and_generates_as_torch_fx(program):
    gm, _ = program
    sdk_gm = fx_sdk.from_torch_fx(gm)
    assert sdk_gm.graph_text == num_users(str(gm.graph))
    assert sdk_gm.code == gm.code


def test_the_sdk_runs_as_torch_fx(program):
    gm, inputs = program
    sdk_gm = fx_sdk.from_torch_fx(gm)
    with torch.no_grad():
        assert_same_value(sdk_gm(*inputs), reference(gm, inputs))


def test_to_torch_fx_gives_back_the_classes(program):
    gm, inputs = program
    back = fx_sdk.to_torch_fx(fx_sdk.from_torch_fx(gm))
    assert str(back.graph) == str(gm.graph)
    assert back.code == gm.code
    with torch.no_grad():
        assert_same_value(reference(back, inputs), reference(gm, inputs))
    for got, want in zip(back.graph.nodes, gm.graph.nodes):
        assert [type(a) for a in got.args] == [type(a) for a in want.args]


def test_the_graph_api_reads_and_writes_named_tuples():
    gm, inputs = inlined_named_tuples()
    sdk_gm = fx_sdk.from_torch_fx(gm)
    call = next(n for n in sdk_gm.graph.nodes if n.target is spread)
    assert type(call.args[0]) is Span
    assert type(call.kwargs["scale"]) is Scale
    x = next(iter(sdk_gm.graph.nodes))
    call.update_arg(0, Span(3.0, x))
    sdk_gm.recompile()
    torch_call = next(n for n in gm.graph.nodes if n.target is spread)
    torch_call.update_arg(0, Span(3.0, torch_call.kwargs["scale"][0]))
    gm.recompile()
    assert sdk_gm.code == gm.code
    assert sdk_gm.graph_text == num_users(str(gm.graph))
    with torch.no_grad():
        assert_same_value(sdk_gm(*inputs), gm(*inputs))


def test_a_named_tuple_the_sdk_cannot_print_is_refused():
    gm = torch.fx.symbolic_trace(lambda x: x + 1)
    add = next(n for n in gm.graph.nodes if n.op == "call_function")
    add.update_arg(1, Odd(1))
    gm.recompile()
    with pytest.raises(ValueError, match="node 'add'.*'<odd>'"):
        fx_sdk.from_torch_fx(gm)
    with pytest.raises(ValueError, match="'<odd>'"):
        torchfx_export.graph_document(gm)


def test_a_dict_key_the_sdk_cannot_hold_is_refused():
    gm = torch.fx.symbolic_trace(lambda x: x + 1)
    out = next(n for n in gm.graph.nodes if n.op == "output")
    out.args = ({(1, 2): out.args[0]},)
    gm.recompile()
    with pytest.raises(ValueError, match="node 'output'.*tuple"):
        fx_sdk.from_torch_fx(gm)


# ------------------------------------------------------------------ files

def write_bundle(gm, directory):
    document, weights = torchfx_export.graph_document(gm)
    if weights:
        document["weights"] = "model.weights.pt"
        torch.save(weights, os.path.join(directory, "model.weights.pt"))
    path = os.path.join(directory, "graph.fx.json")
    with open(path, "w") as f:
        json.dump(document, f, indent=1)
    return path


def fx(*args):
    done = subprocess.run([fx_binary(), *args], capture_output=True,
                          text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_bundles_print_generate_and_rebuild_as_torch_fx(program, tmp_path):
    gm, inputs = program
    path = write_bundle(gm, str(tmp_path))
    assert fx("print", path) == num_users(str(gm.graph)) + "\n"
    assert fx("code", path) == gm.code
    rebuilt = torchfx_import.load_bundle(str(tmp_path))
    assert rebuilt.code == gm.code
    with torch.no_grad():
        assert_same_value(reference(rebuilt, inputs), reference(gm, inputs))


def test_a_class_made_inside_a_function_cannot_be_rebuilt_from_a_file(
        tmp_path):
    Local = collections.namedtuple("Local", ["v"])
    gm = torch.fx.symbolic_trace(lambda x: x + 1)
    add = next(n for n in gm.graph.nodes if n.op == "call_function")
    add.update_arg(1, Local(2))
    gm.recompile()
    path = write_bundle(gm, str(tmp_path))
    assert fx("code", path) == gm.code  # the C++ reader needs no class
    with pytest.raises(torchfx_import.BundleError, match="Local"):
        torchfx_import.load_bundle(str(tmp_path))


# ------------------------------------------------- a user's CodeGen (item 5)

class PackedCodeGen(torch.fx.graph.CodeGen):
    """forward takes one list of the inputs and returns a list."""

    def gen_fn_def(self, free_vars, maybe_return_annotation):
        return (f"\ndef forward(self, packed: List[torch.Tensor])"
                f"{maybe_return_annotation}:\n    {', '.join(free_vars)} = packed")

    def additional_globals(self):
        return [("List", typing.List)]

    def generate_output(self, output_args):
        return f"return [{output_args!r}]"

    def process_inputs(self, *inputs):
        return inputs[0]

    def process_outputs(self, outputs):
        return [outputs]


def packed_program():
    def f(a, b):
        return a * b, a - b
    gm = torch.fx.symbolic_trace(f)
    gm.graph.set_codegen(PackedCodeGen())
    gm.recompile()
    return gm, [torch.randn(3), torch.randn(3)]


def test_a_user_codegen_generates_and_runs_as_torch_fx():
    gm, packed = packed_program()
    sdk_gm = fx_sdk.from_torch_fx(gm)
    assert sdk_gm.graph_text == num_users(str(gm.graph))
    assert sdk_gm.code == gm.code
    with torch.no_grad():
        assert_same_value(sdk_gm(packed), gm(packed))
    back = fx_sdk.to_torch_fx(sdk_gm)
    assert back.graph._codegen is gm.graph._codegen
    assert back.code == gm.code
    with torch.no_grad():
        assert_same_value(back(packed), gm(packed))


def test_a_user_codegen_cannot_be_written_to_a_file():
    gm, _ = packed_program()
    with pytest.raises(ValueError, match="PackedCodeGen"):
        torchfx_export.graph_document(gm)


# ------------------------------------ a user's pytree node type (item 4)

class Box:
    def __init__(self, a, b):
        self.a, self.b = a, b


torch.utils._pytree._register_pytree_node(
    Box, lambda box: ([box.a, box.b], None),
    lambda leaves, _: Box(leaves[0], leaves[1]))
torch.fx._pytree.register_pytree_flatten_spec(Box, lambda box, _: [box.a,
                                                                   box.b])


def boxed_program():
    def f(x, y):
        return x.a * x.b + y
    gm = torch.fx.symbolic_trace(
        f, concrete_args={"x": Box(torch.fx.PH, torch.fx.PH)})
    return gm, (Box(torch.randn(3), torch.randn(3)), torch.randn(3))


def test_a_user_pytree_type_prints_generates_and_runs_in_process():
    gm, inputs = boxed_program()
    sdk_gm = fx_sdk.from_torch_fx(gm)
    assert sdk_gm.graph_text == num_users(str(gm.graph))
    assert sdk_gm.code == gm.code
    with torch.no_grad():
        assert_same_value(sdk_gm(*inputs), gm(*inputs))
    back = fx_sdk.to_torch_fx(sdk_gm)
    assert back.code == gm.code
    assert back.graph._codegen.pytree_info.in_spec == \
        gm.graph._codegen.pytree_info.in_spec
    with torch.no_grad():
        assert_same_value(back(*inputs), gm(*inputs))


def test_a_user_pytree_type_cannot_be_written_to_a_file():
    gm, _ = boxed_program()
    with pytest.raises(ValueError, match="Box is a user's pytree node type"):
        torchfx_export.graph_document(gm)
