"""Bundles written as a set (issue 34 item 3): `fx run -o OUT` is killed
(SIGKILL, by strace's fault injection) at each rename and at each write it
makes in turn, while it replaces a bundle already at OUT; after each kill
what is at OUT loads and computes either the old bundle's numbers, with the
old graph and the weights it names byte-identical, or the new bundle's.
"""

import json
import os
import shutil
import subprocess

import pytest
import torch

from fx_command import fx_binary


def reference_dir():
    """seed_mymodule of the reference folder (fx_sdk_test.sh finds it)."""
    root = os.environ.get("FX_SDK_REFERENCE", "../shared/reference")
    path = os.path.join(root, "seed_mymodule")
    if not os.path.isdir(path):
        pytest.fail(f"the reference graphs are missing ({path})")
    return path


def fx(*args):
    return subprocess.run([fx_binary(), *args], capture_output=True,
                          text=True, timeout=120)


def make_inputs(tmp_path):
    """Bundle a (the reference) and bundle b (its weights doubled)."""
    ref = reference_dir()
    for name in ("graph.fx.json", "model.weights.pt", "input.pt"):
        shutil.copy(os.path.join(ref, name), tmp_path / name)
    weights = torch.load(tmp_path / "model.weights.pt")
    torch.save({k: v * 2 for k, v in weights.items()}, tmp_path / "b.weights.pt")
    doc = json.loads((tmp_path / "graph.fx.json").read_text())
    doc["weights"] = "b.weights.pt"
    (tmp_path / "b.fx.json").write_text(json.dumps(doc))
    return str(tmp_path / "graph.fx.json"), str(tmp_path / "b.fx.json")


def outputs_of(bundle, tmp_path):
    out = tmp_path / "result.pt"
    if out.exists():
        out.unlink()
    r = fx("exec", bundle, "--inputs", str(tmp_path / "input.pt"),
           "--outputs", str(out))
    assert r.returncode == 0, r.stderr
    return torch.load(out)


def snapshot(graph):
    """The graph's bytes and the bytes of the weights file it names."""
    text = open(graph, "rb").read()
    weights = json.loads(text).get("weights")
    folder = os.path.dirname(graph)
    return text, open(os.path.join(folder, weights), "rb").read()


def killed_run(source, out, syscalls, n):
    """fx run SOURCE -o OUT, SIGKILLed at the n-th of `syscalls`."""
    inject = f"inject={syscalls}:signal=SIGKILL:when={n}"
    return subprocess.run(
        ["strace", "-f", "-o", "/dev/null", "-e", f"trace={syscalls}", "-e",
         inject, fx_binary(), "run", source, "--pipeline", "dce", "-o", out],
        capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("syscalls", ["rename,renameat,renameat2", "write"])
def test_a_killed_writer_leaves_the_old_bundle_or_the_new_one(tmp_path,
                                                               syscalls):
    if shutil.which("strace") is None:
        pytest.fail("strace is missing (tools/setup.sh installs it)")
    a, b = make_inputs(tmp_path)
    old_numbers, new_numbers = outputs_of(a, tmp_path), outputs_of(b, tmp_path)
    assert not torch.equal(old_numbers, new_numbers)
    out = str(tmp_path / "out" / "model.fx.json")
    killed = 0
    for n in range(1, 200):
        shutil.rmtree(tmp_path / "out", ignore_errors=True)
        r = fx("run", a, "--pipeline", "dce", "-o", out)
        assert r.returncode == 0, r.stderr
        before = snapshot(out)
        r = killed_run(b, out, syscalls, n)
        if r.returncode == 0:
            break
        assert r.returncode in (-9, 137), (r.returncode, r.stderr)
        killed += 1
        numbers, now = outputs_of(out, tmp_path), snapshot(out)
        where = f"killed at {syscalls} #{n}"
        if now[0] == before[0]:  # the old graph: its weights untouched
            assert now[1] == before[1], where
            assert torch.equal(numbers, old_numbers), where
        else:  # the new graph: with its own weights
            assert torch.equal(numbers, new_numbers), where
    else:
        pytest.fail("fx run never finished")
    assert killed >= 2, killed
    assert torch.equal(outputs_of(out, tmp_path), new_numbers)


EXPORTER = os.path.join(os.environ.get("TEST_SRCDIR", ""),
                        os.environ.get("TEST_WORKSPACE", ""), "tools",
                        "torchfx_export.py")
MODEL = '''
import torch


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(4, 3)

    def forward(self, x):
        return self.lin(x).relu()
'''


def export(model_file, out, seed, strace=()):
    """torchfx_export.py's bundle of Net (weights from `seed`) into `out`."""
    exporter = EXPORTER if os.path.isfile(EXPORTER) else "tools/torchfx_export.py"
    return subprocess.run(
        [*strace, "/usr/bin/python3", exporter, "--module",
         f"{model_file}:Net", "--input-shape", "2,4", "--seed", str(seed),
         "-o", out], capture_output=True, text=True, timeout=300)


def test_a_killed_exporter_leaves_the_old_bundle_or_the_new_one(tmp_path):
    """The Python writer of bundles, killed at each rename as fx run is."""
    if shutil.which("strace") is None:
        pytest.fail("strace is missing (tools/setup.sh installs it)")
    model_file = tmp_path / "net.py"
    model_file.write_text(MODEL)
    x = torch.rand(2, 4)
    torch.save([x], tmp_path / "input.pt")
    numbers = {}
    for seed in (1, 2):
        probe = str(tmp_path / f"probe{seed}")
        assert export(model_file, probe, seed).returncode == 0
        numbers[seed] = outputs_of(os.path.join(probe, "graph.fx.json"),
                                   tmp_path)
    assert not torch.equal(numbers[1], numbers[2])
    out = str(tmp_path / "out")
    graph = os.path.join(out, "graph.fx.json")
    syscalls = "rename,renameat,renameat2"
    killed = 0
    for n in range(1, 50):
        shutil.rmtree(out, ignore_errors=True)
        assert export(model_file, out, 1).returncode == 0
        before = snapshot(graph)
        strace = ["strace", "-f", "-o", "/dev/null", "-e", f"trace={syscalls}",
                  "-e", f"inject={syscalls}:signal=SIGKILL:when={n}"]
        r = export(model_file, out, 2, strace)
        if r.returncode == 0:
            break
        killed += 1
        got, now = outputs_of(graph, tmp_path), snapshot(graph)
        if now[0] == before[0]:
            assert now[1] == before[1], f"killed at rename #{n}"
            assert torch.equal(got, numbers[1]), f"killed at rename #{n}"
        else:
            assert torch.equal(got, numbers[2]), f"killed at rename #{n}"
    else:
        pytest.fail("the exporter never finished")
    assert killed >= 2, killed
    assert torch.equal(outputs_of(graph, tmp_path), numbers[2])
    assert sorted(f for f in os.listdir(out) if "weights" in f) == \
        ["model.weights.1.pt"]
