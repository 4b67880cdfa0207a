"""Small models for the plugin tests, exported with tools/torchfx_export.py
(--module tests/plugins/golden_models.py:CLASS) and transformed by torch.fx in
passes_golden.py."""

import torch
import torch.nn.functional as F


class DeadCode(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = torch.nn.Linear(4, 4)

    def forward(self, x):
        unused = torch.relu(x)
        y = self.linear(x)
        z = y * 2
        w = z + 1
        torch._assert(x.sum() > -1e9, "kept: an assertion is impure")
        return y + x


class Repeated(torch.nn.Module):
    def forward(self, x):
        a = torch.sigmoid(x)
        b = torch.sigmoid(x)
        c = a * 2
        d = b * 2
        e = x.sum(dim=1, keepdim=True)
        f = x.sum(dim=1, keepdim=True)
        g = torch.cat([c, d], dim=1)
        h = torch.cat([c, d], dim=1)
        k = x.sum(dim=0, keepdim=True)
        return g + h + e * f + k.sum()


class ConstFold(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.w = torch.nn.Parameter(torch.randn(4, 4))
        self.b = torch.nn.Parameter(torch.randn(4))
        self.register_buffer("scale", torch.tensor(2.0))

    def forward(self, x):
        w = self.w.t() * self.scale + 1
        return F.linear(x, w, self.b * 2) + self.b.sum()


class Split(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 8, 3, padding=1)
        self.bn = torch.nn.BatchNorm2d(8)
        self.fc = torch.nn.Linear(8, 5)
        self.register_buffer("offset", torch.ones(5))

    def forward(self, x):
        y = torch.relu(self.bn(self.conv(x)))
        z = y + x.mean()
        p = F.adaptive_avg_pool2d(z, 1).flatten(1)
        return self.fc(p) + self.offset, y.sum()


class NestedAttr(torch.nn.Module):
    """split_module: a call_module and a get_attr of nested modules
    (block.0, block.0.bias), the get_attr read in another partition."""

    def __init__(self):
        super().__init__()
        self.block = torch.nn.Sequential(torch.nn.Linear(4, 4),
                                         torch.nn.ReLU())
        self.head = torch.nn.Linear(4, 2)

    def forward(self, x):
        return self.head(self.block(x) + self.block[0].bias)


class FlatNameClash(torch.nn.Module):
    """a.b_c and a_b.c: both layer paths flatten to a_b_c in a split_module
    submodule (torch keeps the last one silently)."""

    def __init__(self):
        super().__init__()
        self.a = torch.nn.Module()
        self.a.b_c = torch.nn.Linear(4, 4)
        self.a_b = torch.nn.Module()
        self.a_b.c = torch.nn.Linear(4, 4)

    def forward(self, x):
        return self.a_b.c(self.a.b_c(x))


class Functional(torch.nn.Module):
    """Every decomposition rule in its functional and method forms."""

    def __init__(self):
        super().__init__()
        self.w = torch.nn.Parameter(torch.randn(6, 8))
        self.b = torch.nn.Parameter(torch.randn(6))
        self.ln_w = torch.nn.Parameter(torch.randn(6))
        self.ln_b = torch.nn.Parameter(torch.randn(6))
        self.register_buffer("mean", torch.randn(6))
        self.register_buffer("var", torch.rand(6) + 0.5)
        self.m = torch.nn.Parameter(torch.randn(8, 6))

    def forward(self, x):
        y = F.linear(x, self.w, self.b)
        y = torch.relu(y) + F.relu(y) + y.relu()
        y = F.gelu(y) + F.gelu(y, approximate="tanh") + F.silu(y)
        y = F.hardswish(y) + F.hardsigmoid(y)
        y = F.batch_norm(y, self.mean, self.var, self.ln_w, self.ln_b,
                         training=False, eps=1e-3)
        y = F.layer_norm(y, (6,), self.ln_w, self.ln_b, eps=1e-4)
        y = torch.softmax(y, dim=-1) + F.softmax(y, dim=1) + y.softmax(-1)
        return torch.addmm(self.b, x, self.m, beta=0.5, alpha=2.0) + y


class Modules(torch.nn.Module):
    """The module forms."""

    def __init__(self):
        super().__init__()
        self.fc1 = torch.nn.Linear(8, 16)
        self.bn = torch.nn.BatchNorm1d(16, eps=1e-3)
        self.acts = torch.nn.ModuleList([
            torch.nn.ReLU(), torch.nn.GELU(), torch.nn.GELU(approximate="tanh"),
            torch.nn.SiLU(), torch.nn.Hardswish(), torch.nn.Hardsigmoid()])
        self.ln = torch.nn.LayerNorm(16, eps=1e-4)
        self.sm = torch.nn.Softmax(dim=1)
        self.fc2 = torch.nn.Linear(16, 4, bias=False)

    def forward(self, x):
        y = self.bn(self.fc1(x))
        for act in self.acts:
            y = y + act(y)
        return self.fc2(self.sm(self.ln(y)))


class Quantizable(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 16, 3, stride=2, padding=1)
        self.conv2 = torch.nn.Conv2d(16, 16, 3, padding=1, groups=4)
        self.fc = torch.nn.Linear(16, 10)
        self.w = torch.nn.Parameter(torch.randn(10, 10) * 0.1)

    def forward(self, x):
        y = torch.relu(self.conv2(torch.relu(self.conv(x))))
        y = F.adaptive_avg_pool2d(y, 1).flatten(1)
        return F.linear(self.fc(y), self.w)
