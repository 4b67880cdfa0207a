#!/usr/bin/python3
"""The Python twins of sdk_examples/capture's C++ models, captured by make_fx.

    capture_twins.py OUT_DIR [NAME ...] [--meta]

For every NAME (default: all of resnet18, mobilenet_v2, small_transformer)
writes OUT_DIR/NAME/:
    model.weights.pt  the model's state dict (torch.save of a dict)
    input.pt          the example inputs (a list)
    expected.pt       the eager model's output on them (a list)
    MODE/graph.txt    print(gm.graph) of make_fx, in the docs' num_users form
    MODE/code.py      gm.code
for MODE in grad, no_grad, inference_mode, and with --meta also meta (the
model and its input on the meta device). Models are in eval mode; the seed is
fixed, so the files are the same on every run.
"""
import math
import os
import sys

import torch
import torch.nn.functional as F
from torch.fx.experimental.proxy_tensor import make_fx


class Block(torch.nn.Module):
    """A pre-norm transformer block: causal multi-head self-attention and a
    GELU feed-forward, each added back to its input."""

    def __init__(self, dim, heads, hidden, max_len):
        super().__init__()
        self.heads = heads
        self.ln1 = torch.nn.LayerNorm(dim)
        self.qkv = torch.nn.Linear(dim, 3 * dim)
        self.proj = torch.nn.Linear(dim, dim)
        self.ln2 = torch.nn.LayerNorm(dim)
        self.fc1 = torch.nn.Linear(dim, hidden)
        self.fc2 = torch.nn.Linear(hidden, dim)
        self.register_buffer(
            "mask", torch.triu(torch.ones(max_len, max_len), 1).bool())

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).chunk(3, -1)
        q = q.view(b, t, self.heads, d // self.heads).transpose(1, 2)
        k = k.view(b, t, self.heads, d // self.heads).transpose(1, 2)
        v = v.view(b, t, self.heads, d // self.heads).transpose(1, 2)
        att = torch.matmul(q, k.transpose(-2, -1)) * (1.0 / math.sqrt(d // self.heads))
        att = att.masked_fill(self.mask[:t, :t], float("-inf"))
        att = torch.softmax(att, -1)
        y = torch.matmul(att, v).transpose(1, 2).reshape(b, t, d)
        x = x + self.proj(y)
        return x + self.fc2(F.gelu(self.fc1(self.ln2(x))))


class SmallTransformer(torch.nn.Module):
    """Token ids in, next-token logits out."""

    def __init__(self, vocab=64, dim=32, heads=4, hidden=64, layers=2,
                 max_len=16):
        super().__init__()
        self.embed = torch.nn.Embedding(vocab, dim)
        self.pos = torch.nn.Parameter(torch.randn(max_len, dim) * 0.02)
        self.blocks = torch.nn.ModuleList(
            [Block(dim, heads, hidden, max_len) for _ in range(layers)])
        self.norm = torch.nn.LayerNorm(dim)
        self.head = torch.nn.Linear(dim, vocab)

    def forward(self, ids):
        x = self.embed(ids) + self.pos[: ids.size(1)]
        for block in self.blocks:
            x = block(x)
        return self.head(self.norm(x))


def make_model(name):
    if name == "small_transformer":
        return SmallTransformer(), lambda: [torch.randint(0, 64, (2, 8))]
    import torchvision
    model = getattr(torchvision.models, name)()
    return model, lambda: [torch.randn(1, 3, 64, 64)]


def write_graph(gm, case_dir):
    os.makedirs(case_dir, exist_ok=True)
    with open(os.path.join(case_dir, "graph.txt"), "w") as f:
        f.write(str(gm.graph).replace("[#users=", "[num_users=") + "\n")
    with open(os.path.join(case_dir, "code.py"), "w") as f:
        f.write(gm.code)


def export(name, out_dir, meta):
    torch.manual_seed(0)
    model, make_inputs = make_model(name)
    model.eval()
    inputs = make_inputs()
    case_dir = os.path.join(out_dir, name)
    os.makedirs(case_dir, exist_ok=True)
    torch.save(dict(model.state_dict()),
               os.path.join(case_dir, "model.weights.pt"))
    torch.save(inputs, os.path.join(case_dir, "input.pt"))
    with torch.no_grad():
        torch.save([model(*inputs)], os.path.join(case_dir, "expected.pt"))
    fn = lambda *args: [model(*args)]
    for mode, guard in (("grad", torch.enable_grad),
                        ("no_grad", torch.no_grad),
                        ("inference_mode", torch.inference_mode)):
        with guard():
            write_graph(make_fx(fn)(*inputs), os.path.join(case_dir, mode))
    if meta:
        model.to("meta")
        meta_inputs = [t.to("meta") for t in inputs]
        write_graph(make_fx(fn)(*meta_inputs), os.path.join(case_dir, "meta"))


def main(argv):
    meta = "--meta" in argv
    args = [a for a in argv if a != "--meta"]
    names = args[1:] or ["resnet18", "mobilenet_v2", "small_transformer"]
    for name in names:
        export(name, args[0], meta)


if __name__ == "__main__":
    main(sys.argv[1:])
