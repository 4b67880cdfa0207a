"""Files larger than the stated limit (issue 34 item 5): refused with their
size and the limit before anything is allocated, never std::bad_alloc's
abort. Sparse files of 64 GiB stand in for a stranger's huge file: graph
files, inputs and the weights a graph names, through the `fx` command; the
limit is raised with `--max-file-bytes` or $FX_MAX_FILE_BYTES. The Python
importer (tools/torchfx_import.py, fx_sdk.torchfx_import) states the same
limit, checked with os.fstat on the open file before reading: a huge graph
JSON, weights file or inputs file is refused with its size and the limit
(exit status 2), the same environment variable and a --max-file-bytes
option set another.
"""

import contextlib
import io
import json
import os
import subprocess
import sys

import torch

from fx_command import fx_binary
from fx_sdk import torchfx_import

HUGE = 64 << 30
DEFAULT_LIMIT = 16 << 30


def identity_graph(weights=None):
    doc = {"format": "fx-graph", "version": 1, "nodes": [
        {"name": "x", "op": "placeholder", "target": "x", "args": [],
         "kwargs": {}},
        {"name": "output", "op": "output", "target": "output",
         "args": [{"node": "x"}], "kwargs": {}}]}
    if weights:
        doc["weights"] = weights
    return json.dumps(doc)


def sparse(path, size):
    with open(path, "wb") as f:
        f.truncate(size)
    return str(path)


def fx(*args, env=None):
    full_env = dict(os.environ)
    full_env.pop("FX_MAX_FILE_BYTES", None)
    full_env.update(env or {})
    return subprocess.run([fx_binary(), *args], capture_output=True,
                          text=True, env=full_env, timeout=120)


def refused_for_size(result, path, size, limit):
    assert result.returncode == 1, result.stderr
    assert (f"cannot read '{path}': {size} bytes is more than the limit of "
            f"{limit} bytes") in result.stderr, result.stderr


def test_a_huge_graph_file_is_refused(tmp_path):
    path = sparse(tmp_path / "huge.fx.json", HUGE)
    for command in ("print", "code", "tabular"):
        refused_for_size(fx(command, path), path, HUGE, DEFAULT_LIMIT)


def test_huge_inputs_and_weights_are_refused(tmp_path):
    graph = tmp_path / "g.fx.json"
    graph.write_text(identity_graph())
    inputs = sparse(tmp_path / "huge_inputs.pt", HUGE)
    out = tmp_path / "out.pt"
    result = fx("exec", str(graph), "--inputs", inputs, "--outputs", str(out))
    refused_for_size(result, inputs, HUGE, DEFAULT_LIMIT)
    assert not out.exists()
    weights = sparse(tmp_path / "huge.weights.pt", HUGE)
    with_weights = tmp_path / "w.fx.json"
    with_weights.write_text(identity_graph("huge.weights.pt"))
    small_inputs = tmp_path / "in.pt"
    torch.save([torch.ones(2)], small_inputs)
    result = fx("exec", str(with_weights), "--inputs", str(small_inputs),
                "--outputs", str(out))
    refused_for_size(result, weights, HUGE, DEFAULT_LIMIT)
    assert not out.exists()


def test_the_limit_is_an_option_and_an_environment_variable(tmp_path):
    graph = tmp_path / "g.fx.json"
    graph.write_text(identity_graph())
    size = graph.stat().st_size
    assert fx("print", str(graph)).returncode == 0
    refused_for_size(fx("--max-file-bytes", "100", "print", str(graph)),
                     str(graph), size, 100)
    refused_for_size(fx("print", str(graph), "--max-file-bytes=100"),
                     str(graph), size, 100)
    refused_for_size(fx("print", str(graph), env={"FX_MAX_FILE_BYTES": "50"}),
                     str(graph), size, 50)
    # The option wins over the environment, and may raise the limit.
    ok = fx("--max-file-bytes", str(size), "print", str(graph),
            env={"FX_MAX_FILE_BYTES": "50"})
    assert ok.returncode == 0, ok.stderr
    for bad in ("0", "-5", "lots", ""):
        result = fx("--max-file-bytes=" + bad, "print", str(graph))
        assert result.returncode == 2, result.stderr
        assert "--max-file-bytes needs a positive number of bytes" in \
            result.stderr


def importer(directory, *args, env=None):
    """torchfx_import's main() on DIR ARGS... in this process (each of its
    own processes would spend seconds importing torch), with
    $FX_MAX_FILE_BYTES as `env` says: (exit status, stderr). The limit is
    read from the environment at each file, as a process started with it
    would read it."""
    saved = os.environ.pop("FX_MAX_FILE_BYTES", None)
    os.environ.update(env or {})
    err = io.StringIO()
    try:
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(
                io.StringIO()):
            try:
                status = torchfx_import.main([str(directory), *args])
            except SystemExit as e:  # argparse's usage error
                status = e.code
    finally:
        os.environ.pop("FX_MAX_FILE_BYTES", None)
        if saved is not None:
            os.environ["FX_MAX_FILE_BYTES"] = saved
    return status, err.getvalue()


def importer_refused_for_size(result, path, size, limit):
    status, error = result
    assert status == 2, (status, error)
    assert (f"torchfx_import: cannot read '{path}': {size} bytes is more than "
            f"the limit of {limit} bytes (raise it with --max-file-bytes N or "
            f"FX_MAX_FILE_BYTES)") in error, error


def small_bundle(directory, weights=None):
    os.makedirs(directory, exist_ok=True)
    (directory / "graph.fx.json").write_text(identity_graph(weights))
    return directory


def test_the_importer_refuses_a_huge_graph_weights_and_inputs(tmp_path):
    graph_dir = tmp_path / "huge_graph"
    graph_dir.mkdir()
    graph = sparse(graph_dir / "graph.fx.json", HUGE)
    importer_refused_for_size(importer(graph_dir), graph, HUGE,
                              DEFAULT_LIMIT)
    weights_dir = small_bundle(tmp_path / "huge_weights", "w.pt")
    weights = sparse(weights_dir / "w.pt", HUGE)
    importer_refused_for_size(importer(weights_dir), weights, HUGE,
                              DEFAULT_LIMIT)
    inputs_dir = small_bundle(tmp_path / "huge_inputs")
    inputs = sparse(inputs_dir / "input.pt", HUGE)
    importer_refused_for_size(importer(inputs_dir), inputs, HUGE,
                              DEFAULT_LIMIT)
    # As a program too (python -m fx_sdk.torchfx_import), exit status 2.
    result = subprocess.run(
        [sys.executable, "-m", "fx_sdk.torchfx_import", str(graph_dir)],
        capture_output=True, text=True, timeout=120,
        env={k: v for k, v in os.environ.items() if k != "FX_MAX_FILE_BYTES"})
    importer_refused_for_size((result.returncode, result.stderr), graph, HUGE,
                              DEFAULT_LIMIT)


def test_the_importers_limit_is_the_environment_variable_and_an_option(
        tmp_path):
    directory = small_bundle(tmp_path / "b", "w.pt")
    torch.save({}, directory / "w.pt")
    torch.save([torch.ones(2)], directory / "input.pt")
    graph = str(directory / "graph.fx.json")
    graph_size = os.path.getsize(graph)
    weights = str(directory / "w.pt")
    weights_size = os.path.getsize(weights)
    assert graph_size < weights_size
    assert importer(directory)[0] == 0
    importer_refused_for_size(
        importer(directory, env={"FX_MAX_FILE_BYTES": str(graph_size - 1)}),
        graph, graph_size, graph_size - 1)
    # The graph fits, the weights it names do not.
    importer_refused_for_size(
        importer(directory, "--max-file-bytes", str(graph_size)),
        weights, weights_size, graph_size)
    # The option wins over the environment, and may raise the limit.
    largest = max(weights_size, os.path.getsize(directory / "input.pt"))
    status, error = importer(directory, "--max-file-bytes", str(largest),
                             env={"FX_MAX_FILE_BYTES": "50"})
    assert status == 0, error
    # Without the option again, the environment's limit holds.
    importer_refused_for_size(
        importer(directory, env={"FX_MAX_FILE_BYTES": "50"}),
        graph, graph_size, 50)
    # A value of the environment that is no positive integer is ignored,
    # as the fx command ignores it.
    for ignored in ("lots", "0", "-5", ""):
        status, error = importer(directory, env={"FX_MAX_FILE_BYTES": ignored})
        assert status == 0, (ignored, error)
    for bad in ("0", "-5", "lots"):
        status, error = importer(directory, "--max-file-bytes=" + bad)
        assert status == 2, error
        assert "needs a positive number of bytes" in error


def test_the_importer_refuses_a_fifo_without_blocking(tmp_path):
    directory = tmp_path / "fifo"
    directory.mkdir()
    fifo = directory / "graph.fx.json"
    os.mkfifo(fifo)
    status, error = importer(directory)
    assert status == 2, error
    assert f"cannot read '{fifo}': not a regular file (a FIFO)" in error
