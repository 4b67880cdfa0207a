#!/usr/bin/python3
"""The accuracy of the SDK's static int8 pipeline against PyTorch's
convert_fx on torchvision's models (issue 33's goal: end-to-end SQNR no
more than 1 dB below PyTorch's, calibrated on the same inputs).

Random weights make some models' activations vanish (mobilenet_v2's reach
1e-7), which says nothing of quantization, so each model's BatchNorm
statistics are first recomputed from random batches (train-mode forwards,
cumulative average): every layer then sees activations of unit scale, as a
trained network's do. Both quantizers calibrate on the same --calibration
random batches; the SQNR of each against float is measured on a held-out
random batch, with the share of agreeing top-1 classes.

    PYTHONPATH=bazel-bin/python /usr/bin/python3 tools/bench/int8_accuracy.py \\
        [--models resnet18,googlenet,...] [--observer minmax|histogram]
"""
import argparse
import copy
import json
import os
import sys

import torch
import torchvision

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from int8_bench import quantized, sdk_quantized, sqnr  # noqa: E402

MODELS = ("resnet18,resnet50,mobilenet_v2,mobilenet_v3_small,googlenet,"
          "inception_v3,densenet121,efficientnet_b0,regnet_x_400mf,"
          "mnasnet0_5,squeezenet1_0,vgg11,convnext_tiny")


def with_batch_statistics(model, shape, batches=4):
    for m in model.modules():
        if isinstance(m, torch.nn.modules.batchnorm._BatchNorm):
            m.reset_running_stats()
            m.momentum = None
    model.train()
    with torch.no_grad():
        for _ in range(batches):
            model(torch.randn(4, *shape[1:]))
    return model.eval()


def first(value):
    return value[0] if isinstance(value, tuple) else value


def measure(name, calibration_batches, observer):
    torch.manual_seed(0)
    kwargs = {"aux_logits": False, "init_weights": True} if name in (
        "googlenet", "inception_v3") else {}
    size = 299 if name == "inception_v3" else 224
    x = torch.randn(1, 3, size, size)
    model = with_batch_statistics(
        getattr(torchvision.models, name)(**kwargs), x.shape)
    calibration = [torch.randn(4, 3, size, size)
                   for _ in range(calibration_batches)]
    theirs = quantized(model, x, calibration)
    ours = sdk_quantized(model, x, calibration, observer)
    held_out = torch.randn(8, 3, size, size)
    with torch.no_grad():
        want = first(model(held_out))
        got, their = first(ours(held_out)), first(theirs(held_out))
    top1 = lambda v: float((v.argmax(1) == want.argmax(1)).float().mean())
    return {"model": name, "SDK SQNR": round(sqnr(want, got), 1),
            "PyTorch SQNR": round(sqnr(want, their), 1),
            "SDK top-1 agreement": top1(got),
            "PyTorch top-1 agreement": top1(their)}


def main(argv):
    parser = argparse.ArgumentParser()
    parser.add_argument("--models", default=MODELS)
    parser.add_argument("--calibration", type=int, default=4)
    parser.add_argument("--observer", default="minmax")
    args = parser.parse_args(argv)
    torch.backends.quantized.engine = "onednn"
    for name in args.models.split(","):
        print(json.dumps(measure(name, args.calibration, args.observer)),
              flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
