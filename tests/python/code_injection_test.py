"""Nothing executable from data (issue 34, item 1): a bundle whose strings
carry Python (targets, node and parameter names, types, module types and
paths, keyword names) in every injection form -- semicolons, line breaks,
quotes, calls, dunder attributes, __import__, f-strings, Unicode
look-alikes, a trailing backslash -- is refused by every `fx` command that
reads, prints, generates or runs code (fx_commands(), `fx plugin-check`
included) and by the Python importer (tools/torchfx_import.py), with an
error naming the node or module and the field; and no statement of it
runs: a canary file the payload would `touch` is never made. The importer
also reads weights with torch.load(weights_only=True) (a pickle's code
never runs) and builds objects only by lookup in modules a file may name
(os.system, builtins.eval, torch.hub.load: refused).

Why this covers forms x fields x commands without running all ~720 `fx`
processes (each starts LibTorch: over a second on 2 cores): the strings are
refused in one place, the graph reader (fx_core/format), which every
command calls before it does anything with them, per field and whatever
the form. So each factor is covered by every pair, as a covering array of
strength 2:
  - forms x fields: in process by the C++ reader's own test
    (tests/fx_core/format/code_injection_test.cc), here by the importer
    (in process) and through the installed `fx` binary by one `fx
    plugin-check` process that reads all 72 bundles
    (test_every_form_in_every_field_is_refused_by_the_importer_and_fx);
  - forms x commands and fields x commands: every command is given every
    form, form f of command c in field (c + f) mod 8, so that the same 9
    runs per command also give it every field (9 forms >= 8 fields, and 10
    commands >= 8 fields: every form also meets every field)
    (test_every_command_refuses_every_form_and_every_field).
A command that skipped the reader, or its checks for one form or one
field, fails a pair; a miss confined to one (form, field, command) triple
would need a command to re-check one field's text differently for one
form, which no command does (they share the reader). The runs of a test
go in parallel, one per CPU.

Run by fx_sdk_test.sh under /usr/bin/python3.
"""

import contextlib
import io
import json
import os
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

import pytest
import torch

from fx_command import fx_binary
from fx_sdk import torchfx_import

REFERENCE = os.environ.get("FX_SDK_REFERENCE", "../shared/reference")
SEED = os.path.join(REFERENCE, "seed_mymodule")


def payload(canary):
    return f"__import__('os').system('touch {canary}')"


def forms(canary):
    """Each injection form, as a function of the legit text it replaces."""
    p = payload(canary)
    return {
        "semicolon": lambda t: f"{t};{p}",
        "newline": lambda t: f"{t}\n{p}",
        "call": lambda t: f"{t}({p})or {t}",
        "quotes": lambda t: f'{t}"), {p.replace(chr(39), chr(34))}, ("',
        "dunder": lambda t: "__import__",
        "dunder attribute": lambda t: f"{t}.__class__",
        "f-string": lambda t: f'f"{{{p}}}"',
        "look-alike": lambda t: "\uff45\uff56\uff41\uff4c",  # fullwidth eval
        "backslash": lambda t: f"{t}\\",
    }


def node(doc, name):
    return next(n for n in doc["nodes"] if n["name"] == name)


def set_kwarg_key(doc, text):
    node(doc, "clamp")["kwargs"] = {text: 0.0}


# field -> (where its error must point, how the text goes in, legit text)
FIELDS = {
    "call_function target": (
        ["node 'add'", "target"],
        lambda d, t: node(d, "add").__setitem__("target", t), "torch.relu"),
    "call_method target": (
        ["node 'clamp'", "target"],
        lambda d, t: node(d, "clamp").__setitem__("target", t), "clamp"),
    "get_attr target": (
        ["node 'param'", "target"],
        lambda d, t: node(d, "param").__setitem__("target", t), "param"),
    "call_module target": (
        ["node 'linear'", "target"],
        lambda d, t: node(d, "linear").__setitem__("target", t), "linear"),
    "placeholder target": (
        ["node 'x'", "target"],
        lambda d, t: node(d, "x").__setitem__("target", t), "x"),
    "type": (
        ["node 'x'", "type"],
        lambda d, t: node(d, "x").__setitem__("type", t), "torch.Tensor"),
    "kwargs key": (["node 'clamp'", "kwargs"], set_kwarg_key, "min"),
    "module type": (
        ["module 'linear'", "type"],
        lambda d, t: d["modules"]["linear"].__setitem__("type", t),
        "torch.nn.Linear"),
}


def write_bundle(directory, edit=None):
    """seed_mymodule's bundle in `directory`, its graph edited by `edit`."""
    os.makedirs(directory, exist_ok=True)
    for f in ("graph.fx.json", "model.weights.pt", "input.pt", "expected.pt"):
        shutil.copy(os.path.join(SEED, f), directory)
    path = os.path.join(directory, "graph.fx.json")
    with open(path) as f:
        doc = json.load(f)
    if edit is not None:
        edit(doc)
    with open(path, "w") as f:
        json.dump(doc, f, indent=1)
    return path


def passes_plugin():
    """The first-party plugin libfx_passes.so beside the fx binary's tools/
    (in its runfiles, or bazel-bin)."""
    return os.path.join(os.path.dirname(os.path.dirname(fx_binary())),
                        "plugins", "libfx_passes.so")


def fx_commands(path, out):
    """Every `fx` command that reads a bundle and prints, generates or runs
    its code (`fx plugin-check` reads the bundles of a directory)."""
    inputs = os.path.join(os.path.dirname(path), "input.pt")
    return {
        "print": ["print", path],
        "tabular": ["tabular", path],
        "code": ["code", path],
        "code cpp": ["code", "--lang=cpp", path],
        "dot": ["dot", path, "-o", out + ".dot"],
        "exec": ["exec", path, "--inputs", inputs, "--outputs", out + ".pt"],
        "run": ["run", path, "--pipeline", "dce", "-o", out + ".fx.json"],
        "reduce": ["reduce", path, "--pipeline", "dce", "-o",
                   out + ".reduced.fx.json"],
        "minimize": ["minimize", path, "--inputs", inputs, "--pipeline",
                     "dce"],
        "plugin-check": ["plugin-check", passes_plugin(), "--graphs",
                         os.path.dirname(path), "--pass", "dce"],
    }


COMMANDS = list(fx_commands("g.fx.json", "out"))


def parallel(function, items):
    """function(item) for each item, one process-running thread per CPU (at
    most 4)."""
    workers = max(1, min(4, len(os.sched_getaffinity(0))))
    with ThreadPoolExecutor(max_workers=workers) as pool:
        return list(pool.map(function, items))


def refusal(command, result):
    """(refused, its message) for `fx COMMAND`'s result: a non-zero exit
    status and stderr (`fx plugin-check` names every bundle whose graph does
    not load, and checks nothing)."""
    return result.returncode != 0, result.stderr


def fx(args):
    return subprocess.run([fx_binary(), *args], capture_output=True,
                          text=True, errors="replace")


def import_in_process(directory):
    """torchfx_import's main() on `directory`: (exit status, stderr)."""
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(
            io.StringIO()):
        status = torchfx_import.main([directory])
    return status, err.getvalue()


def assert_refused(status, error, place, canary, what):
    assert status != 0, f"{what}: accepted: {error}"
    for word in place:
        assert word in error, f"{what}: {error!r} does not name {word}"
    assert not os.path.exists(canary), f"{what}: the payload ran"


def test_the_legit_bundle_goes_through_every_command(tmp_path):
    path = write_bundle(str(tmp_path / "b"))
    commands = fx_commands(path, str(tmp_path / "out"))
    names = [n for n in commands if n not in ("reduce", "minimize")]
    # (reduce and minimize need a failing pipeline)
    for name, result in zip(names, parallel(lambda n: fx(commands[n]),
                                            names)):
        assert result.returncode == 0, (name, result.stderr)
    assert import_in_process(str(tmp_path / "b"))[0] == 0


def bundle_name(field, form):
    return f"{field}--{form}".replace(" ", "_")


def test_every_form_in_every_field_is_refused_by_the_importer_and_fx(
        tmp_path):
    """forms x fields: the importer in process, and the fx binary's reader
    in one `fx plugin-check` process over a directory of all 72 bundles,
    which names each bundle whose graph does not load with its refusal (the
    node and the field) and checks nothing."""
    canary = str(tmp_path / "PWNED")
    graphs = tmp_path / "graphs"
    for field, (place, put, legit) in FIELDS.items():
        for form, make in forms(canary).items():
            directory = str(graphs / bundle_name(field, form))
            write_bundle(directory, lambda d: put(d, make(legit)))
            status, error = import_in_process(directory)
            assert_refused(status, error, place, canary,
                           f"torchfx_import, {field}, {form}")
    result = fx(["plugin-check", passes_plugin(), "--graphs", str(graphs),
                 "--pass", "dce"])
    refused, report = refusal("plugin-check", result)
    assert refused, report
    total = len(FIELDS) * len(forms(canary))
    assert f"{total} of {total} graphs do not load:" in report, report
    lines = {line.split(": the graph does not load: ")[0]: line
             for line in report.splitlines()
             if ": the graph does not load: " in line}
    for field, (place, _, _) in FIELDS.items():
        for form in forms(canary):
            line = lines.get(str(graphs / bundle_name(field, form)))
            assert line, f"fx plugin-check: {field}, {form} not named"
            for word in place:
                assert word in line, f"{line!r} does not name {word}"
    assert "dce " not in result.stdout, "fx plugin-check checked something"
    assert not os.path.exists(canary), "fx plugin-check: the payload ran"


@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_refuses_every_form_and_every_field(command, tmp_path):
    """Form f of forms() in field (c + f) mod 8 of FIELDS, c the command's
    place in fx_commands(): over the commands, every form meets every
    command and every field, and every field every command."""
    canary = str(tmp_path / "PWNED")
    fields = sorted(FIELDS)
    c = COMMANDS.index(command)
    runs = []
    for f, (form, make) in enumerate(forms(canary).items()):
        field = fields[(c + f) % len(fields)]
        place, put, legit = FIELDS[field]
        directory = str(tmp_path / bundle_name(field, form))
        path = write_bundle(directory, lambda d: put(d, make(legit)))
        args = fx_commands(path, os.path.join(directory, "out"))[command]
        runs.append((field, form, place, args))
    results = parallel(lambda run: fx(run[3]), runs)
    for (field, form, place, _), result in zip(runs, results):
        refused, error = refusal(command, result)
        assert_refused(1 if refused else 0, error, place, canary,
                       f"fx {command}, {field}, {form}")


def test_the_covering_design_meets_every_pair():
    """The design above: each (form, command), (field, command) and
    (form, field) pair is run."""
    fields = sorted(FIELDS)
    form_names = list(forms("x"))
    triples = {(form, fields[(c + f) % len(fields)], command)
               for c, command in enumerate(COMMANDS)
               for f, form in enumerate(form_names)}
    assert {(a, c) for a, _, c in triples} == {
        (a, c) for a in form_names for c in COMMANDS}
    assert {(b, c) for _, b, c in triples} == {
        (b, c) for b in fields for c in COMMANDS}
    assert {(a, b) for a, b, _ in triples} == {
        (a, b) for a in form_names for b in fields}


def test_the_importer_as_a_program_refuses_and_runs_nothing(tmp_path):
    canary = str(tmp_path / "PWNED")
    directory = str(tmp_path / "b")
    write_bundle(directory, lambda d: node(d, "add").__setitem__(
        "target", forms(canary)["semicolon"]("torch.relu")))
    result = subprocess.run(
        [sys.executable, "-m", "fx_sdk.torchfx_import", directory],
        capture_output=True, text=True)
    assert result.returncode == 2, result.stderr
    assert "node 'add': field 'target'" in result.stderr
    assert not os.path.exists(canary)


class _Touch:
    """A pickle that runs `touch` when loaded without weights_only."""

    def __init__(self, canary):
        self.canary = canary

    def __reduce__(self):
        return (os.system, (f"touch {self.canary}",))


@pytest.mark.parametrize("name", ["model.weights.pt", "input.pt",
                                  "expected.pt"])
def test_a_pickle_with_code_is_refused_unrun(name, tmp_path):
    canary = str(tmp_path / "PWNED")
    directory = str(tmp_path / "b")
    write_bundle(directory)
    torch.save(_Touch(canary), os.path.join(directory, name))
    status, error = import_in_process(directory)
    assert status == 2, error
    assert name in error and "weights_only" in error
    assert not os.path.exists(canary)


class _FloatThenTouch:
    """A float first (BINFLOAT, an opcode torch 1.13's weights_only
    unpickler lacks, which sends the importer to its restricted fallback),
    then a call of os.system."""

    def __init__(self, canary):
        self.canary = canary

    def __reduce__(self):
        return (os.system, (f"touch {self.canary}",))


@pytest.mark.parametrize("name", ["model.weights.pt", "input.pt"])
def test_the_fallback_unpickler_refuses_code_too(name, tmp_path):
    canary = str(tmp_path / "PWNED")
    directory = str(tmp_path / "b")
    write_bundle(directory)
    torch.save([1.5, _FloatThenTouch(canary)], os.path.join(directory, name))
    status, error = import_in_process(directory)
    assert status == 2, error
    assert name in error and "Unsupported class posix.system" in error, error
    assert not os.path.exists(canary)


# Well-formed names of objects that run code, or of modules a file may not
# name: the graph would run `touch` when the importer runs it on input.pt.
DANGEROUS_TARGETS = [
    "os.system", "subprocess.getoutput", "builtins.eval", "builtins.exec",
    "builtins.compile", "builtins.open", "torch.os.system", "torch.hub.load",
    "torch.load", "torch.functional.torch.hub.load", "operator.call",
    "posix.system", "torch.serialization.pickle.loads",
    "torch.ops.load_library", "torch.utils.cpp_extension.load_inline",
    "torch.fx.graph_module._exec_with_source",
]


@pytest.mark.parametrize("target", DANGEROUS_TARGETS)
def test_targets_that_run_code_are_refused(target, tmp_path):
    canary = str(tmp_path / "PWNED")
    directory = str(tmp_path / "b")

    def edit(doc):
        add = node(doc, "add")
        add["target"] = target
        add["args"] = [f"touch {canary}"]

    write_bundle(directory, edit)
    status, error = import_in_process(directory)
    assert status == 2, error
    assert "node 'add'" in error and target in error
    assert not os.path.exists(canary)


def test_modules_that_are_not_modules_are_refused(tmp_path):
    directory = str(tmp_path / "b")
    write_bundle(directory, lambda d: d["modules"]["linear"].__setitem__(
        "type", "torch.relu"))
    status, error = import_in_process(directory)
    assert status == 2
    assert "module 'linear': torch.relu is not a torch.nn.Module class" in error


def test_getattr_of_a_dunder_attribute_is_refused(tmp_path):
    directory = str(tmp_path / "b")

    def edit(doc):
        add = node(doc, "add")
        add["target"] = "builtins.getattr"
        add["args"] = [{"node": "x"}, "__class__"]

    write_bundle(directory, edit)
    status, error = import_in_process(directory)
    assert status == 2
    assert "node 'add': args[1]: '__class__' is a dunder attribute" in error


def test_a_module_beside_the_bundle_is_never_imported(tmp_path, monkeypatch):
    canary = str(tmp_path / "PWNED")
    directory = str(tmp_path / "b")
    with open(tmp_path / "planted_module.py", "w") as f:
        f.write(f"import os\nos.system('touch {canary}')\ndef f(x): return x\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    write_bundle(directory, lambda d: node(d, "add").__setitem__(
        "target", "planted_module.f"))
    status, error = import_in_process(directory)
    assert status == 2
    assert "planted_module.f does not exist (or is in a module a file may " \
        "not name" in error
    assert not os.path.exists(canary)
    assert "planted_module" not in sys.modules


def test_names_torch_fx_writes_still_resolve():
    import operator
    for name, obj in [("operator.add", operator.add),
                      ("builtins.getattr", getattr),
                      ("torch.relu", torch.relu),
                      ("torch.nn.functional.relu",
                       torch.nn.functional.relu),
                      ("torch.ops.aten.add.Tensor", torch.ops.aten.add.Tensor),
                      ("torch._C._nn.linear", torch._C._nn.linear),
                      ("math.sqrt", __import__("math").sqrt),
                      ("torch.float32", torch.float32),
                      ("torch.nn.Linear", torch.nn.Linear),
                      (f"{__name__}._Touch", _Touch)]:
        assert torchfx_import.resolve(name, "test") is obj, name
