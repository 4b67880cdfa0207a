"""fx_sdk.compile (python/fx_sdk.py, python/compiled_graph.cc): the SDK's
InferencePlan as a callable, directly and as functorch.compile.aot_function's
fw_compiler / bw_compiler, against eager PyTorch on resnet18 and a small
transformer; with dynamic=True one plan over batch sizes (a resnet) and
sequence lengths (an encoder) after the inference passes, and a symbolic
graph's guards. Run by fx_sdk_test.sh under /usr/bin/python3."""

import math

import pytest
import torch
import torch.fx
from functorch.compile import aot_function

import fx_sdk

# aot_function warns that an unboxed compiler keeps its inputs alive.
pytestmark = pytest.mark.filterwarnings("ignore:Your compiler for AOTAutograd")


class Block(torch.nn.Module):
    """A pre-norm transformer block written out (torch.fx traces through it:
    attention as matmul and softmax)."""

    def __init__(self, d=32, heads=4):
        super().__init__()
        self.heads = heads
        self.qkv = torch.nn.Linear(d, 3 * d)
        self.proj = torch.nn.Linear(d, d)
        self.ln1 = torch.nn.LayerNorm(d)
        self.ln2 = torch.nn.LayerNorm(d)
        self.mlp = torch.nn.Sequential(torch.nn.Linear(d, 4 * d),
                                       torch.nn.GELU(),
                                       torch.nn.Linear(4 * d, d))

    def forward(self, x):
        b, t, d = x.size(0), x.size(1), x.size(2)
        qkv = self.qkv(self.ln1(x)).chunk(3, dim=-1)
        q, k, v = [qkv[i].view(b, t, self.heads, 8).transpose(1, 2)
                   for i in range(3)]
        att = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(8), dim=-1)
        y = (att @ v).transpose(1, 2).reshape(b, t, d)
        x = x + self.proj(y)
        return x + self.mlp(self.ln2(x))


class TinyTransformer(torch.nn.Module):
    def __init__(self, vocab=100, d=32):
        super().__init__()
        self.embedding = torch.nn.Embedding(vocab, d)
        self.blocks = torch.nn.Sequential(Block(d), Block(d))
        self.head = torch.nn.Linear(d, vocab)

    def forward(self, ids):
        return self.head(self.blocks(self.embedding(ids)))


def resnet18():
    import torchvision.models
    return torchvision.models.resnet18().eval(), [torch.rand(1, 3, 224, 224)]


def transformer():
    return TinyTransformer().eval(), [torch.randint(0, 100, (2, 7))]


def nn_transformer():
    def layer():
        return torch.nn.TransformerEncoderLayer(
            d_model=32, nhead=4, dim_feedforward=64, batch_first=True)
    # torch.fx keeps each layer as a call_module leaf.
    model = torch.nn.Sequential(layer(), layer()).eval()
    return model, [torch.rand(2, 5, 32)]


MODELS = {"resnet18": resnet18, "transformer": transformer,
          "nn_transformer": nn_transformer}


def functional(model):
    """model as fn(flat_parameters, *inputs) for aot_function, and its
    parameters and buffers in that order."""
    state = dict(model.named_parameters())
    state.update(model.named_buffers())
    names = list(state)

    def fn(flat, *inputs):
        return torch.nn.utils.stateless.functional_call(
            model, dict(zip(names, flat)), inputs)
    return fn, list(state.values())


@pytest.mark.parametrize("name", sorted(MODELS))
def test_compile_directly(name):
    torch.manual_seed(0)
    model, inputs = MODELS[name]()
    compiled = fx_sdk.compile(torch.fx.symbolic_trace(model), inputs)
    assert isinstance(compiled, fx_sdk.CompiledGraph)
    with torch.no_grad():
        want = model(*inputs)
        torch.testing.assert_close(compiled(*inputs), want, rtol=1e-4,
                                   atol=1e-5)
        # Other inputs of the same shapes: the plan runs again.
        other = [torch.rand_like(x) if x.is_floating_point()
                 else torch.randint_like(x, 100) for x in inputs]
        torch.testing.assert_close(compiled(*other), model(*other),
                                   rtol=1e-4, atol=1e-5)
    assert compiled.stats["replans"] == 0


@pytest.mark.parametrize("name", sorted(MODELS))
def test_aot_function_fw_compiler(name):
    torch.manual_seed(0)
    model, inputs = MODELS[name]()
    fn, flat = functional(model)
    compiled = []

    def fw_compiler(gm, example_inputs):
        compiled.append(fx_sdk.compile(gm, example_inputs))
        return compiled[-1]
    aot = aot_function(fn, fw_compiler=fw_compiler)
    with torch.no_grad():
        got = aot(flat, *inputs)
        want = model(*inputs)
    assert len(compiled) == 1
    # The aten-level graph aot_function traced ran in the SDK.
    assert compiled[0].stats["steps"] > 20
    torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-5)


def test_aot_function_passes_fx_sdk_compile_itself_for_both_passes():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.Tanh(),
                                torch.nn.Linear(16, 4))
    fn, flat = functional(model)
    x = torch.rand(5, 8)
    aot = aot_function(fn, fw_compiler=fx_sdk.compile,
                       bw_compiler=fx_sdk.compile)
    torch.testing.assert_close(aot(flat, x), fn(flat, x))
    want = torch.autograd.grad(fn(flat, x).sum(), flat)
    got = torch.autograd.grad(aot(flat, x).sum(), flat)
    assert len(got) == len(want) == 4
    for g, w in zip(got, want):
        torch.testing.assert_close(g, w)


def test_compile_takes_an_sdk_graph_module():
    gm = torch.fx.symbolic_trace(torch.nn.Sequential(torch.nn.Linear(4, 3),
                                                     torch.nn.ReLU()).eval())
    sdk_gm = fx_sdk.from_torch_fx(gm)
    x = torch.rand(2, 4)
    compiled = fx_sdk.compile(sdk_gm, [x])
    assert compiled.graph_module is sdk_gm
    with torch.no_grad():
        torch.testing.assert_close(compiled(x), gm(x))
        # Another batch size: re-planned, same numbers.
        y = torch.rand(6, 4)
        torch.testing.assert_close(compiled(y), gm(y))
    assert compiled.stats["replans"] == 1


def test_compile_errors_name_the_node():
    graph = torch.fx.Graph()
    x = graph.placeholder("x")
    graph.output(graph.call_function(torch.matmul, (x, x)))
    gm = torch.fx.GraphModule(torch.nn.Module(), graph)
    with pytest.raises(ValueError, match="matmul"):
        fx_sdk.compile(gm, [torch.rand(2, 3)])  # (2,3) @ (2,3)
    with pytest.raises(TypeError):
        fx_sdk.compile(torch.nn.ReLU(), [torch.rand(2)])


# fx_sdk.compile(..., dynamic=True): one plan for every shape.

INFERENCE_PASSES = ("shape_prop,fold_bn,fuse_conv,fuse_linear,fuse_matmul,"
                    "fuse_window_attention,fuse_pointwise")


def small_resnet():
    import torchvision.models
    return torchvision.models.resnet18(num_classes=10).eval()


def encoder():
    """A transformer encoder written out: linear, matmul, softmax,
    layer_norm, gelu; the sequence length read from the input."""
    return torch.nn.Sequential(Block(), Block()).eval()


def optimized(model, example):
    """model traced, as an SDK GraphModule through the inference passes
    (torch.ops.fx_inference.* nodes), as fx exec
    --pipeline and the benchmarks run it."""
    sdk_gm = fx_sdk.from_torch_fx(torch.fx.symbolic_trace(model))
    report = fx_sdk._C._run_pipeline(sdk_gm, INFERENCE_PASSES, [],
                                     [fx_sdk.PLUGIN_DIR], True, [example])
    assert all(r["outcome"] == "ran" for r in report), report
    assert "fx_inference" in sdk_gm.code
    return sdk_gm


def run_shapes(compiled, model, inputs):
    with torch.no_grad():
        for x in inputs:
            torch.testing.assert_close(compiled(x), model(x), rtol=1e-4,
                                       atol=1e-5)


@pytest.mark.parametrize("what", ["resnet", "encoder"])
def test_dynamic_plan_runs_every_shape_with_one_build(what):
    torch.manual_seed(0)
    if what == "resnet":
        model = small_resnet()
        inputs = [torch.rand(b, 3, 64, 64) for b in (4, 1, 2, 3, 5, 6, 7, 8)]
    else:
        model = encoder()
        inputs = [torch.rand(2, s, 32) for s in (16, 3, 9, 31, 64)]
    gm = optimized(model, inputs[0])
    compiled = fx_sdk.compile(gm, [inputs[0]], dynamic=True)
    run_shapes(compiled, model, inputs + inputs[::-1])
    stats = compiled.stats
    assert compiled.plan_builds == 1
    assert stats["dynamic"] and stats["plan_builds"] == 1
    assert stats["replans"] == 0 and stats["forward_calls"] == 0
    assert stats["shape_specialisations"] == len(inputs)
    assert stats["onednn_steps"] > 0 and stats["direct_fallbacks"] == 0
    # The static plan on the same inputs builds a plan per shape change.
    static = fx_sdk.compile(gm, [inputs[0]])
    run_shapes(static, model, inputs)
    assert static.plan_builds == len(inputs)
    assert not static.stats["dynamic"]


def test_dynamic_plan_on_a_symbolic_graph_checks_its_guards():
    from torch.fx.experimental.proxy_tensor import make_fx

    def view_computed(x, y):
        a = x.view(x.shape[0] * 2, -1)
        return torch.cat([a, a], dim=0) + y.sum()
    gm = make_fx(view_computed, tracing_mode="symbolic")(torch.randn(4, 6),
                                                         torch.randn(3))
    compiled = fx_sdk.compile(gm, [torch.randn(4, 6), torch.randn(3)],
                              dynamic=True)
    with torch.no_grad():
        for n, m in [(4, 6), (2, 8), (9, 10), (4, 6)]:
            x, y = torch.randn(n, m), torch.randn(3)
            torch.testing.assert_close(compiled(x, y), view_computed(x, y))
        assert compiled.plan_builds == 1
        assert compiled.stats["shape_specialisations"] == 3
        assert compiled.stats["forward_calls"] == 0
        # x's second size must stay even (view(2*n, -1)).
        with pytest.raises(RuntimeError, match=r"the guard Eq\(t0\.size\(0\)"
                           r"\*\(Mod\(t0\.size\(1\), 2\)\), 0\) does not "
                           r"hold: t0\.size\(0\) = 5 \(placeholder 'x_1' "
                           r"dimension 0\)"):
            compiled(torch.randn(5, 7), torch.randn(3))
    assert compiled.plan_builds == 1
    assert compiled.stats["shape_specialisations"] == 3


# fx_sdk.compile's pipeline (issue 37 item 5): the named pipeline
# "inference" by default on a torch.fx GraphModule, any pipeline when given.

INFERENCE_NAMES = INFERENCE_PASSES.split(",")


def module_types(gm):
    return [type(gm.get_submodule(n.target)).__name__
            for n in gm.graph.nodes if n.op == "call_module"]


def test_compile_runs_the_inference_pipeline_by_default(caplog):
    torch.manual_seed(0)
    model, inputs = resnet18()
    gm = torch.fx.symbolic_trace(model)
    weights = {k: v.clone() for k, v in gm.state_dict().items()}
    with caplog.at_level("INFO", logger="fx_sdk"):
        compiled = fx_sdk.compile(gm, inputs)
    # gm is left as it was: its modules and every weight.
    for key, value in gm.state_dict().items():
        assert torch.equal(value, weights[key]), key
    assert compiled.pipeline == "inference"
    assert compiled.passes == INFERENCE_NAMES
    assert [r["outcome"] for r in compiled.pipeline_report] == (
        ["ran"] * len(INFERENCE_NAMES))
    assert ("pipeline inference: ran " + ", ".join(INFERENCE_NAMES)
            in caplog.text)
    # BatchNorm folded and the convolutions fused, in the plan's graph only.
    assert "fx_inference.conv2d" in compiled.graph_module.code
    planned = fx_sdk.to_torch_fx(compiled.graph_module)
    assert "BatchNorm2d" not in module_types(planned)
    assert "BatchNorm2d" in module_types(gm)
    with torch.no_grad():
        torch.testing.assert_close(compiled(*inputs), model(*inputs),
                                   rtol=1e-4, atol=1e-5)
    assert compiled.stats["onednn_steps"] > 0


@pytest.mark.parametrize("pipeline,passes", [
    ("O1", ["dce", "cse"]), ("", []), (INFERENCE_PASSES, INFERENCE_NAMES)])
def test_an_explicit_pipeline_wins(pipeline, passes):
    torch.manual_seed(0)
    model, inputs = resnet18()
    compiled = fx_sdk.compile(torch.fx.symbolic_trace(model), inputs,
                              pipeline=pipeline)
    assert compiled.pipeline == pipeline
    assert compiled.passes == passes
    assert ("fx_inference" in compiled.graph_module.code) == bool(
        "fold_bn" in passes)
    with torch.no_grad():
        torch.testing.assert_close(compiled(*inputs), model(*inputs),
                                   rtol=1e-4, atol=1e-5)


def test_an_sdk_graph_module_is_copied_for_an_explicit_pipeline():
    model = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.ReLU()).eval()
    sdk_gm = fx_sdk.from_torch_fx(torch.fx.symbolic_trace(model))
    code = sdk_gm.code
    x = torch.rand(2, 4)
    # By default planned as it is (test_compile_takes_an_sdk_graph_module).
    assert fx_sdk.compile(sdk_gm, [x]).passes == []
    compiled = fx_sdk.compile(sdk_gm, [x], pipeline="inference")
    assert compiled.passes == INFERENCE_NAMES
    assert compiled.graph_module is not sdk_gm
    assert "fx_inference.linear" in compiled.graph_module.code
    assert sdk_gm.code == code
    with torch.no_grad():
        torch.testing.assert_close(compiled(x), model(x))


def test_compile_refuses_an_unknown_pipeline_naming_the_known_ones():
    gm = torch.fx.symbolic_trace(torch.nn.ReLU())
    with pytest.raises(ValueError, match=r"unknown pass 'O3' .*; 'O3' is no "
                       r"named pipeline either \(named pipelines: O1, O2, "
                       r"inference\)"):
        fx_sdk.compile(gm, [torch.rand(2)], pipeline="O3")


def test_a_pass_failing_under_the_default_pipeline_is_skipped(caplog):
    def scaled(x, n):
        return torch.relu(x) * n
    gm = torch.fx.symbolic_trace(scaled)
    # n is no tensor: the passes get no example inputs, and shape_prop,
    # with nothing to run on, fails.
    with caplog.at_level("INFO", logger="fx_sdk"):
        compiled = fx_sdk.compile(gm, [torch.rand(3), 2])
    outcomes = {r["pass"]: r["outcome"] for r in compiled.pipeline_report}
    assert outcomes["shape_prop"] == "rolled_back"
    assert "shape_prop" not in compiled.passes
    assert ("pipeline inference: pass shape_prop failed and was rolled "
            "back: FAILED_PRECONDITION: shape_prop needs inputs") in caplog.text
    x = torch.randn(3)
    torch.testing.assert_close(compiled(x, 2), scaled(x, 2))
    # Given explicitly, the same pipeline stops there.
    with pytest.raises(RuntimeError, match="pass 'shape_prop' of plugin "
                       "'fx_shape_prop' .* failed and was rolled back"):
        fx_sdk.compile(gm, [torch.rand(3), 2], pipeline="inference")
    with pytest.raises(TypeError, match="pipeline must be pipeline text or "
                       "a named pipeline"):
        fx_sdk.compile(gm, [torch.rand(3), 2], pipeline=["inference"])
