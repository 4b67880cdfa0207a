"""Bundles written as a set (issue 34 item 3): each writer of bundles is
killed (SIGKILL, by strace's fault injection) at each rename and at each
write it makes in turn (the folder writers also at each mkdir, link and
unlink), while it replaces a bundle already there; after each kill what is
there is the old bundle, every file byte-identical, or the new one whole:
 - `fx run -o OUT` and `fx reduce -o OUT` (fx::write_graph_module): the
   graph at OUT loads and computes the old numbers with the old graph and
   the weights it names unchanged, or the new numbers;
 - fx::to_folder (to_folder_writer, a command around it; to_folder has no
   other caller outside the C++ API): every file of the package folder
   (module.py, state_dict.pt, the bundle, __init__.py, and a file of the
   user's kept in it) is the old package's, or every one the new one's;
 - tools/torchfx_export.py: likewise every file of its directory
   (graph.fx.json, the weights, input.pt, expected.pt, a file of the
   user's).
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


RENAMES = "rename,renameat,renameat2"
# What a folder writer does besides: its fresh directory, the files of the
# user's it keeps, the old folder's removal.
DIRECTORY_CALLS = "mkdir,mkdirat,link,linkat,unlink,unlinkat,rmdir"


def runfile(path):
    return os.path.join(os.environ.get("TEST_SRCDIR", ""),
                        os.environ.get("TEST_WORKSPACE", ""), path)


def strace(syscalls, n):
    """strace killing its command at the n-th of `syscalls`."""
    return ["strace", "-f", "-o", "/dev/null", "-e", f"trace={syscalls}",
            "-e", f"inject={syscalls}:signal=SIGKILL:when={n}"]


def writer_args(command, source, out):
    """`fx run` or `fx reduce` writing SOURCE's result to OUT."""
    if command == "run":
        return ["run", source, "--pipeline", "dce", "-o", out]
    # refuse_target fails while the linear node is there: the reduced
    # bundle is x -> linear -> output, with linear's weights.
    picky = runfile("tests/plugin_api/plugins/libpicky_plugin.so")
    if not os.path.isfile(picky):
        picky = "bazel-bin/tests/plugin_api/plugins/libpicky_plugin.so"
    return ["reduce", source, "--no-default-plugins", "--no-isolate",
            "--plugin", picky, "--pipeline", "refuse_target{target=linear}",
            "-o", out]


@pytest.mark.parametrize("command", ["run", "reduce"])
@pytest.mark.parametrize("syscalls", [RENAMES, "write"])
def test_a_killed_writer_leaves_the_old_bundle_or_the_new_one(tmp_path,
                                                               syscalls,
                                                               command):
    if shutil.which("strace") is None:
        pytest.fail("strace is missing (tools/setup.sh installs it)")
    a, b = make_inputs(tmp_path)
    probe = str(tmp_path / "probe" / "model.fx.json")
    r = fx(*writer_args(command, b, probe))
    assert r.returncode == 0, r.stderr
    new_numbers = outputs_of(probe, tmp_path)
    out = str(tmp_path / "out" / "model.fx.json")
    killed = 0
    for n in range(1, 200):
        shutil.rmtree(tmp_path / "out", ignore_errors=True)
        r = fx(*writer_args(command, a, out))
        assert r.returncode == 0, r.stderr
        before = snapshot(out)
        if n == 1:
            old_numbers = outputs_of(out, tmp_path)
            assert not torch.equal(old_numbers, new_numbers)
        r = subprocess.run([*strace(syscalls, n), fx_binary(),
                            *writer_args(command, b, out)],
                           capture_output=True, text=True, timeout=120)
        if r.returncode == 0:
            break
        assert r.returncode in (-9, 137), (r.returncode, r.stderr)
        killed += 1
        numbers, now = outputs_of(out, tmp_path), snapshot(out)
        where = f"fx {command} killed at {syscalls} #{n}"
        if now[0] == before[0]:  # the old graph: its weights untouched
            assert now[1] == before[1], where
            assert torch.equal(numbers, old_numbers), where
        else:  # the new graph: with its own weights
            assert torch.equal(numbers, new_numbers), where
    else:
        pytest.fail(f"fx {command} never finished")
    assert killed >= 2, killed
    assert torch.equal(outputs_of(out, tmp_path), new_numbers)


def folder_files(folder):
    """Every file of `folder`, by name: its bytes."""
    return {name: open(os.path.join(folder, name), "rb").read()
            for name in sorted(os.listdir(folder))}


def killed_writer_leftovers(parent, name, prefix, where):
    """Beside `name` in `parent`, at worst the writer's own directory."""
    for entry in os.listdir(parent):
        assert entry == name or entry.startswith(prefix), (where, entry)


def to_folder(source, folder, module_name, syscalls=None, n=0):
    """fx::to_folder of the bundle SOURCE into FOLDER (to_folder_writer)."""
    writer = runfile("tests/python/to_folder_writer")
    if not os.path.isfile(writer):
        writer = "bazel-bin/tests/python/to_folder_writer"
    return subprocess.run(
        [*(strace(syscalls, n) if syscalls else []), writer, source,
         str(folder), module_name], capture_output=True, text=True,
        timeout=120)


def package_outputs(parent, module_name, tmp_path):
    """What Python torch computes with the package `parent`/pkg."""
    script = (f"import sys, torch; sys.path.insert(0, {str(parent)!r}); "
              f"from pkg import {module_name}; m = {module_name}(); "
              f"x = torch.load({str(tmp_path / 'input.pt')!r}); "
              f"torch.save(m(*x), {str(tmp_path / 'py.pt')!r})")
    r = subprocess.run(["/usr/bin/python3", "-B", "-c", script],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    return torch.load(tmp_path / "py.pt")


@pytest.mark.parametrize("syscalls", [RENAMES, "write", DIRECTORY_CALLS])
def test_a_killed_to_folder_leaves_the_old_package_or_the_new_one(tmp_path,
                                                                  syscalls):
    """fx::to_folder replacing a package folder (holding a file of the
    user's, which stays) is killed at each call in turn."""
    if shutil.which("strace") is None:
        pytest.fail("strace is missing (tools/setup.sh installs it)")
    a, b = make_inputs(tmp_path)
    old_dir, new_dir = tmp_path / "old" / "pkg", tmp_path / "new" / "pkg"
    for source, folder, name in ((a, old_dir, "First"),
                                 (b, new_dir, "Second")):
        r = to_folder(source, folder, name)
        assert r.returncode == 0, r.stderr
        (folder / "notes.txt").write_text("the user's")
    old, new = folder_files(old_dir), folder_files(new_dir)
    assert sorted(old) == sorted(new) == [
        "__init__.py", "graph.fx.json", "model.weights.pt", "module.py",
        "notes.txt", "state_dict.pt"]
    for name in ("module.py", "state_dict.pt", "model.weights.pt"):
        assert old[name] != new[name], name
    # Both packages load, in C++ and in Python, with their own numbers.
    old_numbers = outputs_of(str(old_dir / "graph.fx.json"), tmp_path)
    new_numbers = outputs_of(str(new_dir / "graph.fx.json"), tmp_path)
    assert not torch.equal(old_numbers, new_numbers)
    assert torch.allclose(package_outputs(old_dir.parent, "First", tmp_path),
                          old_numbers)
    assert torch.allclose(package_outputs(new_dir.parent, "Second", tmp_path),
                          new_numbers)
    out = tmp_path / "out"
    killed = 0
    for n in range(1, 100):
        shutil.rmtree(out, ignore_errors=True)
        shutil.copytree(old_dir, out / "pkg")
        r = to_folder(b, out / "pkg", "Second", syscalls, n)
        if r.returncode == 0:
            break
        assert r.returncode in (-9, 137), (r.returncode, r.stderr)
        killed += 1
        where = f"to_folder killed at {syscalls} #{n}"
        now = folder_files(out / "pkg")
        assert now == old or now == new, (where, sorted(now))
        killed_writer_leftovers(out, "pkg", ".pkg.to_folder.", where)
    else:
        pytest.fail("to_folder never finished")
    assert killed >= 2, killed
    assert folder_files(out / "pkg") == new
    assert os.listdir(out) == ["pkg"]


EXPORTER = runfile("tools/torchfx_export.py")
MODEL = '''
import torch


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(4, 3)

    def forward(self, x):
        return self.lin(x).relu()
'''


def export(model_file, out, seed, syscalls=None, n=0, cwd=None):
    """torchfx_export.py's bundle of Net (weights from `seed`) into `out`."""
    exporter = os.path.abspath(EXPORTER if os.path.isfile(EXPORTER) else
                               "tools/torchfx_export.py")
    return subprocess.run(
        [*(strace(syscalls, n) if syscalls else []), "/usr/bin/python3", "-B",
         exporter, "--module", f"{model_file}:Net", "--input-shape", "2,4",
         "--seed", str(seed), "-o", out], capture_output=True, text=True,
        timeout=300, cwd=cwd)


@pytest.mark.parametrize("syscalls", [RENAMES, "write", DIRECTORY_CALLS])
def test_a_killed_exporter_leaves_the_old_bundle_or_the_new_one(tmp_path,
                                                                syscalls):
    """The Python writer of bundles: its directory (graph, weights,
    input.pt, expected.pt and a file of the user's) is the old export's
    or the new one's after each kill."""
    if shutil.which("strace") is None:
        pytest.fail("strace is missing (tools/setup.sh installs it)")
    model_file = tmp_path / "net.py"
    model_file.write_text(MODEL)
    x = torch.rand(2, 4)
    torch.save([x], tmp_path / "input.pt")
    files, numbers = {}, {}
    for seed in (1, 2):
        probe = tmp_path / f"probe{seed}"
        r = export(model_file, str(probe), seed)
        assert r.returncode == 0, r.stderr
        (probe / "notes.txt").write_text("the user's")
        files[seed] = folder_files(probe)
        numbers[seed] = outputs_of(str(probe / "graph.fx.json"), tmp_path)
    assert sorted(files[1]) == sorted(files[2]) == [
        "expected.pt", "graph.fx.json", "input.pt", "model.weights.pt",
        "notes.txt"]
    for name in ("expected.pt", "model.weights.pt"):
        assert files[1][name] != files[2][name], name
    assert not torch.equal(numbers[1], numbers[2])
    out = tmp_path / "out"
    killed = 0
    for n in range(1, 100):
        shutil.rmtree(out, ignore_errors=True)
        out.mkdir()
        shutil.copytree(tmp_path / "probe1", out / "bundle")
        r = export(model_file, str(out / "bundle"), 2, syscalls, n)
        if r.returncode == 0:
            break
        assert r.returncode in (-9, 137), (r.returncode, r.stderr)
        killed += 1
        where = f"the exporter killed at {syscalls} #{n}"
        now = folder_files(out / "bundle")
        assert now == files[1] or now == files[2], (where, sorted(now))
        killed_writer_leftovers(out, "bundle", ".bundle.export.", where)
        seed = 1 if now == files[1] else 2
        got = outputs_of(str(out / "bundle" / "graph.fx.json"), tmp_path)
        assert torch.equal(got, numbers[seed]), where
    else:
        pytest.fail("the exporter never finished")
    assert killed >= 2, killed
    assert folder_files(out / "bundle") == files[2]
    assert os.listdir(out) == ["bundle"]


def test_the_exporter_refuses_what_it_cannot_replace_as_a_whole(tmp_path):
    """A path that is not a directory (a symlink to nothing too, as
    fx::to_folder), a directory holding one of its own and the current
    directory are named in one line (no traceback), exit status 2, and left
    as they were."""
    model_file = tmp_path / "net.py"
    model_file.write_text(MODEL)
    (tmp_path / "file").write_text("mine")
    (tmp_path / "bundle" / "data").mkdir(parents=True)
    os.symlink("nowhere", tmp_path / "dangling")
    for out, why, cwd in (
            (tmp_path / "file", "exists and is not a directory", None),
            (tmp_path / "dangling", "exists and is not a directory", None),
            (tmp_path / "bundle", "holds the directory 'data'", None),
            (tmp_path, "is the current directory or holds it",
             tmp_path / "bundle" / "data")):
        r = export(model_file, str(out), 1, cwd=cwd)
        assert r.returncode == 2, (r.returncode, r.stderr)
        assert f"{out}: {why}" in r.stderr, r.stderr
        assert "Traceback" not in r.stderr, r.stderr
        assert len(r.stderr.strip().splitlines()) == 1, r.stderr
        assert r.stderr.startswith("torchfx_export.py: error: "), r.stderr
    assert (tmp_path / "file").read_text() == "mine"
    assert os.listdir(tmp_path / "bundle") == ["data"]
    assert os.readlink(tmp_path / "dangling") == "nowhere"
    assert sorted(os.listdir(tmp_path)) == ["bundle", "dangling", "file",
                                            "net.py"]
