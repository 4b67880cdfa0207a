"""Attribute kinds and requires_grad against torch.fx on the same graphs
(issue 40, items 4 and 5): every way a torch.fx GraphModule's tensors go
through the SDK keeps what each one is (a parameter with its requires_grad,
a buffer, persistent or not, a plain tensor attribute), and what the SDK
computes requires grad exactly where torch.fx's does:

- in process: fx_sdk.from_torch_fx / to_torch_fx, the SDK's run;
- through files: tools/torchfx_export.py's bundle, read and written again by
  the C++ loader (`fx run`), rebuilt by tools/torchfx_import.py;
- shape_prop's tensor_meta['requires_grad'] against torch.fx's ShapeProp
  (grad mode on, as torch.fx runs it), on real inputs and on shapes alone.

Each model is a class of case: a module with buffers (BatchNorm's running
statistics), a tensor set with setattr, a frozen parameter (get_attr and a
module's), a trainable one, a non-persistent buffer. torch.fx computes every
expected answer here. Run by fx_sdk_test.sh under /usr/bin/python3.
"""

import json
import os
import subprocess

import pytest
import torch
import torch.fx
from torch.fx.passes.shape_prop import ShapeProp

import fx_sdk
from fx_command import fx_binary
from fx_sdk import torchfx_export, torchfx_import


class WithBatchNorm(torch.nn.Module):
    """A module's buffers (running_mean, running_var, num_batches_tracked)
    beside a trainable Linear."""

    def __init__(self):
        super().__init__()
        self.linear = torch.nn.Linear(4, 4)
        self.bn = torch.nn.BatchNorm1d(4)

    def forward(self, x):
        return self.bn(self.linear(x))


class WithGetAttrTensors(torch.nn.Module):
    """get_attr tensors of every kind: trainable and frozen parameters, a
    buffer and a tensor set with setattr (torch.fx's constructor makes it a
    buffer), and a Linear whose weight is frozen."""

    def __init__(self):
        super().__init__()
        self.trainable = torch.nn.Parameter(torch.randn(4))
        self.frozen = torch.nn.Parameter(torch.randn(4), requires_grad=False)
        self.register_buffer("shift", torch.randn(4))
        self.scale = torch.randn(4)  # neither parameter nor buffer
        self.linear = torch.nn.Linear(4, 4)
        self.linear.weight.requires_grad_(False)

    def forward(self, x):
        y = x * self.scale + self.shift
        z = self.linear(y * self.frozen)
        return z, y, z + self.trainable


class FrozenOnly(torch.nn.Module):
    """Nothing requires grad: no output may."""

    def __init__(self):
        super().__init__()
        self.linear = torch.nn.Linear(4, 3)
        for p in self.linear.parameters():
            p.requires_grad_(False)
        self.bias = torch.nn.Parameter(torch.ones(3), requires_grad=False)

    def forward(self, x):
        return torch.relu(self.linear(x)) + self.bias


def traced(cls):
    torch.manual_seed(0)
    return torch.fx.symbolic_trace(cls())


def with_plain_and_non_persistent():
    """A GraphModule holding a plain tensor attribute and a non-persistent
    buffer, as a user's setattr / register_buffer(persistent=False) on a
    traced module leaves them."""
    gm = traced(WithGetAttrTensors)
    scale = gm.scale
    del gm._buffers["scale"]
    object.__setattr__(gm, "scale", scale)  # a plain attribute
    gm.register_buffer("shift", gm.shift, persistent=False)
    assert "scale" not in dict(gm.named_buffers())
    return gm


MODELS = {
    "batch_norm": lambda: traced(WithBatchNorm),
    "get_attr_kinds": lambda: traced(WithGetAttrTensors),
    "plain_and_non_persistent": with_plain_and_non_persistent,
    "frozen_only": lambda: traced(FrozenOnly),
}


def attribute_kinds(gm):
    """What each tensor of gm is: parameters with requires_grad, buffers
    with whether state_dict holds them, and the plain tensor attributes the
    graph reads."""
    state = gm.state_dict()
    plain = {}
    for node in gm.graph.nodes:
        if node.op != "get_attr":
            continue
        owner_path, _, leaf = node.target.rpartition(".")
        owner = gm.get_submodule(owner_path)
        if (leaf not in owner._parameters and leaf not in owner._buffers
                and isinstance(getattr(owner, leaf), torch.Tensor)):
            plain[node.target] = getattr(owner, leaf).requires_grad
    return {
        "parameters": {k: p.requires_grad for k, p in gm.named_parameters()},
        "buffers": {k: k in state for k, _ in gm.named_buffers()},
        "plain": plain,
    }


def flat(value):
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, (tuple, list)):
        return [t for v in value for t in flat(v)]
    return []


def expect_same_outputs(got, want):
    got, want = flat(got), flat(want)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.requires_grad == w.requires_grad
        torch.testing.assert_close(g.detach(), w.detach())


@pytest.fixture(params=sorted(MODELS))
def model(request):
    return request.param


@pytest.fixture
def gm(model):
    return MODELS[model]()


def test_in_process_round_trip_keeps_kinds(gm):
    back = fx_sdk.to_torch_fx(fx_sdk.from_torch_fx(gm))
    assert attribute_kinds(back) == attribute_kinds(gm)
    x = torch.randn(2, 4)
    expect_same_outputs(back(x), gm(x))


def test_sdk_run_requires_grad_as_torch_fx(gm):
    x = torch.randn(2, 4)
    expect_same_outputs(fx_sdk.from_torch_fx(gm)(x), gm(x))


def test_pipeline_keeps_kinds(gm):
    out, report = fx_sdk.run_pipeline(gm, "dce")
    assert report[-1]["outcome"] == "ran", report
    assert attribute_kinds(out) == attribute_kinds(gm)



def write_bundle(gm, directory):
    """gm as tools/torchfx_export.py writes it."""
    document, weights = torchfx_export.graph_document(gm)
    document["weights"] = "model.weights.pt"
    torch.save(weights, os.path.join(directory, "model.weights.pt"))
    with open(os.path.join(directory, "graph.fx.json"), "w") as f:
        json.dump(document, f, indent=1)


def test_bundle_through_the_cpp_loader_keeps_kinds(gm, tmp_path):
    fx = fx_binary()
    (tmp_path / "in").mkdir()
    (tmp_path / "out").mkdir()
    write_bundle(gm, tmp_path / "in")
    subprocess.run([fx, "run", str(tmp_path / "in" / "graph.fx.json"),
                    "--pipeline", "dce", "-o",
                    str(tmp_path / "out" / "graph.fx.json")], check=True)
    back = torchfx_import.load_bundle(str(tmp_path / "out"))
    assert attribute_kinds(back) == attribute_kinds(gm)
    x = torch.randn(2, 4)
    expect_same_outputs(back(x), gm(x))


def test_bundle_without_kinds_loads_as_before(tmp_path):
    """A file written before "weight_kinds": get_attr tensors that can be
    parameters are trainable ones."""
    gm = traced(WithGetAttrTensors)
    document, weights = torchfx_export.graph_document(gm)
    del document["weight_kinds"]
    back = torchfx_import.build_graph_module(document, weights)
    params = dict(back.named_parameters())
    assert params["frozen"].requires_grad and params["scale"].requires_grad
    sdk_back = fx_sdk.to_torch_fx(fx_sdk.from_torch_fx(back))
    assert attribute_kinds(sdk_back) == attribute_kinds(back)


def shape_prop_requires_grad(gm, *inputs):
    """node name -> requires_grad of each tensor ShapeProp records."""
    ShapeProp(gm).propagate(*inputs)
    return requires_grad_by_node(gm)


def requires_grad_by_node(gm):
    def of(meta):
        if hasattr(meta, "requires_grad"):
            return bool(meta.requires_grad)
        if isinstance(meta, dict) and "requires_grad" in meta:
            return bool(meta["requires_grad"])
        if isinstance(meta, (tuple, list)):
            return [of(m) for m in meta]
        return None
    return {n.name: of(n.meta["tensor_meta"]) for n in gm.graph.nodes
            if "tensor_meta" in n.meta}


def test_shape_prop_requires_grad_as_torch_fx(model):
    x = torch.randn(2, 4)
    want = shape_prop_requires_grad(MODELS[model](), x)
    gm = MODELS[model]()
    out, report = fx_sdk.run_pipeline(gm, "shape_prop", example_inputs=[x])
    assert report[-1]["outcome"] == "ran", report
    assert requires_grad_by_node(out) == want
    # On shapes alone (meta tensors).
    out, report = fx_sdk.run_pipeline(gm, "shape_prop{shapes=2x4}")
    assert report[-1]["outcome"] == "ran", report
    assert requires_grad_by_node(out) == want
