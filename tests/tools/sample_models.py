"""Models outside torchvision's classification set, for the model
conformance test: what users write, traced by torch.fx as they are.

Each class has example_inputs() giving the inputs the test runs it on.
"""
import math

import torch
import torch.nn.functional as F
from torch import nn


class CausalSelfAttention(nn.Module):
    """GPT-2 style attention written out: qkv projection, causal mask."""

    def __init__(self, dim, heads, context):
        super().__init__()
        self.heads = heads
        self.dim = dim
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        # A frozen parameter rather than a buffer: torch.fx records a
        # get_attr for it, so it can be sliced by a traced length.
        self.mask = nn.Parameter(torch.tril(torch.ones(context, context)).view(
            1, 1, context, context), requires_grad=False)

    def forward(self, x):
        b, t, c = x.size(0), x.size(1), self.dim
        parts = self.qkv(x).split(c, dim=2)
        q, k, v = parts[0], parts[1], parts[2]
        q = q.view(b, t, self.heads, c // self.heads).transpose(1, 2)
        k = k.view(b, t, self.heads, c // self.heads).transpose(1, 2)
        v = v.view(b, t, self.heads, c // self.heads).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        att = att.masked_fill(self.mask[:, :, :t, :t] == 0, float("-inf"))
        att = F.softmax(att, dim=-1)
        y = (att @ v).transpose(1, 2).contiguous().view(b, t, c)
        return self.proj(y)


class Block(nn.Module):
    def __init__(self, dim, heads, context):
        super().__init__()
        self.ln1 = nn.LayerNorm(dim)
        self.attn = CausalSelfAttention(dim, heads, context)
        self.ln2 = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(),
                                 nn.Linear(4 * dim, dim), nn.Dropout(0.1))

    def forward(self, x):
        x = x + self.attn(self.ln1(x))
        return x + self.mlp(self.ln2(x))


class GptDecoder(nn.Module):
    """A small GPT-style decoder: token and position embeddings, causal
    blocks written out, nn.TransformerEncoderLayer blocks with a causal
    mask, tied output head, log-probabilities."""

    def __init__(self, vocab=50, dim=32, heads=4, context=16, layers=2):
        super().__init__()
        self.tok = nn.Embedding(vocab, dim)
        self.pos = nn.Embedding(context, dim)
        self.blocks = nn.ModuleList(Block(dim, heads, context)
                                    for _ in range(layers))
        self.encoder = nn.TransformerEncoderLayer(
            dim, heads, dim_feedforward=2 * dim, dropout=0.0,
            batch_first=True, norm_first=True)
        self.ln = nn.LayerNorm(dim)
        self.causal = nn.Parameter(torch.triu(
            torch.full((context, context), float("-inf")), diagonal=1),
            requires_grad=False)

    def forward(self, idx):
        t = idx.size(1)
        x = self.tok(idx) + self.pos.weight[:t]
        for block in self.blocks:
            x = block(x)
        x = self.encoder(x, src_mask=self.causal[:t, :t])
        logits = F.linear(self.ln(x), self.tok.weight)
        return torch.logsumexp(logits, dim=-1), logits.log_softmax(-1)

    @staticmethod
    def example_inputs():
        return [torch.randint(0, 50, (2, 12))]


class StatsConvNet(nn.Module):
    """A 1d conv net for signals with statistics-heavy pooling."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv1d(3, 8, 5, padding=2)
        self.bn = nn.BatchNorm1d(8)
        self.conv2 = nn.Conv1d(8, 16, 3, dilation=2, padding_mode="reflect",
                               padding=2)
        self.pool = nn.MaxPool1d(2)
        self.head = nn.Linear(16 * 6, 4)
        self.gru = nn.GRU(16, 8, batch_first=True)

    def forward(self, x):
        x = self.pool(F.elu(self.bn(self.conv1(x))))
        x = torch.tanh(self.conv2(x))
        mean = x.mean(dim=-1)
        std = x.std(dim=-1, unbiased=True)
        var = torch.var(x, -1, keepdim=False)
        lse = x.logsumexp(-1)
        q = torch.quantile(x, 0.75, dim=-1)
        feats = torch.cat([mean, std, var, lse, q, x.amax(-1)], dim=1)
        h = self.gru(x.transpose(1, 2))[1]
        z = (x - x.mean(-1, keepdim=True)) / (x.std(-1, keepdim=True) + 1e-5)
        return self.head(feats), h.squeeze(0), z.norm(dim=-1)

    @staticmethod
    def example_inputs():
        return [torch.randn(2, 3, 32)]


class MixedNet(nn.Module):
    """PReLU, Upsample, reflection padding, einsum, pixel shuffle, masked
    statistics and instance norm in one image-to-image net."""

    def __init__(self):
        super().__init__()
        self.pad = nn.ReflectionPad2d(1)
        self.conv = nn.Conv2d(3, 8, 3)
        self.act = nn.PReLU(8)
        self.norm = nn.InstanceNorm2d(8, affine=True)
        self.up = nn.Upsample(scale_factor=2, mode="bilinear",
                              align_corners=False)
        self.shuffle = nn.PixelShuffle(2)
        self.mix = nn.Parameter(torch.randn(2, 2))
        self.drop = nn.Dropout2d(0.2)

    def forward(self, x):
        y = self.act(self.norm(self.conv(self.pad(x))))
        y = self.drop(self.up(y))
        y = self.shuffle(y)
        y = torch.einsum("bchw,cd->bdhw", y, self.mix)
        attn = torch.einsum("bchw,bcxy->bhwxy", y, y).flatten(3).softmax(-1)
        z = F.pad(y, (1, 1, 2, 0), mode="replicate")
        return y.amax(dim=(2, 3)), attn.sum(-1), z

    @staticmethod
    def example_inputs():
        return [torch.randn(2, 3, 6, 6)]
