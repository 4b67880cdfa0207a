#!/usr/bin/python3
"""PyTorch's own int8 quantization arithmetic on a bundle: the golden for the
quantize plugin.

    quantize_golden.py TORCHFX_IMPORT_PY BUNDLE_DIR MODE OUT.pt

Rebuilds the bundle as a torch.fx GraphModule and, for every Linear / Conv2d
(modules, and F.linear / F.conv2d of a get_attr weight):
  weights  weight -> torch.quantize_per_channel(int8, symmetric, axis 0, with
           scales from torch.ao's PerChannelMinMaxObserver over [-127, 127])
           -> dequantize
  dynamic  the same, and the input -> torch.quantize_per_tensor_dynamic
           (quint8) -> dequantize
  static   the same weights, and the input -> torch.quantize_per_tensor with
           the qparams of torch.ao's MinMaxObserver (quint8, per tensor
           affine) calibrated on DIR/input.pt -> dequantize
then saves the module's output on DIR/input.pt.
"""

import importlib.util
import os
import sys

import torch
import torch.fx
from torch.ao.quantization.observer import MinMaxObserver, PerChannelMinMaxObserver


def sites(gm):
    out = []
    for n in gm.graph.nodes:
        if n.op == "call_module":
            m = gm.get_submodule(n.target)
            if type(m) in (torch.nn.Linear, torch.nn.Conv2d):
                out.append((n, n.target + ".weight"))
        elif n.op == "call_function":
            name = getattr(n.target, "__name__", "")
            if name in ("linear", "conv2d") and len(n.args) > 1 and \
                    isinstance(n.args[1], torch.fx.Node) and n.args[1].op == "get_attr":
                out.append((n, n.args[1].target))
    return out


def fake_quant_weight(w):
    obs = PerChannelMinMaxObserver(ch_axis=0, dtype=torch.qint8,
                                   qscheme=torch.per_channel_symmetric,
                                   quant_min=-127, quant_max=127)
    obs(w)
    scale, zero_point = obs.calculate_qparams()
    return torch.quantize_per_channel(w, scale.float(), zero_point, 0,
                                      torch.qint8).dequantize()


def main():
    spec = importlib.util.spec_from_file_location("torchfx_import", sys.argv[1])
    importer = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(importer)
    bundle, mode, out = sys.argv[2], sys.argv[3], sys.argv[4]
    gm = importer.load_bundle(bundle)
    gm.eval()
    inputs = torch.load(os.path.join(bundle, "input.pt"))
    found = sites(gm)
    ranges = {}
    if mode == "static":
        observers = {n: MinMaxObserver(dtype=torch.quint8,
                                       qscheme=torch.per_tensor_affine)
                     for n, _ in found}
        wanted = {n.args[0]: n for n, _ in found}

        class Calibrate(torch.fx.Interpreter):
            def run_node(self, node):
                value = super().run_node(node)
                for site, _ in found:
                    if site.args[0] is node:
                        observers[site](value)
                return value

        with torch.no_grad():
            Calibrate(gm).run(*inputs)
        ranges = {n: observers[n].calculate_qparams() for n, _ in found}
    with torch.no_grad():
        for n, weight in found:
            owner, _, leaf = weight.rpartition(".")
            module = gm.get_submodule(owner) if owner else gm
            w = getattr(module, leaf)
            w.copy_(fake_quant_weight(w))
    graph = gm.graph
    for n, _ in found:
        if mode == "weights":
            continue
        x = n.args[0]
        with graph.inserting_before(n):
            if mode == "dynamic":
                q = graph.call_function(torch.quantize_per_tensor_dynamic,
                                        (x, torch.quint8, False))
            else:
                scale, zero_point = ranges[n]
                q = graph.call_function(torch.quantize_per_tensor,
                                        (x, float(scale), int(zero_point),
                                         torch.quint8))
            dq = graph.call_method("dequantize", (q,))
        n.replace_input_with(x, dq)
    gm.recompile()
    with torch.no_grad():
        torch.save(gm(*inputs), out)


if __name__ == "__main__":
    main()
