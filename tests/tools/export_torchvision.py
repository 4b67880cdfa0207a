#!/usr/bin/python3
"""Exports models for the conformance tests.

    export_torchvision.py OUT_DIR NAME...

NAME is a torchvision classification model (resnet50), a model of another
torchvision family (video.r3d_18, segmentation.fcn_resnet50,
quantization.googlenet: built untrained, with no pretrained backbone and,
for the quantizable ones, quantize=False), or sample.CLASS, a model of
tests/tools/sample_models.py (run on its example_inputs()). Each is traced
with torch.fx in eval mode, and the bundle and torch.fx's own text
(graph.txt, code.py) are written to OUT_DIR/NAME via
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

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sample_models  # noqa: E402

# Inputs the models accept (Inception needs 299x299; S3D's final pooling
# needs 16 frames of 224x224); small where the model allows it.
INPUT_SHAPE = {
    "inception_v3": (1, 3, 299, 299),
    "quantization.inception_v3": (1, 3, 299, 299),
    "video.s3d": (1, 3, 16, 224, 224),
}
FAMILY_SHAPE = {"video": (1, 3, 4, 64, 64), "segmentation": (1, 3, 96, 96)}


def build(name):
    """The model NAME and its example inputs."""
    family, _, short = name.rpartition(".")
    if family == "sample":
        model = getattr(sample_models, short)()
        return model, model.example_inputs()
    if not family:
        model = getattr(torchvision.models, name)()
    else:
        kwargs = {"weights": None}
        if family == "segmentation":
            kwargs["weights_backbone"] = None
        if family == "quantization":
            kwargs["quantize"] = False
        model = getattr(getattr(torchvision.models, family), short)(**kwargs)
    shape = INPUT_SHAPE.get(name, FAMILY_SHAPE.get(family, (1, 3, 224, 224)))
    return model, [torch.rand(*shape)]


def main(out_dir, names):
    for name in names:
        start = time.time()
        target = os.path.join(out_dir, name)
        os.makedirs(target, exist_ok=True)
        torch.manual_seed(0)
        model, inputs = build(name)
        model.eval()
        try:
            gm = torch.fx.symbolic_trace(model)
        except Exception as e:  # torch.fx's TraceError and friends
            with open(os.path.join(target, "untraceable.txt"), "w") as f:
                f.write(f"{type(e).__name__}: {str(e).splitlines()[0]}\n")
            print(f"{name}: untraceable ({time.time() - start:.1f} s)")
            continue
        torchfx_export.export(gm, inputs, target, reference=True)
        print(f"{name}: exported ({time.time() - start:.1f} s)", flush=True)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2:])
