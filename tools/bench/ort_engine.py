"""ONNX Runtime's CPU provider as a benchmark engine, for the suite
(suite_bench.py) and the dynamic-shape bench (dynamic_plan_bench.py).

A model is exported once with torch.onnx.export (export_onnx: opset 13, the
same weights as every other engine); OrtEngine runs it in a node process
(tools/bench/ort_runner.js, onnxruntime-node from setup_onnxruntime.sh) at a
given intra-op thread count, sequential execution, graph optimisation level
"all". Times are measured inside node around session.run alone (no pipe
time), as the other engines are timed around their call.
"""
import json
import os
import subprocess
import tempfile

import numpy
import torch

RUNNER = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                      "ort_runner.js")
DTYPES = {torch.float32: "float32", torch.int64: "int64"}


def version(node_path):
    """onnxruntime-node's version under NODE_PATH, or None."""
    try:
        path = os.path.join(node_path, "onnxruntime-node", "package.json")
        with open(path) as f:
            return json.load(f)["version"]
    except (OSError, ValueError, KeyError):
        return None


def export_onnx(model, example, path, dynamic_axes=None):
    """`model` on `example` as ONNX at `path` (input x, output y; the given
    axes of both dynamic)."""
    axes = {"dynamic_axes": {"x": dynamic_axes, "y": dynamic_axes}} \
        if dynamic_axes else {}
    with torch.no_grad():
        torch.onnx.export(model, example, path, input_names=["x"],
                          output_names=["y"], opset_version=13, **axes)


def shape_text(x):
    return "x".join(str(d) for d in x.shape)


class OrtEngine:
    """One ONNX model in ONNX Runtime at `threads` intra-op threads.
    timed(x): ms of a run on a random float32 input of x's shape; timed_on(x):
    ms of a run on x itself; output(x): the model's first output on x."""

    def __init__(self, onnx_path, threads, node_path):
        # Inputs and outputs passed as files (and the model, for exported()).
        self.dir = tempfile.TemporaryDirectory()
        self.files = {}  # id(x) -> (x, its raw file)
        self.proc = subprocess.Popen(
            ["node", RUNNER, onnx_path, str(threads)], stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, text=True,
            env={**os.environ, "NODE_PATH": node_path})

    @classmethod
    def exported(cls, model, example, threads, node_path, dynamic_axes=None):
        """An engine for `model`, exported (export_onnx) into a directory
        that lives as long as the engine."""
        folder = tempfile.TemporaryDirectory()
        path = os.path.join(folder.name, "model.onnx")
        export_onnx(model, example, path, dynamic_axes)
        engine = cls(path, threads, node_path)
        engine.model_dir = folder
        return engine

    def _run(self, line):
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()
        answer = self.proc.stdout.readline()
        if not answer:
            raise RuntimeError("ort_runner stopped (see its error above)")
        return float(answer)

    def _file_line(self, x):
        if x.dtype not in DTYPES:
            raise ValueError(f"ort_runner takes float32 or int64 inputs, "
                             f"not {x.dtype}")
        if id(x) not in self.files:
            path = os.path.join(self.dir.name, f"input{len(self.files)}.bin")
            x.contiguous().numpy().tofile(path)
            self.files[id(x)] = (x, path)
        return f"file {self.files[id(x)][1]} {DTYPES[x.dtype]} {shape_text(x)}"

    def timed(self, x):
        return self._run(shape_text(x))

    def timed_on(self, x):
        return self._run(self._file_line(x))

    def output(self, x):
        out = os.path.join(self.dir.name, "output.bin")
        self._run(f"{self._file_line(x)} {out}")
        return torch.from_numpy(numpy.fromfile(out, dtype=numpy.float32))

    def close(self):
        self.proc.stdin.close()
        self.proc.wait()
        self.dir.cleanup()
        if hasattr(self, "model_dir"):
            self.model_dir.cleanup()
