"""get_attr targets that are no tensors (issue 32): a ParameterList that
const folding made, a submodule handed to a wrapped function, an instance of
a torch.fx.ProxyableClassMeta class interned as a constant, a ScriptModule's
`_c`, plain Python values. fx_sdk holds each as the Python object it is: the
SDK's graph prints and generates torch.fx's text and code, the calls taking
the object run in Python, to_torch_fx sets the very same object back, and a
file refuses it naming the attribute.

Every expected value comes from torch.fx run here: gm(*inputs),
str(gm.graph), gm.code. Run by fx_sdk_test.sh under /usr/bin/python3.
"""

import operator
import re

import pytest
import torch
import torch.fx
from torch.fx.experimental import const_fold
from torch.fx.experimental.rewriter import RewritingTracer

import fx_sdk


def graph_text(gm):
    """print(gm.graph) as the SDK prints it (torch 1.13's [#users=N] is the
    current docs' [num_users=N])."""
    return re.sub(r"\[#users=", "[num_users=", str(gm.graph)).rstrip()


def get_attr_targets(gm):
    return [n.target for n in gm.graph.nodes if n.op == "get_attr"]


def assert_same_values(got, want):
    """Tensors close; containers item by item; objects of a class without
    __eq__ attribute by attribute (two instances are never ==)."""
    if isinstance(want, torch.Tensor):
        torch.testing.assert_close(got, want)
    elif isinstance(want, (list, tuple)):
        assert type(got) is type(want) and len(got) == len(want)
        for a, b in zip(got, want):
            assert_same_values(a, b)
    elif type(want).__eq__ is object.__eq__ and hasattr(want, "__dict__"):
        assert type(got) is type(want)
        assert vars(got).keys() == vars(want).keys()
        for key in vars(want):
            assert_same_values(vars(got)[key], vars(want)[key])
    else:
        assert got == want


def assert_same_program(gm, inputs):
    """The SDK's GraphModule and its to_torch_fx print, generate code and
    compute as gm; returns the latter (its get_attr objects are gm's)."""
    sdk_gm = fx_sdk.from_torch_fx(gm)
    assert sdk_gm.graph_text.rstrip() == graph_text(gm)
    assert sdk_gm.code == gm.code
    want = gm(*inputs)
    assert_same_values(sdk_gm(*inputs), want)
    back = fx_sdk.to_torch_fx(sdk_gm)
    assert str(back.graph) == str(gm.graph)
    assert back.code == gm.code
    for target in get_attr_targets(gm):
        assert fetch(back, target) is fetch(gm, target), target
    assert_same_values(back(*inputs), want)
    return back


def fetch(module, target):
    value = module
    for atom in target.split("."):
        value = getattr(value, atom)
    return value


# ------------------------------------------------ const folding's attributes

class TwoConstantBranches(torch.nn.Module):
    """Two subexpressions of parameters only: const folding computes both
    once and reads them back from one ParameterList."""

    def __init__(self):
        super().__init__()
        self.square = torch.nn.Parameter(torch.randn(3, 3))
        self.offsets = torch.nn.Parameter(torch.randn(3))
        self.head = torch.nn.Linear(3, 2)

    def forward(self, x, y):
        symmetric = self.square + self.square.transpose(0, 1)
        weights = torch.softmax(self.offsets, dim=0)
        return torch.tanh(self.head(x @ symmetric + (y - weights)))


@pytest.fixture
def folded():
    torch.manual_seed(0)
    gm = const_fold.split_const_subgraphs(TwoConstantBranches())
    inputs = (torch.randn(4, 3), torch.randn(4, 3))
    return gm, inputs


def test_folded_attributes_are_one_object_read_by_getitem(folded):
    gm, inputs = folded
    name = gm.fx_const_folded_attrs_name
    assert get_attr_targets(gm) == [name]
    # Before its first call the list is empty: the SDK takes the graph.
    sdk_gm = fx_sdk.from_torch_fx(gm)
    assert sdk_gm.graph_text.rstrip() == graph_text(gm)
    assert sdk_gm.code == gm.code
    want = gm(*inputs)  # folds: the attribute is a new ParameterList
    assert isinstance(fetch(gm, name), torch.nn.ParameterList)
    assert len(fetch(gm, name)) == 2
    back = assert_same_program(gm, inputs)
    torch.testing.assert_close(back(*inputs), want)


def test_folded_attributes_through_a_pipeline_and_compile(folded):
    gm, inputs = folded
    want = gm(*inputs)
    out, report = fx_sdk.run_pipeline(gm, "dce,cse")
    assert [r["outcome"] for r in report] == ["ran", "ran"]
    name = gm.fx_const_folded_attrs_name
    assert fetch(out, name) is fetch(gm, name)
    torch.testing.assert_close(out(*inputs), want)
    compiled = fx_sdk.compile(gm, inputs)
    with torch.no_grad():
        torch.testing.assert_close(compiled(*inputs), want)


def test_shape_prop_reads_through_the_folded_attributes(folded):
    from torch.fx.passes.shape_prop import ShapeProp
    gm, inputs = folded
    gm(*inputs)
    out, report = fx_sdk.run_pipeline(gm, "shape_prop", example_inputs=inputs)
    assert [r["outcome"] for r in report] == ["ran"]
    expected = torch.fx.GraphModule(gm, gm.graph)
    ShapeProp(expected).propagate(*inputs)
    shapes = 0
    for mine, theirs in zip(out.graph.nodes, expected.graph.nodes):
        assert ("tensor_meta" in mine.meta) == ("tensor_meta" in theirs.meta)
        if "tensor_meta" in theirs.meta:
            assert mine.meta["tensor_meta"].shape == \
                theirs.meta["tensor_meta"].shape, mine.name
            shapes += 1
    assert shapes >= 6  # the getitems of the list among them


# ------------------------------------------------ a submodule as an argument

@torch.fx.wrap
def through_module(x, module):
    """A wrapped function handed a submodule: tracing records get_attr."""
    return module(x) * 2 + 1


class HandsOverItsNorm(torch.nn.Module):
    def __init__(self, called_too=False):
        super().__init__()
        self.proj = torch.nn.Linear(4, 4)
        self.norm = torch.nn.LayerNorm(4)
        self.called_too = called_too

    def forward(self, x: torch.Tensor):
        h = self.proj(x)
        if self.called_too:
            h = self.norm(h)
        return through_module(h, self.norm)


class HandsOverBatchNorm(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.batchnorm = torch.nn.BatchNorm1d(3, affine=False)

    def forward(self, x: torch.Tensor):
        return through_module(x, self.batchnorm)


def rewriting_trace(model):
    tracer = RewritingTracer()
    graph = tracer.trace(model)
    return torch.fx.GraphModule(tracer.root, graph, "gm")


@pytest.mark.parametrize("called_too", [False, True])
def test_a_submodule_passed_to_a_wrapped_function(called_too):
    torch.manual_seed(0)
    gm = torch.fx.symbolic_trace(HandsOverItsNorm(called_too).eval())
    assert get_attr_targets(gm) == ["norm"]
    back = assert_same_program(gm, (torch.randn(2, 4),))
    assert back.get_submodule("norm") is gm.get_submodule("norm")


def test_a_batchnorm_passed_under_the_rewriting_tracer():
    torch.manual_seed(0)
    gm = rewriting_trace(HandsOverBatchNorm())  # training mode: batch stats
    assert get_attr_targets(gm) == ["batchnorm"]
    assert_same_program(gm, (torch.rand(5, 3),))


def test_a_submodule_argument_through_compile():
    torch.manual_seed(0)
    gm = torch.fx.symbolic_trace(HandsOverItsNorm().eval())
    x = torch.randn(3, 4)
    compiled = fx_sdk.compile(gm, [x])
    with torch.no_grad():
        torch.testing.assert_close(compiled(x), gm(x))


# ------------------------------------------------ ProxyableClassMeta constants

class Span(metaclass=torch.fx.ProxyableClassMeta):
    """Built from constants inside forward: tracing interns the instance as
    the attribute _Span_constant_0; its methods share names with Tensor's."""

    def __init__(self, low, high):
        self.low, self.high = low, high

    def add(self, other):
        return Span(self.low - other.low, self.high + other.high)

    def mul(self, k):
        return Span(self.low * k, self.high * k)


def widened(s: Span, x: torch.Tensor):
    margin = Span(torch.full((3,), 0.25), torch.ones(3))
    return s.add(margin).mul(2), x.add(1)


def test_a_proxyable_class_constant_is_held_as_it_is():
    gm = torch.fx.symbolic_trace(widened)
    (target,) = get_attr_targets(gm)
    assert target == "_Span_constant_0"
    s = Span(torch.randn(3), torch.randn(3))
    back = assert_same_program(gm, (s, torch.randn(3)))
    assert type(back._Span_constant_0) is Span


def test_a_local_proxyable_class_is_named_as_torch_fx_names_it():
    class Pair(metaclass=torch.fx.ProxyableClassMeta):
        def __init__(self, left, right):
            self.left, self.right = left, right

        def add(self, other):
            return Pair(self.left + other.left, self.right * other.right)

    def pair_with(x: Pair, y: torch.Tensor):
        return x.add(Pair(y, y + 1))

    gm = torch.fx.symbolic_trace(pair_with)
    # One object, one global, named after the annotation's __qualname__.
    assert "_locals_Pair(y, add)" in gm.code
    assert_same_program(gm, (Pair(torch.randn(2), torch.randn(2)),
                             torch.randn(2)))


def test_a_proxyable_class_built_from_inputs_is_returned():
    class Maybe(metaclass=torch.fx.ProxyableClassMeta):
        def __init__(self, t):
            self.empty = bool(t.sum() == 0)
            self.t = torch.tensor([]) if self.empty else t

    def wrap_sum(x: torch.Tensor, y: torch.Tensor):
        return Maybe(x + y)

    gm = torch.fx.symbolic_trace(wrap_sum)
    assert_same_program(gm, (torch.randn(2, 3), torch.randn(2, 3)))


# ------------------------------------------------ a ScriptModule's _c

class Doubler(torch.nn.Module):
    def forward(self, x):
        return x * 2 - 1


class HoldsAScriptModule(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.inner = torch.jit.script(Doubler())

    def forward(self, x):
        return torch.relu(self.inner(x))


def test_a_script_module_is_called_through_its_c_attribute():
    gm = torch.fx.symbolic_trace(HoldsAScriptModule())
    assert get_attr_targets(gm) == ["inner._c"]
    assert_same_program(gm, (torch.randn(3, 4),))


# ------------------------------------------------ plain Python values

def test_plain_python_values_and_the_output_keep_their_identity():
    holder = torch.nn.Module()
    holder.pair = (torch.randn(3), torch.randn(3))
    holder.scale = 2.5
    holder.tags = {"name": "holder"}
    graph = torch.fx.Graph()
    x = graph.placeholder("x")
    pair = graph.get_attr("pair")
    scale = graph.get_attr("scale")
    tags = graph.get_attr("tags")
    second = graph.call_function(operator.getitem, (pair, 1))
    scaled = graph.call_function(operator.mul, (x, scale))
    total = graph.call_function(torch.add, (scaled, second))
    graph.output((total, tags))
    gm = torch.fx.GraphModule(holder, graph)
    x = torch.randn(3)
    back = assert_same_program(gm, (x,))
    assert fx_sdk.from_torch_fx(gm)(x)[1] is gm.tags
    assert back(x)[1] is gm.tags


# ------------------------------------------------ files

def test_writing_an_object_attribute_to_a_file_is_refused_naming_it():
    torch.manual_seed(0)
    gm = torch.fx.symbolic_trace(HandsOverItsNorm().eval())
    sdk_gm = fx_sdk.from_torch_fx(gm)
    with pytest.raises(ValueError) as e:
        fx_sdk._C._to_bundle(sdk_gm)
    message = str(e.value)
    assert "attribute 'norm'" in message
    assert "torch.nn.modules.normalization.LayerNorm" in message
    assert "only in this process" in message


def test_the_exporter_refuses_an_object_attribute_naming_it():
    from fx_sdk import torchfx_export
    gm = torch.fx.symbolic_trace(HandsOverItsNorm().eval())
    with pytest.raises(ValueError) as e:
        torchfx_export.graph_document(gm)
    message = str(e.value)
    assert "(get_attr) reads 'norm'" in message
    assert "LayerNorm object, not a tensor" in message


def test_a_missing_attribute_is_still_named():
    holder = torch.nn.Module()
    holder.gone = 3
    graph = torch.fx.Graph()
    graph.output(graph.get_attr("gone"))
    gm = torch.fx.GraphModule(holder, graph)
    del gm.gone
    with pytest.raises(ValueError, match="'gone'"):
        fx_sdk.from_torch_fx(gm)


# ------------------------------------------------ objects as inputs

class Record:
    """A user's class given as an input no annotation names."""

    def __init__(self, a, b):
        self.a, self.b = a, b


def reads_fields():
    graph = torch.fx.Graph()
    x = graph.placeholder("x")
    a = graph.call_function(getattr, (x, "a"))
    b = graph.call_function(getattr, (x, "b"))
    graph.output(graph.call_function(operator.add, (a, b)))
    return torch.fx.GraphModule(torch.nn.Module(), graph)


@pytest.mark.parametrize("b", [torch.ones(3), 3])
def test_fields_of_an_unannotated_object_input_are_read_in_python(b):
    gm = reads_fields()
    record = Record(torch.randn(3), b)
    assert_same_program(gm, (record,))
    # Held as the object it is: TorchScript never compiled the class.
    assert torch.jit._state._get_script_class(Record) is None
