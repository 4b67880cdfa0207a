"""Models for tests/plugins/inference_test.cc, exported with
tools/torchfx_export.py (--module tests/plugins/inference_models.py:CLASS).

The torchvision networks get BatchNorm statistics measured on random batches
(train mode, cumulative averages) and random affine parameters, so folding
moves real numbers and the outputs are not vanishingly small."""

import os
import sys

import torch
import torch.nn.functional as F
import torchvision.models

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "tools", "bench"))


def calibrated(model, size=96):
    g = torch.Generator().manual_seed(1)
    for m in model.modules():
        if isinstance(m, torch.nn.BatchNorm2d):
            m.reset_running_stats()
            m.momentum = None
            with torch.no_grad():
                m.weight.uniform_(0.5, 1.5, generator=g)
                m.bias.normal_(0.0, 0.1, generator=g)
    model.train()
    with torch.no_grad():
        for _ in range(2):
            model(torch.rand(2, 3, size, size, generator=g))
    return model.eval()


class ResNet18(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.net = calibrated(torchvision.models.resnet18())

    def forward(self, x):
        return self.net(x)


class ResNet50(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.net = calibrated(torchvision.models.resnet50())

    def forward(self, x):
        return self.net(x)


class MobileNetV3Large(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.net = calibrated(torchvision.models.mobilenet_v3_large())

    def forward(self, x):
        return self.net(x)


class EfficientNetB0(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.net = calibrated(torchvision.models.efficientnet_b0())

    def forward(self, x):
        return self.net(x)


class DenseNet(torch.nn.Module):
    """torchvision's DenseNet, two blocks of two layers: its BatchNorms
    before each ReLU have no convolution before them (pre-activation), and
    each layer's input is a concatenation of all earlier features."""

    def __init__(self):
        super().__init__()
        self.net = calibrated(torchvision.models.DenseNet(
            growth_rate=8, block_config=(2, 2), num_init_features=16,
            bn_size=2, num_classes=10))

    def forward(self, x):
        return self.net(x)


class Transformer(torch.nn.Module):
    """The suite's small transformer on token ids made from a float input."""

    def __init__(self):
        super().__init__()
        import suite_bench
        self.net = suite_bench.SmallTransformer()

    def forward(self, x):
        return self.net((x * 999).to(torch.long))


class ConvTails(torch.nn.Module):
    """Every tail fuse_conv knows, every form of convolution, and the cases
    it must leave alone."""

    def __init__(self):
        super().__init__()
        c = 8
        self.stem = torch.nn.Conv2d(3, c, 3, padding=1, bias=False)
        self.stem_bn = torch.nn.BatchNorm2d(c)
        self.relu6 = torch.nn.ReLU6(inplace=True)
        self.a = torch.nn.Conv2d(c, c, 3, padding=1, groups=c)
        self.a_bn = torch.nn.BatchNorm2d(c)
        self.hardswish = torch.nn.Hardswish()
        self.b = torch.nn.Conv2d(c, c, 3, padding=2, dilation=2)
        self.silu = torch.nn.SiLU()
        self.w = torch.nn.Parameter(torch.randn(c, c, 1, 1) * 0.3)
        self.c = torch.nn.Conv2d(c, c, 3, stride=2, padding=1)
        self.c_bn = torch.nn.BatchNorm2d(c)
        self.d = torch.nn.Conv2d(c, c, 1)
        self.hardsigmoid = torch.nn.Hardsigmoid()
        self.e = torch.nn.Conv2d(c, c, 1, groups=2)
        self.e_bn = torch.nn.BatchNorm2d(c)
        self.shared = torch.nn.Conv2d(c, c, 1)
        self.shared_bn = torch.nn.BatchNorm2d(c)
        self.same = torch.nn.Conv2d(c, c, 3, padding="same")
        self.hardtanh = torch.nn.Hardtanh(-0.5, 0.5)
        g = torch.Generator().manual_seed(2)
        for m in self.modules():
            if isinstance(m, torch.nn.BatchNorm2d):
                with torch.no_grad():
                    m.running_mean.normal_(0.0, 0.2, generator=g)
                    m.running_var.uniform_(0.5, 2.0, generator=g)
                    m.weight.uniform_(0.5, 1.5, generator=g)
                    m.bias.normal_(0.0, 0.1, generator=g)

    def forward(self, x):
        x = self.relu6(self.stem_bn(self.stem(x)))
        x = self.hardswish(self.a_bn(self.a(x)))
        y = self.silu(self.b(x))
        y = F.hardtanh(F.conv2d(y, self.w), -0.5, 0.5)
        t = self.c_bn(self.c(y)).sigmoid().mean()  # a tail fuse_conv stops at
        z = self.c_bn(self.c(y)) + self.d(F.max_pool2d(y, 2))
        z = torch.relu(z)
        s = self.hardsigmoid(self.d(z))
        z = F.relu(self.e_bn(self.e(z)) + z)
        u = self.shared(z)
        v = self.shared_bn(u) + u  # u has two users: not folded
        w = self.hardtanh(self.same(v))  # padding='same': not fused
        return w * s + torch.sigmoid(z) + t


class LinearTails(torch.nn.Module):
    """Every tail fuse_linear knows, every form of linear layer, and the
    cases it must leave alone (input: 2 x 6 x 16)."""

    def __init__(self):
        super().__init__()
        self.a = torch.nn.Linear(16, 32)
        self.gelu = torch.nn.GELU()
        self.b = torch.nn.Linear(32, 16, bias=False)
        self.w = torch.nn.Parameter(torch.randn(16, 16) * 0.3)
        self.bias = torch.nn.Parameter(torch.randn(16) * 0.1)
        self.c = torch.nn.Linear(16, 16)
        self.hardswish = torch.nn.Hardswish()
        self.d = torch.nn.Linear(16, 16)
        self.tanh_gelu = torch.nn.GELU(approximate="tanh")
        self.e = torch.nn.Linear(16, 8)

    def forward(self, x):
        y = self.gelu(self.a(x))                              # module + GELU
        z = self.b(y) + x                                     # no bias, residual
        z = F.gelu(F.linear(z, self.w, self.bias), approximate="tanh")
        u = torch.relu(x + F.linear(z, self.w))               # residual first
        v = F.hardtanh(self.c(u) + u, -0.5, 0.5)              # residual + hardtanh
        s = self.hardswish(self.d(v)).sigmoid()               # stops at sigmoid
        shared = self.d(s)                                    # two users: no tail
        t = torch.relu(shared) + shared * 0.5
        r = self.c(t) + self.bias                             # broadcast: no residual
        flat = self.tanh_gelu(self.e(r[0, 0]))                # 1-d input
        return self.e(r).mean() + flat.sum() + F.linear(r, self.w * 2.0)


class MatmulTails(torch.nn.Module):
    """Every matmul form fuse_matmul knows, attention's strided operands,
    and the cases the plan leaves to torch.matmul (input: 2 x 6 x 24)."""

    def __init__(self):
        super().__init__()
        self.w = torch.nn.Parameter(torch.randn(24, 24) * 0.2)

    def forward(self, x):
        b, t = x.size(0), x.size(1)
        qkv = x.view(b, t, 3, 2, 4).permute(2, 0, 3, 1, 4)       # 3, b, 2, t, 4
        q, k, v = qkv[0], qkv[1], qkv[2]
        att = (q @ k.transpose(-2, -1)) * 0.5                      # strided 4-d
        y = torch.matmul(att.softmax(-1), v)                       # no scale
        y = y.transpose(1, 2).reshape(b, t, -1)                    # b, t, 8
        z = 0.25 * torch.bmm(x, x.transpose(1, 2))                 # 3-d, scale first
        u = z.matmul(x)                                            # method
        w = x @ self.w                                             # batch broadcast: ATen
        r = x[0] @ x[0].t()                                        # 2-d
        s = torch.matmul(x[0, 0], self.w)                          # 1-d: ATen
        two = torch.matmul(u, self.w)                              # two users
        return torch.cat([y.flatten(), u.flatten(), w.flatten(), r.flatten(),
                          s, (two * two).flatten(), (z * x.sum()).flatten()])


class ResidualChains(torch.nn.Module):
    """Residual adds fused into convolutions: residuals dead after their
    convolution (the plan sums into their buffers, one after another) and
    one read again later (it must keep its value)."""

    def __init__(self):
        super().__init__()
        c = 16
        self.convs = torch.nn.ModuleList(
            torch.nn.Conv2d(c, c, 3 if i % 2 else 1, padding=i % 2)
            for i in range(7))

    def forward(self, x):
        a = torch.relu(self.convs[0](x))
        b = torch.relu(self.convs[1](a))
        c = torch.relu(self.convs[2](b) + a)  # a is read again below
        d = torch.relu(self.convs[3](c))
        e = torch.relu(self.convs[4](d) + c)  # c dead after: in place
        f = torch.relu(self.convs[5](e))
        g = self.convs[6](f) + e  # e (in c's buffer) dead after: in place
        return g + a


class PointwiseTails(torch.nn.Module):
    """Every elementwise form fuse_pointwise fuses (functions, methods,
    modules, numbers on either side, in-place forms, a DAG, a broadcast
    squeeze-excitation scale) and the values it must leave outside a group
    (other users, other shapes)."""

    def __init__(self):
        super().__init__()
        c = 8
        self.conv = torch.nn.Conv2d(3, c, 3, padding=1)
        self.se = torch.nn.Conv2d(c, c, 1)
        self.hardswish = torch.nn.Hardswish()
        self.gelu = torch.nn.GELU()
        self.relu_ = torch.nn.ReLU(inplace=True)
        self.hardtanh = torch.nn.Hardtanh(-0.7, 0.9)
        self.tanh = torch.nn.Tanh()
        self.sigmoid = torch.nn.Sigmoid()

    def forward(self, x):
        y = self.conv(x)
        s = self.se(F.adaptive_avg_pool2d(y, 1))
        a = y * torch.sigmoid(s)  # sigmoid(s) is s's shape: not in a's group
        b = self.hardswish(a) + 0.5 * a  # a used twice inside the group
        c = F.silu(b) - 1.0
        d = self.gelu(c) / 3.0
        e = 2.0 - self.relu_(d * 1.5)
        f = self.hardtanh(e).clamp(min=-0.5)
        g = F.relu6(f) + torch.tanh(y).neg()  # y has other users
        h = F.hardsigmoid(g, inplace=True).clamp(max=0.8) * torch.relu(y)
        k = torch.clamp(h.sub(b), -1.0, 1.0).div(1.7) + self.tanh(c)
        m = F.hardtanh(k, -0.3, 0.6) - self.sigmoid(y).mul(0.25)
        return m * 3 + b.mean() + F.relu(k).tanh().sum()  # b, k: other users
