"""torchvision's own torch.fx user, create_feature_extractor, on every
classification model torchvision 0.14 lists: the GraphModule it builds (its
NodePathTracer keeps torchvision.ops modules such as Conv2dNormActivation
and SqueezeExcitation as leaves, returns a dict of features) goes through
fx_sdk and comes back as torch.fx made it.

For each model, checked against torch.fx in the same process: the SDK's
graph text and code, the SDK's own run (every feature, rtol 1e-4 / atol
1e-5 against the extractor's), and to_torch_fx's GraphModule (text, code,
its run, the leaf modules the very same objects); through a bundle file, a
model whose modules are all torch.nn's prints and generates the same, and a
model with a Python leaf is refused naming it. Every expected value is
torch.fx's.

Heavy (about 80 models, some of them with hundreds of millions of
parameters): FX_FEATURE_MODELS=NAME,NAME... runs only those.
"""

import os
import subprocess

import pytest
import torch
import torch.fx
import torchvision
from torchvision.models.feature_extraction import (create_feature_extractor,
                                                    get_graph_node_names)

import fx_sdk
from fx_command import fx_binary
from fx_sdk import torchfx_export

# Models with a fixed input size (ViT's patch grid, MaxViT's windows) or a
# floor (Inception's stem); the rest take a small image.
INPUT_SIZE = {"inception_v3": 299, "maxvit_t": 224}
FIXED_224 = ("vit_", "swin_")


def model_names():
    names = torchvision.models.list_models(module=torchvision.models)
    only = os.environ.get("FX_FEATURE_MODELS")
    return [n for n in names if not only or n in only.split(",")]


def input_for(name):
    size = INPUT_SIZE.get(name)
    if size is None:
        size = 224 if name.startswith(FIXED_224) else 96
    return torch.rand(1, 3, size, size)


def return_nodes(model):
    """Five eval-mode nodes spread over the graph, the last included, as a
    user picks the stages they want."""
    _, nodes = get_graph_node_names(model)
    nodes = [n for n in nodes if n != "x"]
    picks = sorted({round(i * (len(nodes) - 1) / 4) for i in range(5)})
    return {nodes[i]: f"feature{k}" for k, i in enumerate(picks)}


def assert_features_equal(expected, got):
    assert isinstance(got, dict) and list(got) == list(expected)
    for key in expected:
        torch.testing.assert_close(got[key], expected[key], rtol=1e-4,
                                   atol=1e-5)


def leaf_paths(gm):
    """call_module targets whose module is not torch.nn's: the extractor's
    leaves that only Python can run."""
    return [n.target for n in gm.graph.nodes if n.op == "call_module" and
            not type(gm.get_submodule(n.target)).__module__.startswith(
                "torch.nn")]


@pytest.fixture(scope="module", params=model_names())
def extractor(request):
    name = request.param
    torch.manual_seed(0)
    model = getattr(torchvision.models, name)(weights=None).eval()
    try:
        gm = create_feature_extractor(model, return_nodes=return_nodes(model))
    except Exception as e:  # torch.fx's own limits (maxvit_t's iteration)
        pytest.skip(f"torch.fx cannot trace {name}: {type(e).__name__}: "
                    f"{str(e).splitlines()[0]}")
    with torch.no_grad():
        x = input_for(name)
        expected = gm(x)
    return name, gm, x, expected


def test_the_sdk_prints_generates_and_runs_as_torch_fx(extractor):
    name, gm, x, expected = extractor
    sdk_gm = fx_sdk.from_torch_fx(gm)
    assert sdk_gm.graph_text.replace("[num_users=", "[#users=") == str(
        gm.graph), name
    assert sdk_gm.code == gm.code, name
    with torch.no_grad():
        assert_features_equal(expected, sdk_gm(x))


def test_to_torch_fx_gives_back_the_extractor(extractor):
    name, gm, x, expected = extractor
    back = fx_sdk.to_torch_fx(fx_sdk.from_torch_fx(gm))
    assert str(back.graph) == str(gm.graph), name
    assert back.code == gm.code, name
    for path in leaf_paths(gm):
        assert back.get_submodule(path) is gm.get_submodule(path), path
    with torch.no_grad():
        assert_features_equal(expected, back(x))



def test_through_a_file_or_a_clear_refusal(extractor, tmp_path):
    name, gm, x, _ = extractor
    leaves = leaf_paths(gm)
    if leaves:
        # Python modules cannot go to a file: both writers say which.
        sdk_gm = fx_sdk.from_torch_fx(gm)
        for write in (lambda: fx_sdk._C._to_bundle(sdk_gm),
                      lambda: torchfx_export.graph_document(gm)):
            with pytest.raises(ValueError) as error:
                write()
            assert any(f"'{p}'" in str(error.value) for p in leaves), str(
                error.value)
        return
    torchfx_export.export(gm, [x], str(tmp_path), reference=True)
    bundle = str(tmp_path / "graph.fx.json")
    for command, reference in (("print", "graph.txt"), ("code", "code.py")):
        printed = subprocess.run([fx_binary(), command, bundle],
                                 capture_output=True, text=True, check=True)
        expected = (tmp_path / reference).read_text()
        if command == "print":  # torch 1.13's spelling, normalised
            printed_text = printed.stdout.replace("[num_users=", "[#users=")
            expected = expected.replace("[num_users=", "[#users=")
            assert printed_text == expected, name
        else:
            assert printed.stdout == gm.code, name
