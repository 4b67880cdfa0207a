"""A transformer-like model for the partitioning suites (torch.fx traces it
whole: no leaf but its Linear and LayerNorm modules)."""

import torch


class Block(torch.nn.Module):
    """A transformer-like encoder block: attention with q, k, v from one
    projection (chunk and getitem), softmax, residuals, layer norms, an MLP."""

    def __init__(self, d=16, heads=2):
        super().__init__()
        self.heads = heads
        self.qkv = torch.nn.Linear(d, 3 * d)
        self.proj = torch.nn.Linear(d, d)
        self.norm1 = torch.nn.LayerNorm(d)
        self.norm2 = torch.nn.LayerNorm(d)
        self.fc1 = torch.nn.Linear(d, 4 * d)
        self.fc2 = torch.nn.Linear(4 * d, d)

    def forward(self, x):
        qkv = self.qkv(self.norm1(x)).chunk(3, dim=-1)
        q, k, v = qkv[0], qkv[1], qkv[2]
        scores = torch.matmul(q, k.transpose(-2, -1)) / 4.0
        attn = torch.softmax(scores, dim=-1)
        x = x + self.proj(torch.matmul(attn, v))
        h = torch.nn.functional.gelu(self.fc1(self.norm2(x)))
        return x + self.fc2(h)


class Transformer(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = torch.nn.Sequential(Block(), Block(), Block())

    def forward(self, x):
        return self.blocks(x)
