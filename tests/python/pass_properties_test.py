"""Every first-party pass against torch.fx on the graphs that gave silent
wrong results (issue 40: guard the class, not the instance): random
operators, in-place operators, a model in training mode, attributes of
every kind. After each pass the SDK's GraphModule must compute what
torch.fx's gm(...) computes (the same random draws under the same seed),
with the same requires_grad. Run by fx_sdk_test.sh.
"""

import pytest
import torch
from torch.fx.experimental.proxy_tensor import make_fx

import fx_sdk

PASSES = ["dce", "cse", "const_fold", "decompose{rules=all}", "shape_prop",
          "fold_bn", "fuse_conv", "fuse_linear", "fuse_matmul",
          "fuse_window_attention",
          "fuse_pointwise", "fuse", "normalize_args", "normalize_operators",
          "annotate_types_with_schema",
          "shape_prop,accelerator_partition{devices=dev_0:1000000000:0}"]


def random_ops(x):
    return torch.rand_like(x) + torch.rand_like(x) * x


def in_place(x):
    y = x.clone()
    y.add_(1)
    z = y * 2
    y.mul_(3)
    return z + y


class TrainingBN(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 4, 3)
        self.bn = torch.nn.BatchNorm2d(4)

    def forward(self, x):
        return torch.relu(self.bn(self.conv(x)))


class Attributes(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("scale", torch.rand(4))
        self.frozen = torch.nn.Parameter(torch.rand(4), requires_grad=False)
        self.linear = torch.nn.Linear(4, 4)

    def forward(self, x):
        return self.linear(x * self.scale + self.frozen)


def graphs():
    x4 = torch.randn(3, 4)
    return {
        "random_ops": (torch.fx.symbolic_trace(random_ops), x4),
        "random_ops_aten": (make_fx(random_ops)(x4), x4),
        "in_place": (torch.fx.symbolic_trace(in_place), x4),
        "in_place_aten": (make_fx(in_place)(x4), x4),
        "training_bn": (torch.fx.symbolic_trace(TrainingBN().train()),
                        torch.randn(2, 3, 8, 8)),
        "attributes": (torch.fx.symbolic_trace(Attributes()), x4),
    }


GRAPHS = graphs()


@pytest.mark.parametrize("name", sorted(GRAPHS))
@pytest.mark.parametrize("pass_text", PASSES)
def test_pass_keeps_torch_fx_results(name, pass_text):
    gm, x = GRAPHS[name]
    sdk = fx_sdk.from_torch_fx(gm)
    if pass_text == "fuse" and name == "training_bn":
        # torch's fuse asserts eval mode; the SDK's refuses and rolls back.
        with pytest.raises(RuntimeError, match="must be in eval mode"):
            fx_sdk._C._run_pipeline(sdk, pass_text, [], [fx_sdk.PLUGIN_DIR],
                                    True, [x])
    else:
        report = fx_sdk._C._run_pipeline(sdk, pass_text, [],
                                         [fx_sdk.PLUGIN_DIR], True, [x])
        assert report[0]["outcome"] in ("ran", "not_run"), report
    torch.manual_seed(7)
    expected = gm(x.clone())
    torch.manual_seed(7)
    got = sdk(x.clone())
    got = got[0] if isinstance(got, (list, tuple)) and not isinstance(
        expected, (list, tuple)) else got
    expected = expected[0] if isinstance(expected, (list, tuple)) else expected
    got = got[0] if isinstance(got, (list, tuple)) else got
    torch.testing.assert_close(got, expected, rtol=1e-4, atol=1e-5)
    assert got.requires_grad == expected.requires_grad


@pytest.mark.parametrize("name", sorted(GRAPHS))
def test_remove_dropout_is_torchs(name):
    """torch's remove_dropout retraces: the SDK's pass gives its graph
    torch's, names included (make_fx's aten nodes renamed as the retrace
    names them)."""
    from torch.fx.experimental.optimization import remove_dropout
    gm, x = GRAPHS[name]
    expected = remove_dropout(gm)
    sdk = fx_sdk.from_torch_fx(gm)
    fx_sdk._C._run_pipeline(sdk, "remove_dropout", [], [fx_sdk.PLUGIN_DIR],
                            True, [x])
    back = fx_sdk.to_torch_fx(sdk)
    assert str(back.graph) == str(expected.graph)
    assert back.code == expected.code


class SharedWeightMatmuls(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.w = torch.nn.Parameter(torch.rand(4, 5))

    def forward(self, x):
        return torch.matmul(x, self.w) + torch.matmul(x.sin(), self.w)


@pytest.mark.parametrize("name", sorted(GRAPHS) + ["shared_weight_matmuls"])
def test_merge_matmul_is_torchs(name):
    """torch's merge_matmul retraces and merges: the SDK's pass gives its
    graph torch's, names included, which goes back to torch.fx and runs
    there with torch's numbers."""
    from torch.fx.experimental.merge_matmul import merge_matmul
    if name == "shared_weight_matmuls":
        gm, x = torch.fx.symbolic_trace(SharedWeightMatmuls()), \
            torch.randn(3, 4)
    else:
        gm, x = GRAPHS[name]
    expected = merge_matmul(gm)
    sdk = fx_sdk.from_torch_fx(gm)
    fx_sdk._C._run_pipeline(sdk, "merge_matmul", [], [fx_sdk.PLUGIN_DIR],
                            True, [x])
    back = fx_sdk.to_torch_fx(sdk)
    assert str(back.graph) == str(expected.graph)
    assert back.code == expected.code
    if name != "training_bn":  # its batch statistics change the buffers
        torch.manual_seed(7)
        want = expected(x.clone())
        torch.manual_seed(7)
        torch.testing.assert_close(back(x.clone()), want, rtol=0, atol=0)


def test_extract_subgraph_through_run_pipeline_is_torchs():
    """torchvision's feature-extraction cut of resnet18 (layer1's output to
    layer2's) by fx_sdk.run_pipeline equals torch's extract_subgraph: code,
    graph, the parameters kept, the numbers."""
    import torchvision
    from torch.fx.experimental.optimization import extract_subgraph
    torch.manual_seed(0)
    gm = torch.fx.symbolic_trace(torchvision.models.resnet18().eval())
    nodes = {n.name: n for n in gm.graph.nodes}
    ins, outs = [nodes["layer1_1_relu_1"]], [nodes["layer2_1_relu_1"]]
    seen, work = set(), list(outs)
    while work:
        n = work.pop()
        if n not in seen and n not in ins:
            seen.add(n)
            work.extend(n.all_input_nodes)
    expected = extract_subgraph(gm, [n for n in gm.graph.nodes if n in seen],
                                ins, outs)
    out, report = fx_sdk.run_pipeline(
        gm, "extract_subgraph{inputs=layer1_1_relu_1,outputs=layer2_1_relu_1}")
    assert report[0]["outcome"] == "ran", report
    assert out.code == expected.code
    assert str(out.graph) == str(expected.graph)
    assert sorted(out.state_dict()) == sorted(expected.state_dict())
    x = torch.randn(1, 64, 56, 56)
    torch.testing.assert_close(out(x), expected(x), rtol=0, atol=0)


def test_splitter_through_run_pipeline_is_torchs():
    """torch's _SplitterBase on resnet18 (convolutions and batch norms on the
    accelerator) and the SDK's splitter through fx_sdk.run_pipeline give the
    same main graph and code, the same submodules' code, the same numbers;
    the result goes back to torch.fx and runs there."""
    import torchvision
    from torch.fx.passes.operator_support import OperatorSupport
    from torch.fx.passes.splitter_base import _SplitterBase, _SplitterSettingBase
    torch.manual_seed(0)
    model = torchvision.models.resnet18().eval()
    x = torch.randn(1, 3, 64, 64)
    supported = ["torch.nn.modules.conv.Conv2d",
                 "torch.nn.modules.batchnorm.BatchNorm2d"]
    settings = _SplitterSettingBase()
    settings.min_acc_module_size = 2
    splitter = _SplitterBase(torch.fx.symbolic_trace(model), [x],
                             OperatorSupport({t: None for t in supported}),
                             settings)
    expected = splitter()
    out, report = fx_sdk.run_pipeline(
        torch.fx.symbolic_trace(model),
        "shape_prop,splitter{supported=" + ",".join(supported) +
        ",min_acc_module_size=2}", example_inputs=[x])
    assert [r["outcome"] for r in report] == ["ran", "ran"], report
    assert out.code == expected.code
    assert str(out.graph) == str(expected.graph)
    for tag in splitter.tags:
        assert getattr(out, tag).code == getattr(expected, tag).code, tag
    with torch.no_grad():
        torch.testing.assert_close(out(x), expected(x), rtol=0, atol=0)


def test_split_by_tags_through_run_pipeline_is_torchs():
    """torch's split_by_tags and the SDK's on a module whose halves are
    tagged: main graph, code, submodules' code, numbers."""
    from torch.fx.passes.split_utils import split_by_tags
    torch.manual_seed(0)
    model = Attributes()
    gm = torch.fx.symbolic_trace(model)
    names = [n.name for n in gm.graph.nodes if n.op.startswith("call")]
    front, back = names[:len(names) // 2], names[len(names) // 2:]
    for n in gm.graph.nodes:
        if n.op.startswith("call"):
            n.tag = "front" if n.name in front else "back"
    expected = split_by_tags(gm, ["front", "back"])
    out, report = fx_sdk.run_pipeline(
        torch.fx.symbolic_trace(model),
        "split_by_tags{tags=front,back,tag_nodes=front:" + "+".join(front) +
        ",back:" + "+".join(back) + "}")
    assert report[0]["outcome"] == "ran", report
    assert out.code == expected.code
    assert str(out.graph) == str(expected.graph)
    for tag in ("front", "back"):
        assert getattr(out, tag).code == getattr(expected, tag).code, tag
    x = torch.randn(3, 4)
    torch.testing.assert_close(out(x), expected(x), rtol=0, atol=0)
