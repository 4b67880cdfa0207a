"""The normalize_args pass (libfx_optimization) against torch 1.13's
torch.fx.experimental.normalize.NormalizeArgs on the same graphs: after
fx_sdk.run_pipeline(gm, "normalize_args") the graph text and code are
torch's, and the numbers the unnormalized graph's. Run by fx_sdk_test.sh.

The graphs: PyTorch's own tests of NormalizeArgs (test_fx_experimental.py:
resnet18 traced down to functionals with BatchNorm2d as the only leaf,
every torch.nn module of common_nn's module_tests and new_module_tests
traced in a wrapper), torchvision models, make_fx graphs (ATen overloads),
and hand-written corner cases (overloads told apart by constant types, a
call binding to several, defaults of every kind, normalize_to_only_use_kwargs
false). Bad input: a call its signature refuses is named and the pass rolled
back.
"""

import math
import operator
import os
import sys
import warnings

import pytest
import torch
import torch.fx
import torch.nn.functional as F
import torchvision
from torch.fx.experimental.normalize import NormalizeArgs
from torch.fx.experimental.proxy_tensor import make_fx

import fx_sdk


def sdk_normalize(gm, options=""):
    pipeline = "normalize_args" + ("{" + options + "}" if options else "")
    out, report = fx_sdk.run_pipeline(gm, pipeline)
    assert report[0]["outcome"] == "ran", report
    return out


def torch_normalize(gm, only_kwargs=True):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # create_type_hint's warnings
        return NormalizeArgs(gm, only_kwargs).transform()


def same(a, b):
    if isinstance(a, torch.Tensor):
        return torch.equal(a, b)
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    return a == b


def check(gm, inputs, options="", only_kwargs=True):
    """Ours and torch's on gm: same text and code; ours computes what gm
    does."""
    with torch.no_grad():
        expected = gm(*inputs)
    theirs = torch_normalize(gm, only_kwargs)
    ours = sdk_normalize(gm, options)
    assert str(ours.graph) == str(theirs.graph)
    assert ours.code == theirs.code
    with torch.no_grad():
        assert same(ours(*inputs), expected)
    return ours


class Corners(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 4, 3)
        self.bn = torch.nn.BatchNorm2d(4)
        self.lin = torch.nn.Linear(4, 2)

    def forward(self, x: torch.Tensor, y=3) -> torch.Tensor:
        a = F.relu(self.bn(self.conv(x)))
        a = F.max_pool2d(a, 2)  # boolean-dispatched
        b = torch.add(a, a, alpha=2)  # binds to several: kept
        c = torch.arange(5)  # binds to one overload
        d = torch.full((2, 2), 1.5)  # constants only
        e = torch.flatten(F.adaptive_avg_pool2d(a + 1, 1), 1)
        f = torch.cat([e, e], 1)  # a list of nodes: no type, kept
        g = torch.nn.functional.dropout(e, 0.2, training=False)
        h = torch.sum(f) + torch.relu(b).mean() + c.sum() + d.sum()
        i = F.layer_norm(e, (4,), eps=1e-3)
        j = torch.clamp(e, min=0.0)
        return self.lin(g).sum(dim=1) * h + i.sum() + j.sum() + y


def test_corner_cases_are_torchs():
    gm = torch.fx.symbolic_trace(Corners().eval())
    check(gm, [torch.randn(2, 3, 8, 8)])


def test_positional_arguments_kept_without_only_kwargs():
    gm = torch.fx.symbolic_trace(Corners().eval())
    check(gm, [torch.randn(2, 3, 8, 8)],
          options="normalize_to_only_use_kwargs=false", only_kwargs=False)


def test_resnet18_traced_to_functionals():
    """PyTorch's test_normalize_args: resnet18 traced with BatchNorm2d as
    its only leaf module, shape-propagated, normalized."""
    from torch.fx.passes.shape_prop import ShapeProp

    class FunctionalTracer(torch.fx.Tracer):
        def is_leaf_module(self, m, qualified_name):
            return type(m) in {torch.nn.BatchNorm2d}

    m = torchvision.models.resnet18().eval()
    gm = torch.fx.GraphModule(m, FunctionalTracer().trace(m))
    x = torch.randn(2, 3, 64, 64)
    ShapeProp(gm).propagate(x)
    ours = check(gm, [x])
    for node in ours.graph.nodes:
        if node.op == "call_function" and node.target != operator.add:
            assert len(node.args) == 0, node.format_node()


@pytest.mark.parametrize("name", ["resnet18", "mobilenet_v2", "squeezenet1_1",
                                  "googlenet"])
def test_torchvision_models(name):
    kwargs = {"aux_logits": False, "init_weights": False} \
        if name == "googlenet" else {}
    m = getattr(torchvision.models, name)(**kwargs).eval()
    check(torch.fx.symbolic_trace(m), [torch.randn(1, 3, 64, 64)])


def functional_graph():
    def f(x, w):
        y = torch.nn.functional.conv2d(x, w).relu().sum(1)
        return y + x.mean() + torch.ops.aten.add(y, 1)
    return make_fx(f)(torch.randn(1, 2, 5, 5), torch.randn(3, 2, 3, 3))


def test_make_fx_graph_as_torch_renames_self():
    """torch 1.13 renames an ATen overload's `self` to `input`:
    ops_self_as_input=true gives its text and code (a graph neither runs)."""
    gm = functional_graph()
    theirs = torch_normalize(gm)
    ours = sdk_normalize(gm, "ops_self_as_input=true")
    assert str(ours.graph) == str(theirs.graph)
    assert ours.code == theirs.code
    assert "relu_default = torch.ops.aten.relu.default(input = " in ours.code


def symbolic_graph():
    def f(x, y):
        a = x.view(x.shape[0] * 2, -1)
        return torch.cat([a, a]) + y.sum()
    return make_fx(f, tracing_mode="symbolic")(torch.randn(4, 6),
                                               torch.randn(3))


def test_symbolic_make_fx_graph_as_torch():
    """make_fx(tracing_mode="symbolic"): sym_size (an overload packet) and
    its arithmetic, a size list holding a node."""
    gm = symbolic_graph()
    theirs = torch_normalize(gm)
    ours = sdk_normalize(gm, "ops_self_as_input=true")
    assert str(ours.graph) == str(theirs.graph)
    assert ours.code == theirs.code


def test_symbolic_make_fx_graph_runs_at_other_sizes():
    gm = symbolic_graph()
    ours = sdk_normalize(gm)
    for shape in [(4, 6), (6, 10)]:
        inputs = [torch.randn(*shape), torch.randn(5)]
        assert same(ours(*inputs), gm(*inputs))


def test_make_fx_graph_keeps_self_and_runs():
    gm = functional_graph()
    inputs = [torch.randn(1, 2, 5, 5), torch.randn(3, 2, 3, 3)]
    ours = sdk_normalize(gm)
    assert "torch.ops.aten.relu.default(convolution_default)" in ours.code
    assert same(ours(*inputs), gm(*inputs))


def common_nn_modules():
    """PyTorch's test_normalize_modules_exhaustive: every standard torch.nn
    module of common_nn's module_tests and new_module_tests, called from a
    wrapper module."""
    # expecttest, which Debian lacks: the conformance suite's stand-in.
    sdk_root = os.path.dirname(os.path.dirname(fx_sdk.__file__))
    sys.path.append(os.path.join(os.path.dirname(sdk_root), "tools",
                                 "conformance", "shims"))
    from torch.testing._internal.common_nn import module_tests, new_module_tests
    cases = []
    for params in module_tests + new_module_tests:
        if "module_name" not in params:
            continue  # a functional's test (PyTorch's test skips these too)
        name = params.get("fullname") or params.get("desc") or ""
        cases.append(pytest.param(params, id=f"{params['module_name']}_{name}"
                                  f"_{len(cases)}"))
    return cases


def wrapped_module(params):
    constructor = params.get("constructor") or \
        getattr(torch.nn, params["module_name"])
    torch.manual_seed(0)
    mod = constructor(*params.get("constructor_args", ()))
    if mod.__class__.__name__ not in dir(torch.nn):
        pytest.skip("not a standard torch.nn module (PyTorch's test skips it)")
    inputs = params["input_fn"]() if "input_fn" in params else \
        torch.randn(params["input_size"])
    if not isinstance(inputs, (tuple, list)):
        inputs = (inputs,)
    names = ", ".join(f"v{i}" for i in range(len(inputs)))
    code = (f"class Test{mod.__class__.__name__}(torch.nn.Module):\n"
            f"    def __init__(self, mod):\n"
            f"        super().__init__()\n"
            f"        self.mod = mod\n"
            f"    def forward(self, {names}):\n"
            f"        return self.mod({names})\n")
    scope = {"torch": torch}
    exec(code, scope)
    return scope[f"Test{mod.__class__.__name__}"](mod), list(inputs)


STOCHASTIC = {"FractionalMaxPool2d", "FractionalMaxPool3d", "RReLU"}


@pytest.mark.parametrize("params", common_nn_modules())
def test_pytorch_normalize_modules_exhaustive(params):
    module, inputs = wrapped_module(params)
    gm = torch.fx.symbolic_trace(module)
    theirs = torch_normalize(gm)
    ours = sdk_normalize(gm)
    assert str(ours.graph) == str(theirs.graph)
    assert ours.code == theirs.code
    if params["module_name"] not in STOCHASTIC:
        with torch.no_grad():
            expected = module(*inputs)
            assert same(ours(*inputs), expected)


def opinfo_programs():
    """PyTorch's TestNormalizeOperators.test_normalize_operator_exhaustive:
    for each OpInfo operator (float32, CPU), a module calling torch.NAME on
    the first samples' arguments, tensors as its inputs."""
    from torch.testing._internal.common_methods_invocations import op_db
    fx_fail = {"cat", "stack", "hstack", "vstack", "dstack",
               "linalg.multi_dot"}
    cases = []
    for op in op_db:
        if isinstance(op.op, torch._ops.OpOverload) or op.name in fx_fail:
            continue
        if torch.float32 not in op.supported_dtypes("cpu"):
            continue
        cases.append(pytest.param(op, id=f"{op.name}_{op.variant_test_name}"))
    return cases


def opinfo_module(op, sample):
    names, values, fx_args = [], [], []
    for i, v in enumerate([sample.input] + list(sample.args)):
        if isinstance(v, torch.Tensor):
            names.append(f"arg_{i}")
            values.append(v)
            fx_args.append(names[-1])
        else:
            fx_args.append(repr(v))
    for k, v in sample.kwargs.items():
        if isinstance(v, torch.Tensor):
            names.append(k)
            values.append(v)
            fx_args.append(f"{k} = {k}")
        else:
            fx_args.append(f"{k} = {repr(v)}")
    code = (f"class TestModule(torch.nn.Module):\n"
            f"    def forward(self, {', '.join(names)}):\n"
            f"        return torch.{op.name}({', '.join(fx_args)})\n")
    scope = {"torch": torch, "inf": math.inf}
    exec(code, scope)
    return scope["TestModule"](), values


@pytest.mark.parametrize("op", opinfo_programs())
def test_pytorch_normalize_operators_exhaustive(op):
    """Each program shape-propagated (meta['type'] on every node, as
    NormalizeArgs reads it), then normalized by torch and by the SDK with
    node_type_for_args (torch's typing); by default too, which must run."""
    from torch.fx.passes.shape_prop import ShapeProp
    checked = 0
    for sample in list(op.sample_inputs("cpu", torch.float32,
                                        requires_grad=False))[:3]:
        values = [sample.input] + list(sample.args) + \
            list(sample.kwargs.values())
        if any(isinstance(v, complex) for v in values):
            continue  # complex constants: not in FX (PyTorch's test skips)
        module, inputs = opinfo_module(op, sample)
        try:
            gm = torch.fx.symbolic_trace(module)
            ShapeProp(gm).propagate(*inputs)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                theirs = torch_normalize(gm)
        except Exception as e:  # not traceable, or torch's pass fails
            print(f"torch cannot: {type(e).__name__}: {e}")
            continue
        try:
            ours = sdk_normalize(gm, "node_type_for_args=true")
        except ValueError as e:
            if "cannot" in str(e) or "not supported" in str(e):
                print(f"the SDK cannot hold the graph: {e}")
                continue
            raise
        assert str(ours.graph) == str(theirs.graph)
        assert ours.code == theirs.code
        runs = sdk_normalize(gm)
        torch.manual_seed(0)
        expected = gm(*inputs)
        torch.manual_seed(0)
        got = runs(*inputs)
        if op.name.startswith(("empty", "new_empty")):  # uninitialized
            got, expected = got.shape, expected.shape
        torch.testing.assert_close(got, expected, equal_nan=True)
        checked += 1
    if checked == 0:
        pytest.skip("no sample both torch and the SDK could trace and hold")


# ------------------------------------------------ NormalizeOperators and
# ------------------------------------------------ AnnotateTypesWithSchema

def sdk_pass(gm, pipeline):
    out, report = fx_sdk.run_pipeline(gm, pipeline)
    assert report[0]["outcome"] == "ran", report
    return out


def check_transform(gm, inputs, pipeline, theirs):
    ours = sdk_pass(gm, pipeline)
    assert str(ours.graph) == str(theirs.graph)
    assert ours.code == theirs.code
    with torch.no_grad():
        assert same(ours(*inputs), gm(*inputs))
    return ours


BINARY = [torch.add, torch.mul, torch.sub, torch.div, torch.floor_divide,
          torch.remainder, torch.eq, torch.ne, torch.lt, torch.le, torch.gt,
          torch.ge]


@pytest.mark.parametrize("op", BINARY, ids=lambda op: op.__name__)
def test_pytorch_normalize_binary_operators(op):
    """PyTorch's test_normalize_binary_operators: Tensor/Tensor and
    Tensor/scalar calls become the operator.* function."""
    from torch.fx.experimental.normalize import NormalizeOperators

    class Tensors(torch.nn.Module):
        def forward(self, x, y):
            return op(x, y)

    class Scalar(torch.nn.Module):
        def forward(self, x):
            return op(x, 42)

    x, y = torch.randn(3, 4), torch.randn(3, 4)
    for module, inputs in ((Tensors(), [x, y]), (Scalar(), [x])):
        gm = torch.fx.symbolic_trace(module)
        ours = check_transform(gm, inputs, "normalize_operators",
                               NormalizeOperators(gm).transform())
        assert not any(n.target in BINARY for n in ours.graph.nodes)


class KeywordOperators(torch.nn.Module):
    def forward(self, x, y):
        return torch.add(x, y, alpha=2) + torch.div(x, y, rounding_mode="floor")


def test_normalize_operators_keeps_calls_with_keywords():
    """torch 1.13 drops alpha and rounding_mode (other numbers); the SDK
    keeps those calls by default, and drops them as torch does with
    drop_kwargs."""
    from torch.fx.experimental.normalize import NormalizeOperators
    gm = torch.fx.symbolic_trace(KeywordOperators())
    x, y = torch.randn(3, 4), torch.rand(3, 4) + 0.5
    ours = sdk_pass(gm, "normalize_operators")
    assert same(ours(x, y), gm(x, y))
    assert "torch.add(x, y, alpha = 2)" in ours.code
    theirs = NormalizeOperators(gm).transform()
    as_torch = sdk_pass(gm, "normalize_operators{drop_kwargs=true}")
    assert str(as_torch.graph) == str(theirs.graph)
    assert as_torch.code == theirs.code
    assert same(as_torch(x, y), theirs(x, y))
    assert not same(theirs(x, y), gm(x, y))  # torch's bug, reproduced


def resnet18_graphs():
    """PyTorch's test_annotate_returns_with_schema: resnet18 traced to
    modules and traced to functionals (BatchNorm2d the only leaf)."""
    class FunctionalTracer(torch.fx.Tracer):
        def is_leaf_module(self, m, qualified_name):
            return type(m) in {torch.nn.BatchNorm2d}

    m = torchvision.models.resnet18().eval()
    return [torch.fx.symbolic_trace(m),
            torch.fx.GraphModule(m, FunctionalTracer().trace(m))]


@pytest.mark.parametrize("which", [0, 1], ids=["modules", "functionals"])
def test_pytorch_annotate_returns_with_schema(which):
    from torch.fx.experimental.schema_type_annotation import \
        AnnotateTypesWithSchema
    gm = resnet18_graphs()[which]
    x = torch.randn(1, 3, 64, 64)
    check_transform(gm, [x], "annotate_types_with_schema",
                    AnnotateTypesWithSchema(gm).transform())


@pytest.mark.parametrize("name", ["mobilenet_v2", "squeezenet1_1",
                                  "densenet121", "mnasnet0_5"])
@pytest.mark.parametrize("pipeline", ["normalize_operators",
                                      "annotate_types_with_schema"])
def test_torchvision_models_typed_as_torch(name, pipeline):
    from torch.fx.experimental.normalize import NormalizeOperators
    from torch.fx.experimental.schema_type_annotation import \
        AnnotateTypesWithSchema
    transform = NormalizeOperators if pipeline == "normalize_operators" \
        else AnnotateTypesWithSchema
    gm = torch.fx.symbolic_trace(getattr(torchvision.models, name)().eval())
    check_transform(gm, [torch.randn(1, 3, 64, 64)], pipeline,
                    transform(gm).transform())


@pytest.mark.parametrize("which", [0, 1], ids=["modules", "functionals"])
def test_normalize_operators_on_resnet18(which):
    from torch.fx.experimental.normalize import NormalizeOperators
    gm = resnet18_graphs()[which]
    check_transform(gm, [torch.randn(1, 3, 64, 64)], "normalize_operators",
                    NormalizeOperators(gm).transform())


@pytest.mark.parametrize("options", [
    "annotate_functionals=false", "annotate_modules=false",
    "annotate_get_attrs=false"])
def test_annotate_types_options(options):
    """Each annotate_* flag as AnnotateTypesWithSchema's argument of that
    name, on a graph with every kind of node it types (Corners, with
    shape_prop's meta, which the transform drops as torch's does)."""
    from torch.fx.experimental.schema_type_annotation import \
        AnnotateTypesWithSchema
    from torch.fx.passes.shape_prop import ShapeProp
    gm = torch.fx.symbolic_trace(Corners().eval())
    x = torch.randn(2, 3, 8, 8)
    ShapeProp(gm).propagate(x)
    key, value = options.split("=")
    theirs = AnnotateTypesWithSchema(gm, **{key: value == "true"}).transform()
    ours = check_transform(gm, [x], "annotate_types_with_schema{" + options +
                           "}", theirs)
    assert all(not n.meta for n in ours.graph.nodes)


def test_python_declarations_are_torchs():
    """The generated table the host reads is what torch 1.13 declares."""
    import subprocess
    runfiles = os.path.dirname(os.path.dirname(
        os.path.dirname(fx_sdk.__file__)))
    script = os.path.join(runfiles, "tools", "gen_python_declarations.py")
    table = os.path.join(runfiles, "fx_core", "runtime",
                         "python_declarations.inc")
    generated = subprocess.run([sys.executable, script], check=True,
                               capture_output=True, text=True).stdout
    with open(table) as f:
        assert f.read() == generated


# ------------------------------------------------------- reference graphs

REFERENCE = os.environ.get("FX_SDK_REFERENCE", "")
BUNDLES = sorted(
    name for name in (os.listdir(REFERENCE) if os.path.isdir(REFERENCE)
                      else [])
    if os.path.exists(os.path.join(REFERENCE, name, "graph.fx.json")))


@pytest.mark.parametrize("name", BUNDLES)
@pytest.mark.parametrize("pipeline", ["normalize_args", "normalize_operators",
                                      "annotate_types_with_schema"])
def test_reference_graphs(name, pipeline):
    """The seed docs' graphs (../shared/reference) through each pass and
    torch's: same text and code; the numbers of the graph before it, on the
    bundle's input where it has one and is not in training mode."""
    from fx_sdk import torchfx_import
    from torch.fx.experimental.normalize import NormalizeOperators
    from torch.fx.experimental.schema_type_annotation import \
        AnnotateTypesWithSchema
    transform = {"normalize_args": NormalizeArgs,
                 "normalize_operators": NormalizeOperators,
                 "annotate_types_with_schema": AnnotateTypesWithSchema}
    directory = os.path.join(REFERENCE, name)
    gm = torchfx_import.load_bundle(directory)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = transform[pipeline](gm).transform()
    ours = sdk_pass(gm, pipeline)
    assert str(ours.graph) == str(theirs.graph)
    assert ours.code == theirs.code
    inputs_path = os.path.join(directory, "input.pt")
    if os.path.exists(inputs_path) and not gm.training:
        inputs = torch.load(inputs_path)
        with torch.no_grad():
            assert same(ours(*inputs), gm(*inputs))


# ------------------------------------------------------------- bad input

class UnexpectedKeyword(torch.nn.Module):
    def forward(self, x):
        return F.relu(x).sin() + F.gelu(x)


def test_a_call_its_signature_refuses_is_named():
    """torch raises TypeError from inside its transform; the SDK refuses
    the graph when it takes it in, naming the node and the argument, so the
    pass never sees such a call (its own check, naming the pass and the
    node, stays for graphs built otherwise)."""
    gm = torch.fx.symbolic_trace(UnexpectedKeyword())
    relu = next(n for n in gm.graph.nodes if n.name == "relu")
    relu.kwargs = {"inplace": False, "foo": 1}
    gm.recompile()
    with pytest.raises(TypeError):
        torch_normalize(gm)
    with pytest.raises(ValueError) as e:
        fx_sdk.run_pipeline(gm, "normalize_args")
    assert "node 'relu'" in str(e.value)
    assert "unexpected keyword argument 'foo'" in str(e.value)


@pytest.mark.parametrize("pipeline,wanted", [
    ("normalize_args{normalize_to_only_use_kwargs=maybe}",
     "normalize_to_only_use_kwargs"),
    ("normalize_args{only_kwargs=true}", "only_kwargs"),
    ("normalize_operators{drop_kwargs=2}", "drop_kwargs"),
    ("annotate_types_with_schema{annotate_modules=}", "annotate_modules"),
])
def test_bad_options_are_named(pipeline, wanted):
    gm = torch.fx.symbolic_trace(UnexpectedKeyword())
    with pytest.raises(ValueError) as e:
        fx_sdk.run_pipeline(gm, pipeline)
    assert pipeline.split("{")[0] in str(e.value)
    assert wanted in str(e.value)
