"""The gradual_typecheck pass (libfx_optimization) against torch 1.13's
torch.fx.experimental.graph_gradual_typechecker.GraphTypeChecker on the
same graphs: every node's type, the graph text (print(graph): a typed node
shows `TensorType[(1, 2, Dyn)]`, `TensorType[[2, Dyn]]` or
`TensorType[torch.Size([3, 4])]` as torch made it) and the generated code
are torch's, read back through fx_sdk.to_torch_fx; or both refuse with
torch's TypeError message. Run by fx_sdk_test.sh.

PyTorch's own test/fx/test_gradual_type.py runs with its GraphTypeChecker
replaced by one that runs both checkers on the same graph and compares
them, then leaves torch's result for the test's own assertions; its
infer_symbolic_types is replaced by one that runs the unify_refinements
pass (rounds=2) and torch's two refinement rounds on the same graph and
compares graph text, types and code (sympy symbols and expressions
included) after torch's full infer_symbolic_types, then leaves torch's
result for the test's assertions.

torch 1.13's calculate_out_dimension divides both spatial sizes of a Conv2d
or MaxPool2d by stride[0] (a bug); both passes do so only with the option
first_stride_for_both=true, which every comparison with torch sets. With the
default each size is divided by its own stride, and the sizes are checked
against the modules' real outputs.
"""

import importlib.util
import json
import operator
import os
import re
import sys
import unittest

import pytest
import torch
import torch.fx
import torchvision
from torch.fx.experimental import graph_gradual_typechecker as gtc
from torch.fx.experimental import unify_refinements as ur
from torch.fx.tensor_type import Dyn, TensorType

import fx_sdk


TESTS = os.environ.get("FX_PYTORCH_TESTS") or \
    "/var/cache/fx-sdk/pytorch-1.13.1-tests"
TorchChecker = gtc.GraphTypeChecker

# The passes as torch 1.13 runs them: both spatial sizes of a Conv2d or
# MaxPool2d divided by stride[0] (calculate_out_dimension's bug).
AS_TORCH = "first_stride_for_both=true"
TYPECHECK = f"gradual_typecheck{{{AS_TORCH}}}"
SYMBOLIC = f"unify_refinements{{rounds=2,symbolic_relations=true,{AS_TORCH}}}"


def refinements(rounds):
    """unify_refinements{rounds=N} as torch 1.13 runs it."""
    return f"unify_refinements{{rounds={rounds},{AS_TORCH}}}"


def sdk_typecheck(gm, pipeline=TYPECHECK):
    """Ours on an SDK copy of gm: (the SDK GraphModule, the pass's report)."""
    sdk_gm = fx_sdk.from_torch_fx(gm)
    files, dirs = fx_sdk._plugin_sources((), True)
    try:
        report = fx_sdk._C._run_pipeline(sdk_gm, pipeline, files,
                                         dirs, True, [], recompile=True,
                                         example_batches=[])
    except RuntimeError as e:  # the pass failed: the pipeline stops
        assert "failed and was rolled back" in str(e), e
        return sdk_gm, {"outcome": "rolled_back", "error": str(e)}
    return sdk_gm, report[0]


def node_types(sdk_gm):
    return [(n.name, n.type) for n in sdk_gm.graph.nodes]


DYN = "torch.fx.tensor_type._DynType"
TENSOR_TYPE = re.compile(r"torch\.fx\.tensor_type\.TensorType\[(.*)\]")


def as_torch_type(code):
    """The torch object a code-form type stands for (sizes are globals
    named _N, Dyn its class)."""
    if code is None or code == "int":
        return int if code else None
    if code == DYN:
        return Dyn
    m = TENSOR_TYPE.fullmatch(code)
    if not m:
        return code
    return TensorType(tuple(Dyn if a == DYN else int(a[1:])
                            for a in m.group(1).split(",")))


def same_types(ours, gm):
    """Every node of ours has the type torch gave gm's."""
    for n, theirs in zip(ours.graph.nodes, gm.graph.nodes):
        want = theirs.type
        if want is not None and not isinstance(want, (TensorType, type)) \
                and want != Dyn:
            want = torch.fx.node._type_repr(want)
        assert as_torch_type(n.type) == want, (n.name, n.type, want)


def broadcast_meta(n):
    """meta['broadcast'] and the operand types torch's add rule leaves
    under the operands' names (their repr: tuple form included)."""
    names = [a.name for a in n.args[:2] if isinstance(a, torch.fx.Node)]
    return (n.meta.get("broadcast"),
            {k: repr(n.meta[k]) for k in names if k in n.meta})


def same_broadcast_meta(ours, gm):
    """Every add torch's checker noted meta['broadcast'] on has ours, with
    the operands' broadcast TensorTypes where it is True; no other node
    has them."""
    back = fx_sdk.to_torch_fx(ours)
    for n, theirs in zip(back.graph.nodes, gm.graph.nodes):
        assert broadcast_meta(n) == broadcast_meta(theirs), \
            (n.name, broadcast_meta(n), broadcast_meta(theirs))
        for k, v in n.meta.items():
            if k in broadcast_meta(theirs)[1]:
                assert isinstance(v, TensorType) and v == theirs.meta[k]


def same_text_and_code(ours, gm, code=True):
    """ours (an SDK GraphModule) back in torch.fx prints as gm and has its
    node types (their repr: a TensorType's tuple, list or torch.Size form
    included) and, with `code`, its code."""
    back = fx_sdk.to_torch_fx(ours)
    assert str(back.graph) == str(gm.graph)
    assert [repr(n.type) for n in back.graph.nodes] == \
        [repr(n.type) for n in gm.graph.nodes]
    if code:
        assert back.code == gm.code
    return back


def check(gm, pipeline=TYPECHECK):
    """Both checkers on gm (ours as `pipeline`, by default as torch 1.13
    runs it); torch's result is left in gm. Returns ours."""
    gm.recompile()  # the code names the types a test set on the nodes
    before = node_types(fx_sdk.from_torch_fx(gm))
    before_text = str(gm.graph)
    ours, report = sdk_typecheck(gm, pipeline)
    try:
        TorchChecker({}, gm).type_check()
    except (TypeError, RuntimeError, AssertionError,
            NotImplementedError) as e:
        assert report["outcome"] == "rolled_back", report
        # torch's TypeErrors word for word; its other errors print Python
        # objects (a target's repr), named here by their text instead.
        want = f"{type(e).__name__}: {e}" if isinstance(e, TypeError) else \
            f"{type(e).__name__}: "
        assert want in report["error"], (want, report["error"])
        assert node_types(ours) == before  # rolled back (torch's is not)
        assert str(fx_sdk.to_torch_fx(ours).graph) == before_text
        raise
    assert report["outcome"] == "ran", report
    same_types(ours, gm)
    same_broadcast_meta(ours, gm)
    try:
        gm.recompile()
    except AssertionError:
        # torch 1.13's code generation fails on a size above 256: it names
        # each size's global after the int object, and equal ints above 256
        # are different objects (add_global asserts). The types and the
        # graph text are compared.
        assert any(isinstance(a, int) and a > 256 for n in gm.graph.nodes
                   if isinstance(n.type, TensorType) for a in n.type.__args__)
        same_text_and_code(ours, gm, code=False)
        return ours
    theirs = fx_sdk.from_torch_fx(gm)
    assert node_types(ours) == node_types(theirs)
    assert ours.code == gm.code
    same_text_and_code(ours, gm)
    return ours


class CheckedTypeChecker:
    """GraphTypeChecker for PyTorch's tests: ours compared with torch's."""

    def __init__(self, env, traced):
        self.traced = traced

    def type_check(self):
        check(self.traced)
        return True


def torch_refine_round(traced):
    """infer_symbolic_types_single_pass, returning its Refine."""
    r = gtc.Refine(traced)
    r.refine()
    ur.substitute_all_types(traced.graph, ur.unify_eq(r.constraints))
    return r


COMPARED_REFINEMENTS = []


def same_refined(back, traced, code=True):
    """back (ours, through to_torch_fx) prints as traced and has its types:
    their reprs and values (Var, sympy symbols and expressions alike) and,
    with `code`, its code."""
    assert str(back.graph) == str(traced.graph)
    assert [repr(n.type) for n in back.graph.nodes] == \
        [repr(n.type) for n in traced.graph.nodes]
    assert [n.type for n in back.graph.nodes] == \
        [n.type for n in traced.graph.nodes]
    assert [[type(a) for a in getattr(n.type, "__args__", [n.type])]
            for n in back.graph.nodes] == \
        [[type(a) for a in getattr(n.type, "__args__", [n.type])]
         for n in traced.graph.nodes]
    if code:
        assert back.code == traced.code
        # The code's globals stand for torch's objects: its annotations are.
        traced.recompile()
        assert back.forward.__annotations__ == \
            traced.forward.__annotations__


def checked_infer_symbolic_types(traced):
    """torch's infer_symbolic_types (two refinement rounds, then
    symbolic_relations) and ours (SYMBOLIC) on the same graph: graph text,
    types and, where
    torch can generate it, code; or both refuse with torch's TypeError. A
    graph torch cannot generate code for before (a size above 256) cannot
    reach ours through gm.code and is not compared."""
    try:
        traced.recompile()
        ours, report = sdk_typecheck(traced, SYMBOLIC)
    except (AssertionError, AttributeError, TypeError):
        ours = None
    torch_refine_round(traced)
    r = torch_refine_round(traced)
    try:
        r.symbolic_relations()
    except TypeError as e:
        if ours is not None:
            assert report["outcome"] == "rolled_back", report
            assert f"TypeError: {e}" in report["error"], report["error"]
        raise
    if ours is not None:
        assert report["outcome"] == "ran", report
        try:
            traced.recompile()
        except AssertionError:  # torch's codegen on a size above 256
            same_refined(fx_sdk.to_torch_fx(ours), traced, code=False)
        else:
            same_refined(fx_sdk.to_torch_fx(ours), traced)
        COMPARED_REFINEMENTS.append(str(traced.graph))


def pytorch_gradual_type_tests():
    path = os.path.join(TESTS, "fx", "test_gradual_type.py")
    if not os.path.exists(path):
        return None, []
    # expecttest, which Debian lacks: the conformance suite's stand-in.
    sdk_root = os.path.dirname(os.path.dirname(fx_sdk.__file__))
    sys.path.append(os.path.join(os.path.dirname(sdk_root), "tools",
                                 "conformance", "shims"))
    spec = importlib.util.spec_from_file_location("test_gradual_type", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    # TypeCheckerTest's 32 tests; AnnotationsTest's 6 test tensor_type's
    # relations alone (no GraphTypeChecker), nothing of the pass.
    cls = module.TypeCheckerTest
    names = sorted(f"{cls.__name__}.{n}" for n in dir(cls)
                   if n.startswith("test_"))
    return module, names


MODULE, NAMES = pytorch_gradual_type_tests()


@pytest.mark.parametrize("name", NAMES or ["missing"])
def test_pytorch_gradual_type_tests(name, monkeypatch):
    if MODULE is None:
        pytest.skip(f"PyTorch's test_gradual_type.py is not in {TESTS}")
    monkeypatch.setattr(MODULE, "GraphTypeChecker", CheckedTypeChecker)
    monkeypatch.setattr(MODULE, "infer_symbolic_types",
                        checked_infer_symbolic_types)
    compared = len(COMPARED_REFINEMENTS)
    cls_name, test_name = name.split(".")
    result = unittest.TestResult()
    getattr(MODULE, cls_name)(test_name).run(result)
    problems = result.errors + result.failures
    assert not problems, problems[0][1]
    assert result.testsRun == 1 and not result.skipped
    if name in REFINED_PYTORCH_TESTS:  # ours was compared at least once
        assert len(COMPARED_REFINEMENTS) > compared, name


# PyTorch's tests whose infer_symbolic_types graph ours is compared on
# (test_resnet50's has sizes above 256, which torch's codegen refuses).
REFINED_PYTORCH_TESTS = {
    "TypeCheckerTest.test_type_check_batch_norm_symbolic",
    "TypeCheckerTest.test_symbolic_add_with_broadcast",
    "TypeCheckerTest.test_symbolic_add_with_broadcast_2",
    "TypeCheckerTest.test_type_check_conv2D_types",
    "TypeCheckerTest.test_type_check_symbolic_inferenceconv2D_maxpool2d_flatten",
}


@pytest.mark.parametrize("name,pipeline", [
    ("resnet18", TYPECHECK), ("resnet18", "gradual_typecheck"),
    ("resnet50", TYPECHECK)])
def test_torchvision_resnet(name, pipeline):
    """As test_gradual_type.py's test_resnet50: traced, the input annotated
    TensorType((1, 3, 224, 224)), and with a Dyn batch. resnet's strides are
    all symmetric, so the default pass gives torch's types too."""
    for dims in [(1, 3, 224, 224), (Dyn, 3, 224, 224)]:
        gm = torch.fx.symbolic_trace(getattr(torchvision.models, name)())
        for n in gm.graph.nodes:
            if n.op == "placeholder":
                n.type = TensorType(dims)
        gm.recompile()
        ours = check(gm, pipeline)
        batch = "_1" if dims[0] == 1 else DYN
        assert list(ours.graph.nodes)[-1].type == \
            f"torch.fx.tensor_type.TensorType[{batch},_1000]"


def test_broadcast_noted_as_torch_notes_it():
    """meta['broadcast'] on each add of two tensors: True where
    broadcasting changed an operand's type, with each operand's broadcast
    type under its name, False where not (check() compares every node with
    torch's)."""

    class M(torch.nn.Module):
        def forward(self, x, y):
            z = torch.add(x, y)
            return operator.add(z, x)

    gm = torch.fx.symbolic_trace(M())
    x, y = [n for n in gm.graph.nodes if n.op == "placeholder"]
    x.type = TensorType((1, 2, Dyn))
    y.type = TensorType((2, 1))
    ours = check(gm)
    adds = [n for n in gm.graph.nodes if n.op == "call_function"]
    assert [n.meta.get("broadcast") for n in adds] == [True, False]
    back = fx_sdk.to_torch_fx(ours)
    assert [n.meta.get("broadcast") for n in back.graph.nodes
            if n.op == "call_function"] == [True, False]
    add = next(n for n in back.graph.nodes if n.op == "call_function")
    theirs = next(n for n in gm.graph.nodes if n.op == "call_function")
    assert add.meta["x"] == theirs.meta["x"] == TensorType((1, 2, Dyn))
    assert add.meta["y"] == theirs.meta["y"] == TensorType((1, 2, Dyn))
    # The pair survives a graph file, and torch's graph comes in with it.
    again = fx_sdk.to_torch_fx(fx_sdk.from_torch_fx(back))
    assert broadcast_meta(list(again.graph.nodes)[2]) == \
        broadcast_meta(list(gm.graph.nodes)[2])


def test_untyped_input_parameter_and_scalar_add():
    """An unannotated input is Dyn (and every rule on it), a parameter's
    type is its shape, an int operand of add takes the tensor's type."""

    class M(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.w = torch.nn.Parameter(torch.randn(3, 4))
            self.lin = torch.nn.Linear(4, 2)

        def forward(self, x, y: TensorType((Dyn, 4)), k: int):
            a = torch.add(y, self.w)
            b = torch.flatten(self.lin(torch.transpose(x, 0, 1)), 1)
            return torch.add(k, b + a)

    check(torch.fx.symbolic_trace(M()))


def refused(gm):
    """Both refuse gm: torch's message is ours, the graph as it was."""
    before = node_types(fx_sdk.from_torch_fx(gm))
    ours, report = sdk_typecheck(gm)
    assert "INVALID_ARGUMENT: gradual_typecheck: node '" in report["error"]
    assert node_types(ours) == before
    with pytest.raises((TypeError, RuntimeError, AssertionError,
                        NotImplementedError)):
        check(gm)  # torch's message in ours, word for word
    return report["error"]


def test_inconsistent_annotations_refused():
    class M(torch.nn.Module):
        def forward(self, x: TensorType((1, 2, 3)),
                    y: TensorType((1, 4, 3))):
            return torch.add(x, y)

    error = refused(torch.fx.symbolic_trace(M()))
    assert "Cannot add arguments x (TensorType[(1, 2, 3)])" in error


def test_conv_channels_refused():
    class M(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.bn = torch.nn.BatchNorm2d(3)

        def forward(self, x: TensorType((1, 2, Dyn, 4))):
            return torch.reshape(self.bn(x), [5, -1])

    refused(torch.fx.symbolic_trace(M()))


def test_unknown_ops_refused():
    class Fn(torch.nn.Module):
        def forward(self, x: TensorType((1, 2))):
            return torch.sigmoid(x)

    class Method(torch.nn.Module):
        def forward(self, x: TensorType((1, 2))):
            return x.relu()

    class Mod(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.act = torch.nn.Tanh()

        def forward(self, x: TensorType((1, 2))):
            return self.act(x)

    class Const(torch.nn.Module):
        def forward(self, x: TensorType((1, 2))):
            return x + 1

    for cls in (Fn, Method, Mod, Const):
        gm = torch.fx.symbolic_trace(cls())
        ours, report = sdk_typecheck(gm)
        assert report["outcome"] == "rolled_back", report
        assert "gradual_typecheck: node '" in report["error"]
        with pytest.raises((RuntimeError, NotImplementedError,
                            AssertionError)):
            TorchChecker({}, gm).type_check()


def test_unknown_option_refused():
    """An option the pass does not take is refused by name before the
    pass runs."""

    class M(torch.nn.Module):
        def forward(self, x: TensorType((1, 2))):
            return torch.add(x, x)

    with pytest.raises(ValueError, match="refine"):
        fx_sdk.run_pipeline(torch.fx.symbolic_trace(M()),
                            "gradual_typecheck{refine=true}")


def test_run_pipeline_gives_torch_types_back():
    """fx_sdk.run_pipeline's GraphModule is torch's after GraphTypeChecker,
    in a graph whose types hold sizes (_7) and forms (a transpose's list, a
    parameter's torch.Size) no input had: graph text, code and types."""

    class M(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = torch.nn.Linear(2, 7)
            self.w = torch.nn.Parameter(torch.randn(2, 1, 7))

        def forward(self, x: TensorType((1, 2, Dyn)),
                    y: TensorType((1, 2, 3))):
            a = torch.transpose(torch.add(x, y), 1, 2)
            return torch.add(self.lin(a), self.w)

    gm = torch.fx.symbolic_trace(M())
    back, report = fx_sdk.run_pipeline(gm, TYPECHECK)
    assert report[0]["outcome"] == "ran"
    TorchChecker({}, gm).type_check()
    gm.recompile()
    assert str(back.graph) == str(gm.graph)
    assert back.code == gm.code
    assert [repr(n.type) for n in back.graph.nodes] == \
        [repr(n.type) for n in gm.graph.nodes]
    assert "TensorType[[1, Dyn, 2]]" in str(back.graph)
    assert "TensorType[torch.Size([2, 1, 7])]" in str(back.graph)
    x = torch.randn(1, 2, 3)
    torch.testing.assert_close(back(x, x), gm(x, x))


def test_graph_file_keeps_type_text():
    """The typed graph as a graph file: each TensorType's print(graph) form
    is the node's "type_text", and the file read back (types made from
    their names, nothing evaluated) prints and codes as torch's."""

    class M(torch.nn.Module):
        def forward(self, x: TensorType((2, Dyn, 3))):
            return torch.reshape(torch.transpose(x, 0, 2), [3, -1])

    gm = torch.fx.symbolic_trace(M())
    ours, report = sdk_typecheck(gm)
    assert report["outcome"] == "ran", report
    TorchChecker({}, gm).type_check()
    gm.recompile()
    text, weights = fx_sdk._C._to_bundle(ours, include_nodes=True,
                                         in_process=True)
    doc = json.loads(text)
    texts = {e["name"]: e.get("type_text") for e in doc["nodes"]}
    assert texts["transpose"] == "TensorType[[3, Dyn, 2]]"
    assert texts["reshape"] == "TensorType[[3, Dyn]]"
    back = fx_sdk._import.build_graph_module(doc, dict(weights), share=True)
    assert str(back.graph) == str(gm.graph)
    assert back.code == gm.code


def test_gradual_type_names_are_not_evaluated():
    """The importer makes a gradual type from its parts only: anything else
    in TensorType[...] is no gradual type."""
    tt = "torch.fx.tensor_type.TensorType"
    assert fx_sdk._import.gradual_type(f"{tt}[_1,_2]") == TensorType((1, 2))
    assert fx_sdk._import.gradual_type("torch.fx.tensor_type._DynType") is Dyn
    for code in (f"{tt}[os.system]", f"{tt}[_1,__import__]", f"{tt}[_-1]",
                 "torch.Tensor", f"{tt}[_1"):
        assert fx_sdk._import.gradual_type(code) is None, code
    assert fx_sdk._import.gradual_size("_12") == 12
    assert fx_sdk._import.gradual_size("_x") is None


def test_tuple_output():
    """An output of several values: torch 1.13 types it with the Python
    tuple of their types, no type annotation (its gm.recompile() then fails:
    TypeError: unhashable type: 'TensorType'); ours leaves the output
    untyped, so the code stays valid, and types every other node as torch.
    The graph text (which shows no output type) is torch's."""

    class M(torch.nn.Module):
        def forward(self, x: TensorType((1, 2, Dyn)),
                    y: TensorType((1, 2, 3))):
            a = torch.add(x, y)
            return (a, torch.transpose(a, 0, 1))

    gm = torch.fx.symbolic_trace(M())
    ours, report = sdk_typecheck(gm)
    assert report["outcome"] == "ran", report
    TorchChecker({}, gm).type_check()
    nodes = list(gm.graph.nodes)
    assert nodes[-1].type == (nodes[2].type, nodes[3].type)
    with pytest.raises(TypeError, match="unhashable type: 'TensorType'"):
        gm.recompile()
    back = fx_sdk.to_torch_fx(ours)
    assert str(back.graph) == str(gm.graph)
    assert [repr(n.type) for n in back.graph.nodes][:-1] == \
        [repr(n.type) for n in nodes][:-1]
    assert list(back.graph.nodes)[-1].type is None
    x = torch.randn(1, 2, 3)
    for got, want in zip(back(x, x), M()(x, x)):
        torch.testing.assert_close(got, want)


class RefinedBlock(torch.nn.Module):
    """Every refinement rule: Conv2d, MaxPool2d, BatchNorm2d, ReLU, add
    with broadcasting, Linear, AdaptiveAvgPool2d, flatten."""

    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 6, 5)
        self.pool = torch.nn.MaxPool2d(2, 2)
        self.bn = torch.nn.BatchNorm2d(6)
        self.relu = torch.nn.ReLU()
        self.fc = torch.nn.Linear(5, 120)
        self.avg = torch.nn.AdaptiveAvgPool2d((6, 7))

    def forward(self, x: TensorType((Dyn, 3, Dyn, Dyn)),
                y: TensorType((Dyn, 6, 1, 1))):
        out = self.relu(self.bn(self.pool(self.conv(x))))
        out = self.avg(self.fc(out + y))
        return torch.flatten(out, 2)


class BroadcastAdd(torch.nn.Module):
    def forward(self, x: TensorType((1, 2, 3, Dyn)), y: TensorType((2, 3, 4))):
        return torch.add(x, y)


class FlattenNegative(torch.nn.Module):
    def forward(self, x: TensorType((Dyn, 2, Dyn, 4))):
        return torch.flatten(torch.flatten(x, -2), 0, 1)


@pytest.mark.parametrize("cls", [RefinedBlock, BroadcastAdd, FlattenNegative])
@pytest.mark.parametrize("rounds", [1, 2])
def test_unify_refinements(cls, rounds):
    """unify_refinements{rounds=N} after gradual_typecheck against torch's
    infer_symbolic_types_single_pass run N times on the type-checked graph:
    graph text (TensorType[(~3, 6, Dyn)] where torch prints it) and types;
    the code spells a variable Dyn (torch 1.13 cannot generate code for
    one: AttributeError)."""
    gm = torch.fx.symbolic_trace(cls())
    back, report = fx_sdk.run_pipeline(gm,
                                       f"{TYPECHECK},{refinements(rounds)}")
    assert [r["outcome"] for r in report] == ["ran", "ran"], report
    assert report[1]["changed"]  # a type's graph text alone counts
    TorchChecker({}, gm).type_check()
    for _ in range(rounds):
        torch_refine_round(gm)
    assert str(back.graph) == str(gm.graph)
    assert [repr(n.type) for n in back.graph.nodes] == \
        [repr(n.type) for n in gm.graph.nodes]
    assert "~" in str(back.graph)
    assert "torch.fx.tensor_type._DynType" in back.code
    with pytest.raises(AttributeError, match="__name__"):
        gm.recompile()


@pytest.mark.parametrize("rounds", [1, 2])
def test_unify_refinements_resnet18(rounds):
    """resnet18 with a Dyn batch: the batch variables (one round leaves
    several, which the second unifies further) are torch's. Its strides are
    all symmetric, so the passes' defaults give torch's types too."""
    gm = torch.fx.symbolic_trace(torchvision.models.resnet18())
    for n in gm.graph.nodes:
        if n.op == "placeholder":
            n.type = TensorType((Dyn, 3, 224, 224))
    gm.recompile()
    back, report = fx_sdk.run_pipeline(
        gm, f"gradual_typecheck,unify_refinements{{rounds={rounds}}}")
    TorchChecker({}, gm).type_check()
    for _ in range(rounds):
        torch_refine_round(gm)
    assert str(back.graph) == str(gm.graph)
    assert [repr(n.type) for n in back.graph.nodes] == \
        [repr(n.type) for n in gm.graph.nodes]
    batches = {repr(n.type.__args__[0]) for n in back.graph.nodes
               if isinstance(n.type, TensorType)}
    assert all(b.startswith("~") for b in batches)
    assert len(batches) < 20


class SymbolicConvs(torch.nn.Module):
    """symbolic_relations' Conv2d rule on each kind of size: an int, a symbol with an even and an
    odd offset, stride 1 (floor alone, and floor plus a constant), and the
    symbols of several inputs and of an add, named apart from the ints in
    the code (~3 is `_5` where 3 and 4 came first)."""

    def __init__(self):
        super().__init__()
        self.conv1 = torch.nn.Conv2d(3, 4, 3, stride=2, padding=1)
        self.conv2 = torch.nn.Conv2d(4, 4, 3, stride=1, padding=1)
        self.conv3 = torch.nn.Conv2d(4, 4, 5, stride=3, dilation=2)
        self.conv4 = torch.nn.Conv2d(4, 4, (2, 4), stride=(2, 1),
                                     padding=(3, 0))
        self.relu = torch.nn.ReLU()

    def forward(self, x: TensorType((1, 3, Dyn, 29)),
                y: TensorType((Dyn, 4, Dyn, Dyn))):
        a = self.relu(self.conv2(self.relu(self.conv1(x))))
        b = self.conv4(self.relu(self.conv3(a)))
        return b + y


class ConvAfterConv(torch.nn.Module):
    """A Conv2d reading another's expression: torch's TypeError, which
    names the expression's class (an Add, or a bare floor at stride 1)."""

    def __init__(self, stride):
        super().__init__()
        self.conv1 = torch.nn.Conv2d(3, 4, 3, stride=stride, padding=1)
        self.conv2 = torch.nn.Conv2d(4, 4, 3, padding=1)

    def forward(self, x: TensorType((1, 3, Dyn, Dyn))):
        return self.conv2(self.conv1(x))


class BroadcastNames(torch.nn.Module):
    """A broadcast add whose operand types (kept in its meta, sizes named
    `_N` there) meet code globals named apart from their sizes (`_1` is the
    symbol ~1 in the code, `_2` the int 1)."""

    def forward(self, x: TensorType((Dyn, Dyn, 1, 2)),
                y: TensorType((2,))):
        return x + y


@pytest.mark.parametrize("cls", [SymbolicConvs, RefinedBlock, BroadcastAdd,
                                 FlattenNegative, BroadcastNames])
def test_infer_symbolic_types(cls):
    """gradual_typecheck, then unify_refinements{rounds=2,
    symbolic_relations=true} (both as torch 1.13 runs them:
    SymbolicConvs' conv4 has the stride (2, 1)) against torch's
    GraphTypeChecker and infer_symbolic_types on the same graph: graph text, types (sympy
    symbols and floor expressions, made back from their parts) and the
    code, whose globals torch names after each object."""
    gm = torch.fx.symbolic_trace(cls())
    back, report = fx_sdk.run_pipeline(gm, f"{TYPECHECK},{SYMBOLIC}")
    assert [r["outcome"] for r in report] == ["ran", "ran"], report
    TorchChecker({}, gm).type_check()
    ur.infer_symbolic_types(gm)
    gm.recompile()
    same_refined(back, gm)
    if cls is SymbolicConvs:
        assert "floor(" in str(back.graph) and "floor_" in back.code


@pytest.mark.parametrize("stride", [2, 1])
def test_infer_symbolic_types_conv_after_conv_refused(stride):
    gm = torch.fx.symbolic_trace(ConvAfterConv(stride))
    with pytest.raises(TypeError) as theirs:
        TorchChecker({}, gm).type_check()
        ur.infer_symbolic_types(gm)
    assert ("Add" if stride == 2 else "Received floor") in str(theirs.value)
    gm = torch.fx.symbolic_trace(ConvAfterConv(stride))
    with pytest.raises(RuntimeError) as ours:
        fx_sdk.run_pipeline(gm, f"{TYPECHECK},{SYMBOLIC}")
    assert "unify_refinements: node 'conv2': TypeError: " + \
        str(theirs.value) in str(ours.value)


def test_unify_refinements_conflict_refused():
    """Two different sizes made equal (a ReLU annotated apart from its
    input): torch's unify fails (NotImplementedError); ours names the pass,
    the node and the constraint, and the graph is rolled back."""

    class M(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.relu = torch.nn.ReLU()

        def forward(self, x: TensorType((1, 2))):
            return self.relu(x)

    gm = torch.fx.symbolic_trace(M())
    for n in gm.graph.nodes:
        if n.name == "relu":
            n.type = TensorType((3, 2))
    gm.recompile()
    before = str(fx_sdk.to_torch_fx(fx_sdk.from_torch_fx(gm)).graph)
    ours, report = sdk_typecheck(gm, "unify_refinements")
    assert report["outcome"] == "rolled_back", report
    assert "unify_refinements: node 'relu': NotImplementedError: Could not " \
        "find signature for _unify: <int, int, dict>" in report["error"]
    assert "constraint 1 = 3" in report["error"]
    assert str(fx_sdk.to_torch_fx(ours).graph) == before
    with pytest.raises(NotImplementedError,
                       match="Could not find signature for _unify"):
        ur.infer_symbolic_types_single_pass(gm)


def test_unify_refinements_bad_option():
    class M(torch.nn.Module):
        def forward(self, x: TensorType((1, 2))):
            return torch.add(x, x)

    gm = torch.fx.symbolic_trace(M())
    with pytest.raises(ValueError, match="rounds"):
        fx_sdk.run_pipeline(gm, "unify_refinements{rounds=zero}")
    with pytest.raises(RuntimeError,
                       match="unify_refinements: option rounds must be 1 or "
                             "more, not 0"):
        fx_sdk.run_pipeline(gm, "unify_refinements{rounds=0}")


class NegativeBroadcast(torch.nn.Module):
    def forward(self, x: TensorType((-1, 3)), y: TensorType((1, 3))):
        return torch.add(x, y)


class NegativeFlatten(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.relu = torch.nn.ReLU()

    def forward(self, x: TensorType((2, -1, 4))):
        return torch.flatten(self.relu(x), 1)


class NegativeTranspose(torch.nn.Module):
    def forward(self, x: TensorType((1, 2, -1))):
        return torch.transpose(x, 0, 2)


NEGATIVE_SIZES = [NegativeBroadcast, NegativeFlatten, NegativeTranspose]


@pytest.mark.parametrize("cls", NEGATIVE_SIZES)
def test_negative_sizes(cls):
    """Annotations with negative sizes: torch.fx names a size's global
    through its namespace, so -1 is `_1` and a 1 met after it `_2`; each
    pass reads a size from the graph text, never from its global's name,
    and names the globals of the types it writes as torch's code does
    (graph text, types, code and its globals against torch's)."""
    gm = torch.fx.symbolic_trace(cls())
    gm.recompile()
    back, report = fx_sdk.run_pipeline(gm, TYPECHECK)
    assert [r["outcome"] for r in report] == ["ran"], report
    TorchChecker({}, gm).type_check()
    gm.recompile()
    same_refined(back, gm)
    assert any(a < 0 for n in back.graph.nodes
               if isinstance(n.type, TensorType) for a in n.type.__args__)


@pytest.mark.parametrize("cls", NEGATIVE_SIZES)
def test_negative_sizes_refined(cls):
    """unify_refinements after gradual_typecheck on the same graphs, against
    torch's refinement round (sizes only: no variable, so torch can
    generate the code too)."""
    gm = torch.fx.symbolic_trace(cls())
    gm.recompile()
    back, report = fx_sdk.run_pipeline(gm, f"{TYPECHECK},{refinements(1)}")
    assert [r["outcome"] for r in report] == ["ran", "ran"], report
    TorchChecker({}, gm).type_check()
    torch_refine_round(gm)
    gm.recompile()
    same_refined(back, gm)


# ------------------------------------------- asymmetric windows (stride[0])

# Conv2d and MaxPool2d windows whose two dimensions differ (stride, padding,
# dilation, kernel), on an input shape; torch 1.13's division of both
# spatial sizes by stride[0] gives each a wrong width.
ASYMMETRIC_WINDOWS = {
    "conv_stride_2_1": (lambda: torch.nn.Conv2d(3, 4, 3, stride=(2, 1)),
                        (2, 3, 17, 23)),
    "conv_all_pairs": (lambda: torch.nn.Conv2d(3, 4, (3, 5), stride=(1, 3),
                                               padding=(2, 1),
                                               dilation=(1, 2)),
                       (1, 3, 16, 21)),
    "conv_stride_3_2": (lambda: torch.nn.Conv2d(3, 5, (2, 4), stride=(3, 2),
                                                padding=(0, 3),
                                                dilation=(2, 1)),
                        (2, 3, 20, 19)),
    "pool_stride_2_1": (lambda: torch.nn.MaxPool2d((3, 2), stride=(2, 1)),
                        (2, 3, 15, 12)),
    "pool_all_pairs": (lambda: torch.nn.MaxPool2d(3, stride=(1, 2),
                                                  padding=1,
                                                  dilation=(2, 1)),
                       (1, 3, 14, 17)),
    "pool_stride_3_2": (lambda: torch.nn.MaxPool2d((2, 3), stride=(3, 2),
                                                   padding=(1, 1)),
                        (2, 4, 19, 22)),
    "pool_default_stride": (lambda: torch.nn.MaxPool2d((4, 2)),
                            (1, 3, 17, 11)),
    "pool_rank_3": (lambda: torch.nn.MaxPool2d((2, 3), stride=(1, 3)),
                    (3, 10, 13)),
}


class Layers(torch.nn.Module):
    """The layers called in order, as attributes named apart from the
    globals of the types' sizes and symbols (Sequential's `0` makes a node
    `_0`, which torch's code generation renames where a global is `_0`)."""

    def __init__(self, *layers):
        super().__init__()
        self.count = len(layers)
        for i, layer in enumerate(layers):
            setattr(self, f"layer{i}", layer)

    def forward(self, x):
        for i in range(self.count):
            x = getattr(self, f"layer{i}")(x)
        return x


def traced(layers, shape):
    """Layers(*layers) traced, its input annotated TensorType(shape)."""
    gm = torch.fx.symbolic_trace(Layers(*layers))
    for n in gm.graph.nodes:
        if n.op == "placeholder":
            n.type = TensorType(shape)
    gm.recompile()
    return gm


def windowed(name):
    """The module of ASYMMETRIC_WINDOWS[name] traced, its input annotated
    with the case's shape; and the module."""
    make, shape = ASYMMETRIC_WINDOWS[name]
    module = make()
    return traced([module], shape), module


def output_type(gm):
    """The type of the node gm returns."""
    return list(gm.graph.nodes)[-1].args[0].type


@pytest.mark.parametrize("name", sorted(ASYMMETRIC_WINDOWS))
def test_default_gives_the_module_output_shape(name):
    """By default each spatial size is divided by its own stride: the type
    is the shape PyTorch's module outputs on a tensor of the annotated
    input shape."""
    gm, module = windowed(name)
    back, report = fx_sdk.run_pipeline(gm, "gradual_typecheck")
    assert report[0]["outcome"] == "ran", report
    shape = ASYMMETRIC_WINDOWS[name][1]
    with torch.no_grad():
        want = tuple(module(torch.zeros(shape)).shape)
    assert output_type(back) == TensorType(want)


@pytest.mark.parametrize("name", sorted(ASYMMETRIC_WINDOWS))
def test_first_stride_for_both_is_torchs(name):
    """first_stride_for_both=true divides both spatial sizes by stride[0]:
    the types, graph text and code are torch 1.13's GraphTypeChecker's,
    which differ from the default's (and from the module's output) in the
    width."""
    gm, _ = windowed(name)
    ours = fx_sdk.to_torch_fx(check(gm))  # torch's, compared in check()
    default, _ = fx_sdk.run_pipeline(windowed(name)[0], "gradual_typecheck")
    theirs, fixed = output_type(ours), output_type(default)
    assert theirs == output_type(gm)
    assert theirs.__args__[:-1] == fixed.__args__[:-1]
    assert theirs.__args__[-1] != fixed.__args__[-1]


# Conv2d's with asymmetric windows, on an input type with Dyn spatial sizes
# (symbols after the symbolic step): both, or the width beside an int
# height; a ReLU after the first.
SYMBOLIC_CONVS = {
    "dyn_height_and_width": (
        lambda: torch.nn.Conv2d(3, 4, (3, 2), stride=(2, 3), padding=(1, 0)),
        (1, 3, Dyn, Dyn), True),
    "int_height": (
        lambda: torch.nn.Conv2d(3, 4, (2, 5), stride=(1, 4), padding=(0, 2),
                                dilation=(2, 1)),
        (Dyn, 3, 13, Dyn), False),
}

SYMBOLIC_DEFAULT = "gradual_typecheck," \
    "unify_refinements{rounds=2,symbolic_relations=true}"


def symbolic_convs(name):
    """SYMBOLIC_CONVS[name] traced, its input annotated; and the Conv2d."""
    make, shape, relu = SYMBOLIC_CONVS[name]
    conv = make()
    return traced([conv, torch.nn.ReLU()] if relu else [conv], shape), conv


def conv_sizes(gm):
    """The sizes of the Conv2d's input and output types."""
    conv = next(n for n in gm.graph.nodes if n.op == "call_module")
    return conv.args[0].type.__args__, conv.type.__args__


@pytest.mark.parametrize("name", sorted(SYMBOLIC_CONVS))
def test_symbolic_first_stride_for_both_is_torchs(name):
    """gradual_typecheck and unify_refinements{rounds=2,
    symbolic_relations=true} with first_stride_for_both=true against torch
    1.13's GraphTypeChecker and infer_symbolic_types on the same graph:
    graph text, types (sympy expressions dividing the width by stride[0]),
    their classes and the code. The default's width differs."""
    gm, _ = symbolic_convs(name)
    back, report = fx_sdk.run_pipeline(gm, f"{TYPECHECK},{SYMBOLIC}")
    assert [r["outcome"] for r in report] == ["ran", "ran"], report
    TorchChecker({}, gm).type_check()
    ur.infer_symbolic_types(gm)
    gm.recompile()
    same_refined(back, gm)
    default, report = fx_sdk.run_pipeline(symbolic_convs(name)[0],
                                          SYMBOLIC_DEFAULT)
    assert [r["outcome"] for r in report] == ["ran", "ran"], report
    fixed, theirs = conv_sizes(default)[1], conv_sizes(back)[1]
    assert fixed[:3] == theirs[:3] and fixed[3] != theirs[3]


def real_size(conv, index, d_in):
    """The size `index` (0: height, 1: width) of conv's output on an input
    whose size `index` is d_in (and the other large enough): PyTorch's."""
    shape = [1, conv.in_channels, 40, 40]
    shape[2 + index] = d_in
    with torch.no_grad():
        return conv(torch.zeros(shape)).shape[2 + index]


@pytest.mark.parametrize("name", sorted(SYMBOLIC_CONVS))
def test_symbolic_default_gives_the_module_output_sizes(name):
    """By default symbolic_relations divides each spatial size by its own
    stride: an expression over an input symbol is sympy's (d + 2 padding -
    dilation (kernel - 1) - 1) // stride + 1 with the dimension's own
    window, printed as sympy prints it, and, for every input size tried,
    the size PyTorch's Conv2d outputs; an int input size gives the output's
    int."""
    import sympy
    gm, conv = symbolic_convs(name)
    back, report = fx_sdk.run_pipeline(gm, SYMBOLIC_DEFAULT)
    assert [r["outcome"] for r in report] == ["ran", "ran"], report
    inputs, outputs = conv_sizes(back)
    for index in (0, 1):
        d_in, got = inputs[2 + index], outputs[2 + index]
        if isinstance(d_in, int):
            assert got == real_size(conv, index, d_in)
            continue
        assert isinstance(d_in, sympy.Symbol)
        want = (d_in + 2 * conv.padding[index]
                - conv.dilation[index] * (conv.kernel_size[index] - 1)
                - 1) // conv.stride[index] + 1
        assert got == want and str(got) == str(want)
        for size in range(9, 30):
            assert got.subs(d_in, size) == real_size(conv, index, size)
    assert isinstance(inputs[3], sympy.Symbol)
