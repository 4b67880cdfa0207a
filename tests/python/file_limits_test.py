"""Files larger than the stated limit (issue 34 item 5): refused with their
size and the limit before anything is allocated, never std::bad_alloc's
abort. Sparse files of 64 GiB stand in for a stranger's huge file: graph
files, inputs and the weights a graph names, through the `fx` command; the
limit is raised with `--max-file-bytes` or $FX_MAX_FILE_BYTES.
"""

import json
import os
import subprocess

import torch

from fx_command import fx_binary

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
