#!/usr/bin/python3
"""Exports torchvision classification models for the conformance test.

    export_torchvision.py OUT_DIR NAME...

For each NAME, traces torchvision.models.NAME() with torch.fx and writes the
bundle and torch.fx's own text (graph.txt, code.py) to OUT_DIR/NAME via
tools/torchfx_export.py. A model torch.fx cannot trace gets
OUT_DIR/NAME/untraceable.txt with torch.fx's error instead. Prints one line
per model with the seconds it took.
"""
import os
import sys
import time
import warnings

import torch
import torch.fx
import torchvision.models

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "tools"))
import torchfx_export  # noqa: E402

warnings.filterwarnings("ignore")

# Inputs the models accept (Inception needs 299x299).
INPUT_SIZE = {"inception_v3": 299}


def main(out_dir, names):
    for name in names:
        start = time.time()
        target = os.path.join(out_dir, name)
        os.makedirs(target, exist_ok=True)
        torch.manual_seed(0)
        model = getattr(torchvision.models, name)().eval()
        try:
            gm = torch.fx.symbolic_trace(model)
        except Exception as e:  # torch.fx's TraceError and friends
            with open(os.path.join(target, "untraceable.txt"), "w") as f:
                f.write(f"{type(e).__name__}: {str(e).splitlines()[0]}\n")
            print(f"{name}: untraceable ({time.time() - start:.1f} s)")
            continue
        size = INPUT_SIZE.get(name, 224)
        torchfx_export.export(gm, [torch.rand(1, 3, size, size)], target,
                              reference=True)
        print(f"{name}: exported ({time.time() - start:.1f} s)", flush=True)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2:])
