"""Named pipelines (issue 37 item 5; host/pipeline/named_pipelines.h):
O1, O2 and inference by name through fx_sdk.run_pipeline and the fx command
(fx pipelines, fx run --pipeline NAME, fx exec --optimize): each runs the
passes it lists (the printed or returned list and the graph), gives torch
eager's numbers on torchvision's resnet18, and an unknown name or a missing
plugin is refused naming what is wrong. fx_sdk.compile's default pipeline is
in compile_test.py. Run by fx_sdk_test.sh under /usr/bin/python3."""

import json
import logging
import os
import subprocess

import pytest
import torch
import torch.fx

import fx_sdk
from fx_command import fx_binary
from fx_sdk import torchfx_export

INFERENCE = ["shape_prop", "fold_bn", "fuse_conv", "fuse_linear",
             "fuse_matmul", "fuse_window_attention", "fuse_pointwise"]
O1 = ["dce", "cse"]
NAMED = {"O1": O1, "O2": O1 + INFERENCE, "inference": INFERENCE}
# The inference passes' tolerance on resnet18 (tests/plugins:inference_test).
TOLERANCE = dict(rtol=1e-4, atol=1e-5)


def resnet18():
    import torchvision.models
    torch.manual_seed(0)
    return torchvision.models.resnet18().eval(), torch.rand(1, 3, 224, 224)


class Redundant(torch.nn.Module):
    """A dead product and a repeated relu: what O1 removes."""

    def forward(self, x):
        unused = x * 2  # noqa: F841 (traced, then dead)
        return torch.relu(x) + torch.relu(x)


def targets(gm):
    return [str(n.target) for n in gm.graph.nodes]


def module_types(gm):
    """The classes of the modules gm's call_module nodes call."""
    return [type(gm.get_submodule(n.target)).__name__
            for n in gm.graph.nodes if n.op == "call_module"]


def ran(report):
    return [r["pass"] for r in report if r["outcome"] == "ran"]


# ------------------------------------------------------- fx_sdk.run_pipeline

@pytest.mark.parametrize("name", sorted(NAMED))
def test_run_pipeline_runs_each_named_pipelines_passes(name, caplog):
    model, x = resnet18()
    gm = torch.fx.symbolic_trace(model)
    with caplog.at_level(logging.INFO, logger="fx_sdk"):
        out, report = fx_sdk.run_pipeline(gm, name, example_inputs=[x])
    assert [r["pass"] for r in report] == NAMED[name]
    assert ran(report) == NAMED[name]
    assert (f"pipeline {name}: ran {', '.join(NAMED[name])}"
            in caplog.text), caplog.text
    folded = "fold_bn" in NAMED[name]
    # BatchNorm folded into the convolutions, which became fused ops.
    assert ("BatchNorm2d" in module_types(out)) != folded
    assert any("fx_inference.conv2d" in t for t in targets(out)) == folded
    assert "BatchNorm2d" in module_types(gm)  # gm itself is left as it was
    with torch.no_grad():
        torch.testing.assert_close(out(x), model(x), **TOLERANCE)


def test_o1_removes_dead_code_and_common_subexpressions_exactly():
    gm = torch.fx.symbolic_trace(Redundant())
    assert sum("relu" in t for t in targets(gm)) == 2
    before = [n.op for n in gm.graph.nodes]
    out, report = fx_sdk.run_pipeline(gm, "O1")
    assert ran(report) == O1
    assert all(r["changed"] for r in report)
    ops = [n.op for n in out.graph.nodes]
    assert len(ops) == len(before) - 2  # the product and one relu gone
    assert sum("relu" in t for t in targets(out)) == 1
    assert not any("mul" in t for t in targets(out))
    x = torch.randn(3, 4)
    torch.testing.assert_close(out(x), Redundant()(x), rtol=0, atol=0)


def test_run_pipeline_refuses_an_unknown_name_naming_the_known_ones():
    gm = torch.fx.symbolic_trace(Redundant())
    with pytest.raises(ValueError) as error:
        fx_sdk.run_pipeline(gm, "O3")
    message = str(error.value)
    assert message.startswith("unknown pass 'O3' (known passes: "), message
    assert message.endswith("; 'O3' is no named pipeline either (named "
                            "pipelines: O1, O2, inference)"), message
    with pytest.raises(ValueError, match=r"the named pipeline 'O2' takes no "
                       r"options \(it stands for dce,cse,shape_prop,"):
        fx_sdk.run_pipeline(gm, "O2{level=3}")


def test_a_named_pipeline_without_its_plugin_names_the_pass_and_plugin():
    gm = torch.fx.symbolic_trace(Redundant())
    only_passes = [os.path.join(fx_sdk.PLUGIN_DIR, "libfx_passes.so")]
    out, report = fx_sdk.run_pipeline(gm, "O1", plugins=only_passes,
                                      default_plugins=False)
    assert ran(report) == O1
    with pytest.raises(ValueError) as error:
        fx_sdk.run_pipeline(gm, "O2", plugins=only_passes,
                            default_plugins=False)
    assert str(error.value).startswith(
        "the named pipeline 'O2' needs pass 'shape_prop' of plugin "
        "fx_shape_prop (libfx_shape_prop.so), which is not loaded: unknown "
        "pass 'shape_prop' (known passes: "), str(error.value)


# ----------------------------------------------------------- the fx command

def fx(*args):
    return subprocess.run([fx_binary(), *args], capture_output=True,
                          text=True)


@pytest.fixture(scope="module")
def bundle(tmp_path_factory):
    """resnet18 as a bundle (torchfx_export), its input file and eager's
    output."""
    model, x = resnet18()
    out_dir = str(tmp_path_factory.mktemp("resnet18"))
    torchfx_export.export(torch.fx.symbolic_trace(model), [x], out_dir)
    with torch.no_grad():
        want = model(x)
    return os.path.join(out_dir, "graph.fx.json"), os.path.join(
        out_dir, "input.pt"), want


def graph_targets(path):
    """Each node's target and, for call_module, its module's type."""
    with open(path) as f:
        document = json.load(f)
    modules = document["modules"]
    return [modules[n["target"]]["type"] if n["op"] == "call_module"
            else str(n.get("target", "")) for n in document["nodes"]]


def test_fx_pipelines_lists_every_name():
    r = fx("pipelines")
    assert r.returncode == 0, r.stderr
    assert r.stderr == ""
    lines = r.stdout.splitlines()
    assert [line.split(":")[0] for line in lines if not line.startswith(" ")
            ] == ["O1", "O2", "inference"]
    for name, passes in NAMED.items():
        at = lines.index(next(line for line in lines
                              if line.startswith(name + ":")))
        assert lines[at + 1] == "  passes: " + ",".join(passes)
        engine = "graph_module" if name == "O1" else "inference_plan"
        assert lines[at + 2] == "  engine: " + engine
    listed = fx("plugins")
    assert listed.returncode == 0, listed.stderr
    assert listed.stdout.endswith(
        "named pipelines (fx pipelines lists their passes): O1, O2, "
        "inference\n")


def test_fx_run_inference_folds_and_fuses(bundle, tmp_path):
    graph, inputs, want = bundle
    out = str(tmp_path / "inference.fx.json")
    r = fx("run", graph, "--pipeline", "inference", "--inputs", inputs,
           "-o", out)
    assert r.returncode == 0, r.stderr
    assert r.stderr == ("fx run: named pipeline inference: ran "
                        + ", ".join(INFERENCE) + "\n")
    before, after = graph_targets(graph), graph_targets(out)
    assert "torch.nn.BatchNorm2d" in before
    assert "torch.nn.BatchNorm2d" not in after
    assert any("fx_inference.conv2d" in t for t in after), after
    # The optimised bundle runs to eager's numbers (here on the
    # GraphModule engine: the fused ops are host ops too).
    outputs = str(tmp_path / "out.pt")
    r = fx("exec", out, "--inputs", inputs, "--outputs", outputs)
    assert r.returncode == 0, r.stderr
    torch.testing.assert_close(torch.load(outputs), want, **TOLERANCE)


def test_fx_run_refuses_an_unknown_name(bundle, tmp_path):
    graph, _, _ = bundle
    out = str(tmp_path / "unknown.fx.json")
    r = fx("run", graph, "--pipeline", "O3", "-o", out)
    assert r.returncode == 2
    assert r.stderr.startswith("fx run: unknown pass 'O3' (known passes: ")
    assert r.stderr.endswith("; 'O3' is no named pipeline either (named "
                             "pipelines: O1, O2, inference)\n"), r.stderr
    assert not os.path.exists(out)


@pytest.mark.parametrize("how", [["--optimize"], ["--pipeline", "O2"],
                                 ["--pipeline", "O1"]])
def test_fx_exec_optimize_and_named_pipelines(bundle, tmp_path, how):
    graph, inputs, want = bundle
    outputs = str(tmp_path / "out.pt")
    r = fx("exec", graph, "--inputs", inputs, "--outputs", outputs,
           "--repeat", "1", *how)
    assert r.returncode == 0, r.stderr
    name = "inference" if how == ["--optimize"] else how[1]
    assert r.stderr == (f"fx exec: named pipeline {name}: ran "
                        + ", ".join(NAMED[name]) + "\n")
    # The name's engine, --engine not given.
    engine = "graph_module" if name == "O1" else "inference_plan"
    assert r.stdout.startswith(engine + ": 1 runs, "), r.stdout
    torch.testing.assert_close(torch.load(outputs), want, **TOLERANCE)


def test_fx_exec_engine_and_usage_errors(bundle, tmp_path):
    graph, inputs, want = bundle
    outputs = str(tmp_path / "engine.pt")
    r = fx("exec", graph, "--inputs", inputs, "--outputs", outputs,
           "--optimize", "--engine", "interpreter", "--repeat", "1")
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("interpreter: 1 runs, "), r.stdout
    torch.testing.assert_close(torch.load(outputs), want, **TOLERANCE)
    r = fx("exec", graph, "--inputs", inputs, "--outputs", outputs,
           "--optimize", "--pipeline", "dce")
    assert r.returncode == 2
    assert r.stderr == ("fx exec: --optimize runs the named pipeline "
                        "'inference'; give it or --pipeline, not both\n")
    r = fx("exec", graph, "--inputs", inputs, "--outputs", outputs,
           "--pipeline", "fast")
    assert r.returncode == 2
    assert r.stderr.startswith("fx exec: unknown pass 'fast' (known passes: ")
    assert r.stderr.endswith("(named pipelines: O1, O2, inference)\n")
