"""Python callables in process (issue 32, item 3): call_function targets
the SDK has no kernel for (torch.fx.wrap'ed functions, module-level
helpers, lambdas, local functions) and submodules of classes the SDK does
not know (user leaf modules, torchvision.ops under create_feature_extractor)
run by calling back into Python, keep their identity through pipelines and
shape propagation, and come back from to_torch_fx as the very same objects.
Through files they stay a clear error naming the target.

Every expected value comes from torch.fx run here: gm(*inputs),
str(gm.graph), gm.code. Run by fx_sdk_test.sh under /usr/bin/python3.
"""

import re

import pytest
import torch
import torch.fx

import fx_sdk
from fx_sdk import torchfx_export


# ------------------------------------------------------------ the programs

@torch.fx.wrap
def scaled_sum(x, y, scale=2.0):
    """A wrapped function: traced as one call_function node."""
    return (x + y) * scale


def _clamp_helper(x, low):
    """A module-level helper, wrapped by name below."""
    return torch.clamp(x, min=low) - low


torch.fx.wrap("_clamp_helper")


def raising_helper(x):
    raise ValueError(f"refusing a tensor of shape {tuple(x.shape)}")


torch.fx.wrap("raising_helper")


def pair_helper(x):
    """Returns a tuple (a container the runtime must hold)."""
    return x.sum(dim=0), [x.amax(), None]


torch.fx.wrap("pair_helper")


class Box:
    """An object the runtime has no form for: held as it is."""

    def __init__(self, value):
        self.value = value


def box(x):
    return Box(x * 2)


def unbox(b):
    return b.value + 1


torch.fx.wrap("box")
torch.fx.wrap("unbox")


class Boxes(torch.nn.Module):
    def forward(self, x):
        b = box(x)
        return unbox(b), b


class Wrapped(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = torch.nn.Linear(4, 4)

    def forward(self, x, y):
        a = scaled_sum(self.linear(x), y, scale=3.0)
        b = _clamp_helper(a, 0.25)
        pair = pair_helper(b)
        return torch.relu(b) + pair[0] + pair[1][0]


class Raising(torch.nn.Module):
    def forward(self, x):
        return raising_helper(x + 1)


class Leaf(torch.nn.Module):
    """A user module with parameters, kept as a leaf by LeafTracer."""

    def __init__(self):
        super().__init__()
        self.proj = torch.nn.Linear(4, 3)
        self.gate = torch.nn.Parameter(torch.randn(3))

    def forward(self, x, bias=None):
        y = self.proj(x) * torch.sigmoid(self.gate)
        if y.sum() > 0:  # control flow: only a leaf can hold it
            y = y + 1
        return y if bias is None else y + bias


class WithLeaf(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.leaf = Leaf()
        self.head = torch.nn.Linear(3, 2)

    def forward(self, x):
        return self.head(torch.relu(self.leaf(x, bias=torch.ones(3))))


class LeafTracer(torch.fx.Tracer):
    def is_leaf_module(self, m, qualname):
        return isinstance(m, Leaf) or super().is_leaf_module(m, qualname)


def trace_with_leaf(model):
    graph = LeafTracer().trace(model)
    return torch.fx.GraphModule(model, graph)


def lambda_graph(fn):
    """A GraphModule calling `fn` (any callable), built with the Graph API."""
    graph = torch.fx.Graph()
    x = graph.placeholder("x")
    y = graph.call_function(fn, (x,))
    graph.output(graph.call_function(torch.neg, (y,)))
    return torch.fx.GraphModule(torch.nn.Module(), graph)


def make_scaler(k):
    def scale(x):  # every make_scaler's function is named "...scale"
        return x * k
    return scale


def graph_text(gm):
    """print(gm.graph) as the SDK prints it: torch 1.13 prints [#users=N],
    the SDK the current docs' [num_users=N]."""
    return re.sub(r"\[#users=", "[num_users=", str(gm.graph)).rstrip()


def targets(gm, op="call_function"):
    return [n.target for n in gm.graph.nodes if n.op == op]


def assert_same_program(sdk_gm, gm, inputs):
    """The SDK's GraphModule prints, generates code and computes as gm."""
    assert sdk_gm.graph_text.rstrip() == graph_text(gm)
    assert sdk_gm.code == gm.code
    torch.testing.assert_close(sdk_gm(*inputs), gm(*inputs))


def assert_round_trip(gm, inputs):
    """to_torch_fx(from_torch_fx(gm)) is gm's program with gm's objects."""
    back = fx_sdk.to_torch_fx(fx_sdk.from_torch_fx(gm))
    assert str(back.graph) == str(gm.graph)
    assert back.code == gm.code
    for mine, theirs in zip(targets(back), targets(gm)):
        assert mine is theirs
    torch.testing.assert_close(back(*inputs), gm(*inputs))
    return back


# ------------------------------------------------------------ call_function

@pytest.fixture
def wrapped():
    torch.manual_seed(0)
    gm = torch.fx.symbolic_trace(Wrapped())
    return gm, (torch.randn(3, 4), torch.randn(3, 4))


def test_wrapped_functions_run_in_process(wrapped):
    gm, inputs = wrapped
    assert scaled_sum in targets(gm) and _clamp_helper in targets(gm)
    assert_same_program(fx_sdk.from_torch_fx(gm), gm, inputs)


def test_wrapped_functions_come_back_as_the_same_objects(wrapped):
    gm, inputs = wrapped
    back = assert_round_trip(gm, inputs)
    assert scaled_sum in targets(back) and pair_helper in targets(back)


def test_lambda_target_runs_and_comes_back():
    fn = lambda t: t * 2 + 1  # noqa: E731
    gm = lambda_graph(fn)
    x = torch.randn(5)
    assert_same_program(fx_sdk.from_torch_fx(gm), gm, (x,))
    back = assert_round_trip(gm, (x,))
    assert targets(back)[0] is fn


def test_same_name_in_two_graphs_each_calls_its_own():
    gm2, gm3 = lambda_graph(make_scaler(2.0)), lambda_graph(make_scaler(3.0))
    assert str(gm2.graph) == str(gm3.graph)  # the same name in both
    sdk2, sdk3 = fx_sdk.from_torch_fx(gm2), fx_sdk.from_torch_fx(gm3)
    x = torch.randn(4)
    torch.testing.assert_close(sdk2(x), gm2(x))
    torch.testing.assert_close(sdk3(x), gm3(x))
    assert targets(fx_sdk.to_torch_fx(sdk3))[0] is targets(gm3)[0]


def test_two_objects_of_one_name_in_one_graph_are_refused():
    graph = torch.fx.Graph()
    x = graph.placeholder("x")
    a = graph.call_function(make_scaler(2.0), (x,))
    b = graph.call_function(make_scaler(3.0), (a,))
    graph.output(b)
    gm = torch.fx.GraphModule(torch.nn.Module(), graph)
    with pytest.raises(ValueError, match="two different objects") as e:
        fx_sdk.from_torch_fx(gm)
    assert str(e.value).count("make_scaler.<locals>.scale") == 2


def test_other_python_objects_pass_between_callables_as_they_are():
    gm = torch.fx.symbolic_trace(Boxes())
    x = torch.randn(3)
    expected_value, expected_box = gm(x)
    value, held = fx_sdk.from_torch_fx(gm)(x)
    torch.testing.assert_close(value, expected_value)
    assert type(held) is Box
    torch.testing.assert_close(held.value, expected_box.value)


def test_python_exception_names_node_and_target():
    gm = torch.fx.symbolic_trace(Raising())
    with pytest.raises(ValueError) as expected:
        gm(torch.zeros(2, 3))
    sdk_gm = fx_sdk.from_torch_fx(gm)
    with pytest.raises(RuntimeError) as e:
        sdk_gm(torch.zeros(2, 3))
    node = next(n for n in gm.graph.nodes if n.target is raising_helper)
    message = str(e.value)
    assert f"'{node.name}'" in message
    assert torch.fx.node._get_qualified_name(raising_helper) in message
    assert f"ValueError: {expected.value}" in message


def test_graph_api_holds_python_functions():
    fn = lambda t: t - 1  # noqa: E731
    gm = lambda_graph(fn)
    sdk_gm = fx_sdk.from_torch_fx(gm)
    assert targets(sdk_gm)[0] is fn

    def extra(t):
        return t * 10
    for graph in (gm.graph, sdk_gm.graph):
        out = next(n for n in graph.nodes if n.op == "output")
        with graph.inserting_before(out):
            new = graph.call_function(extra, (out.args[0],))
        out.update_arg(0, new)
    gm.recompile()
    sdk_gm.recompile()
    assert_same_program(sdk_gm, gm, (torch.randn(3),))
    assert targets(fx_sdk.to_torch_fx(sdk_gm))[-1] is extra
    # A second lambda would print as the first: refused, naming it.
    other = lambda t: t  # noqa: E731
    with pytest.raises(ValueError, match="already stands for another"):
        sdk_gm.graph.call_function(other, (next(iter(sdk_gm.graph.nodes)),))


# ------------------------------------------------------------ call_module

@pytest.fixture
def with_leaf():
    torch.manual_seed(0)
    gm = trace_with_leaf(WithLeaf().eval())
    return gm, (torch.randn(2, 4),)


def test_user_leaf_module_runs_in_process(with_leaf):
    gm, inputs = with_leaf
    assert "leaf" in targets(gm, "call_module")
    assert_same_program(fx_sdk.from_torch_fx(gm), gm, inputs)


def test_user_leaf_module_comes_back_as_the_same_object(with_leaf):
    gm, inputs = with_leaf
    back = assert_round_trip(gm, inputs)
    assert back.get_submodule("leaf") is gm.get_submodule("leaf")
    # The known module crossed by config, its weights shared.
    assert back.head.weight.data_ptr() == gm.head.weight.data_ptr()


def test_leaf_module_training_mode_follows_the_sdk_module(with_leaf):
    gm, _ = with_leaf
    assert not gm.leaf.training
    sdk_gm = fx_sdk.from_torch_fx(gm)
    del sdk_gm
    assert not gm.leaf.training


# ------------------------------------------------------------ pipelines

def test_identity_kept_through_dce_and_cse(wrapped, with_leaf):
    for gm, inputs in (wrapped, with_leaf):
        out, report = fx_sdk.run_pipeline(gm, "dce,cse")
        assert [r["outcome"] for r in report] == ["ran", "ran"]
        assert str(out.graph) == str(gm.graph)
        for mine, theirs in zip(targets(out), targets(gm)):
            assert mine is theirs
        for path in targets(gm, "call_module"):
            if path == "leaf":
                assert out.get_submodule(path) is gm.get_submodule(path)
        torch.testing.assert_close(out(*inputs), gm(*inputs))


def test_shape_prop_runs_python_callables(with_leaf):
    from torch.fx.passes.shape_prop import ShapeProp
    gm, inputs = with_leaf
    out, _ = fx_sdk.run_pipeline(gm, "shape_prop", example_inputs=inputs)
    assert out.get_submodule("leaf") is gm.get_submodule("leaf")
    expected = torch.fx.GraphModule(gm, gm.graph)
    ShapeProp(expected).propagate(*inputs)
    for mine, theirs in zip(out.graph.nodes, expected.graph.nodes):
        if "tensor_meta" in theirs.meta:
            assert mine.meta["tensor_meta"].shape == \
                theirs.meta["tensor_meta"].shape, mine.name
            assert mine.meta["tensor_meta"].dtype == \
                theirs.meta["tensor_meta"].dtype, mine.name
            assert mine.meta["tensor_meta"].requires_grad == \
                theirs.meta["tensor_meta"].requires_grad, mine.name


def test_shape_prop_on_wrapped_functions_keeps_them(wrapped):
    gm, inputs = wrapped
    out, _ = fx_sdk.run_pipeline(gm, "shape_prop", example_inputs=inputs)
    for mine, theirs in zip(targets(out), targets(gm)):
        assert mine is theirs
    node = next(n for n in out.graph.nodes if n.target is scaled_sum)
    assert node.meta["tensor_meta"].shape == (3, 4)


# ------------------------------------------------------------ files

def test_writing_a_python_function_to_a_file_is_refused(wrapped):
    gm, _ = wrapped
    sdk_gm = fx_sdk.from_torch_fx(gm)
    with pytest.raises(ValueError) as e:
        fx_sdk._C._to_bundle(sdk_gm)
    name = torch.fx.node._get_qualified_name(scaled_sum)
    assert f"'{name}'" in str(e.value)
    assert "only in this process" in str(e.value)


def test_writing_a_python_module_to_a_file_is_refused(with_leaf):
    gm, _ = with_leaf
    sdk_gm = fx_sdk.from_torch_fx(gm)
    with pytest.raises(ValueError) as e:
        fx_sdk._C._to_bundle(sdk_gm)
    assert "'leaf'" in str(e.value)
    assert f"{Leaf.__module__}.Leaf" in str(e.value)


def test_exporting_a_torchvision_leaf_to_a_bundle_is_refused():
    torchvision = pytest.importorskip("torchvision")
    from torchvision.models.feature_extraction import create_feature_extractor
    gm = create_feature_extractor(torchvision.models.mobilenet_v3_small(),
                                  return_nodes=["features.0"])
    with pytest.raises(ValueError) as e:
        torchfx_export.graph_document(gm)
    assert "'features.0'" in str(e.value)
    assert "torchvision.ops.misc.Conv2dNormActivation" in str(e.value)


# ------------------------------------------------------------ torchvision

@pytest.mark.parametrize("name", ["mobilenet_v3_small", "efficientnet_b0",
                                  "regnet_x_400mf"])
def test_create_feature_extractor(name):
    torchvision = pytest.importorskip("torchvision")
    from torchvision.models.feature_extraction import (
        create_feature_extractor, get_graph_node_names)
    torch.manual_seed(0)
    model = getattr(torchvision.models, name)().eval()
    _, eval_nodes = get_graph_node_names(model)
    gm = create_feature_extractor(model, return_nodes=eval_nodes[-3:])
    x = torch.randn(1, 3, 224, 224)
    sdk_gm = fx_sdk.from_torch_fx(gm)
    assert sdk_gm.graph_text.rstrip() == graph_text(gm)
    assert sdk_gm.code == gm.code
    with torch.no_grad():
        expected = gm(x)
        got = sdk_gm(x)
        assert got.keys() == expected.keys()
        for key in expected:
            torch.testing.assert_close(got[key], expected[key])
        back = fx_sdk.to_torch_fx(sdk_gm)
        for path in targets(gm, "call_module"):
            if not type(gm.get_submodule(path)).__module__.startswith(
                    "torch.nn"):
                assert back.get_submodule(path) is gm.get_submodule(path)
        for key, value in back(x).items():
            torch.testing.assert_close(value, expected[key])


# ------------------------------------------------ Python objects as values

class Scaler:
    """A user's object passed as an input: torch.fx records its call and
    its method as call_method nodes (`a.__call__(x)`, `a.scale(x, k = 5)`)."""

    def __call__(self, x):
        return x * 3

    def scale(self, x, k=2):
        return x * k


class UsesScaler(torch.nn.Module):
    def forward(self, x, a: Scaler):
        return a(x) + a.scale(x, k=5) + x.add(1)


def test_methods_of_a_python_input_run_in_python():
    gm = torch.fx.symbolic_trace(UsesScaler())
    assert "call_method" in str(gm.graph)
    assert_round_trip(gm, (torch.randn(3), Scaler()))


class TensorPair(metaclass=torch.fx.ProxyableClassMeta):
    """torch.fx's ProxyableClassMeta: constructing one is a call_function
    node, its methods share names with Tensor's (add, mul)."""

    def __init__(self, left, right):
        self.left, self.right = left, right

    def add(self, other):
        return TensorPair(self.left + other.left, self.right + other.right)

    def mul(self, other):
        return TensorPair(self.left * other.left, self.right * other.right)


class UsesTensorPair(torch.nn.Module):
    def forward(self, x: TensorPair, y: torch.Tensor):
        s = x.add(TensorPair(y, y))
        return s.mul(x).left + y.add(1)


def test_a_python_class_beside_tensors_calls_each_its_own_methods():
    gm = torch.fx.symbolic_trace(UsesTensorPair())
    x = TensorPair(torch.randn(2, 3), torch.randn(2, 3))
    y = torch.randn(2, 3)
    sdk_gm = fx_sdk.from_torch_fx(gm)
    assert sdk_gm.code == gm.code
    torch.testing.assert_close(sdk_gm(x, y), gm(x, y))
