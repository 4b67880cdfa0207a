"""Models for the optimization plugin's tests (fuse, remove_dropout,
merge_matmul), exported with torch.fx.

Every BatchNorm has running statistics that are not the initial 0 and 1, so
that folding them is checked number for number.
"""

import torch
import torch.nn.functional as F


def _stats(bn):
    if bn.running_mean is not None:
        bn.running_mean.uniform_(-0.5, 0.5)
        bn.running_var.uniform_(0.5, 2.0)
    if bn.weight is not None:
        bn.weight.data.uniform_(0.5, 1.5)
        bn.bias.data.uniform_(-0.5, 0.5)


class ConvBn(torch.nn.Module):
    """Each fuse pattern, and the sites torch's fuse leaves alone."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(1)
        self.conv2 = torch.nn.Conv2d(3, 8, 3, padding=1, bias=False)
        self.bn2 = torch.nn.BatchNorm2d(8)
        self.conv1 = torch.nn.Conv1d(8, 8, 3, padding=1)
        self.bn1 = torch.nn.BatchNorm1d(8, eps=1e-3)
        self.conv3 = torch.nn.Conv3d(8, 4, 1)
        self.bn3 = torch.nn.BatchNorm3d(4, affine=False)
        # A convolution with two users: not fused.
        self.shared = torch.nn.Conv2d(3, 8, 1)
        self.bn_shared = torch.nn.BatchNorm2d(8)
        # No running statistics: not fused.
        self.conv_batch = torch.nn.Conv2d(3, 8, 1)
        self.bn_batch = torch.nn.BatchNorm2d(8, track_running_stats=False)
        # A BatchNorm of the wrong dimension for its convolution, and one
        # after a functional convolution: not fused.
        self.conv_mismatch = torch.nn.Conv1d(8, 8, 1)
        self.bn_mismatch = torch.nn.BatchNorm2d(8)
        self.bn_functional = torch.nn.BatchNorm2d(8)
        self.w = torch.nn.Parameter(torch.randn(8, 3, 1, 1))
        for bn in (self.bn2, self.bn1, self.bn3, self.bn_shared, self.bn_batch,
                   self.bn_mismatch, self.bn_functional):
            _stats(bn)

    def forward(self, x):
        a = torch.relu(self.bn2(self.conv2(x)))
        b = self.bn1(self.conv1(a.flatten(2)))
        c = self.bn3(self.conv3(b.view(2, 8, 4, 4, 4)))
        d = self.shared(x)
        e = self.bn_shared(d) + d
        f = self.bn_batch(self.conv_batch(x))
        g = self.bn_mismatch(self.conv_mismatch(b).view(2, 8, 8, 8))
        h = self.bn_functional(F.conv2d(x, self.w))
        return c.sum() + e + f + g + h


class ConvBnLastInTraining(ConvBn):
    """ConvBn whose bn3 stays in training mode: torch's fuse fuses the
    Conv1d and Conv2d pairs first, then asserts on (conv3, bn3)."""

    def train(self, mode=True):
        super().train(mode)
        self.bn3.training = True
        return self


class Dropouts(torch.nn.Module):
    """torch.nn.Dropout modules go; Dropout2d and F.dropout stay; the
    annotated types go with the retrace."""

    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(8, 8)
        self.drop = torch.nn.Dropout(0.5)
        self.drop2d = torch.nn.Dropout2d(0.5)
        self.head = torch.nn.Sequential(torch.nn.Dropout(0.2),
                                        torch.nn.Linear(8, 4))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.drop(torch.relu(self.fc(x)))
        z = F.dropout(y, 0.1, training=False)
        w = self.drop2d(z.unsqueeze(-1)).squeeze(-1)
        return self.head(w + y)


class DropoutNameClash(torch.nn.Module):
    """torch's retrace names F.dropout's node `dropout` once the module's
    node `dropout` is gone."""

    def __init__(self):
        super().__init__()
        self.dropout = torch.nn.Dropout(0.5)

    def forward(self, x):
        return F.dropout(self.dropout(x), 0.1, training=False) * 2


class MatmulsSharingAWeight(torch.nn.Module):
    """Three torch.matmul calls on the parameter w, rows of three sizes,
    merge (a fresh get_attr reads w; the old one stays, unused); a
    dependent pair on v does not; a dead chain and the annotations show
    torch's breadth-first sort and retrace."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(2)
        self.w = torch.nn.Parameter(torch.randn(8, 5))
        self.v = torch.nn.Parameter(torch.randn(8, 8))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        a = torch.matmul(x[:2], self.w)
        b = torch.matmul(x.relu(), self.w)
        c = torch.matmul(x, self.v)
        d = torch.matmul(c, self.v)
        x.sin().cos().tan()
        e = torch.matmul(x * 2, self.w)
        return a.sum() + b.sum() + d.sum() + e


class MatmulsSharingANode(torch.nn.Module):
    """The shared right operand is a node (x.t()); a left operand is a
    graph input; the merged results feed one another's users."""

    def forward(self, x):
        t = x.t()
        p = torch.matmul(x.sin(), t)
        q = torch.matmul(x, t)
        r = torch.matmul(x[1:].cos(), t)
        return torch.cat([p + q[:, :1], r], 0)


class MatmulsTooFarApart(torch.nn.Module):
    """A left operand six relus deep: seven inputs lead up from its matmul,
    torch's may_depend_on gives up at depth six on a relu that still has an
    input and assumes a dependency, so nothing merges (with five relus the
    search reaches x, which has none, and they merge)."""

    depth = 6

    def __init__(self):
        super().__init__()
        self.w = torch.nn.Parameter(torch.randn(8, 3))

    def forward(self, x):
        deep = x
        for _ in range(self.depth):
            deep = deep.relu()
        return torch.matmul(x, self.w) + torch.matmul(deep, self.w)


class MatmulsJustCloseEnough(MatmulsTooFarApart):
    depth = 5


class MatmulsInTwoGroups(torch.nn.Module):
    """Two mergeable groups: torch names the second group's merged matmul
    `matmul`, a name the first group's erased matmul had."""

    def __init__(self):
        super().__init__()
        self.w = torch.nn.Parameter(torch.randn(8, 3))
        self.v = torch.nn.Parameter(torch.randn(8, 4))

    def forward(self, x):
        a = torch.matmul(x, self.w)
        b = torch.matmul(x.relu(), self.w)
        c = torch.matmul(x, self.v)
        d = torch.matmul(x.sin(), self.v)
        return a.sum() + b.sum() + c.sum() + d.sum()


class SubgraphSource(torch.nn.Module):
    """extract_subgraph's source: a convolution and batch norm, two
    branches joined, a parameter read through a view, two results."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(3)
        self.conv = torch.nn.Conv2d(3, 4, 3)
        self.bn = torch.nn.BatchNorm2d(4)
        self.w = torch.nn.Parameter(torch.randn(4))

    def forward(self, x):
        a = self.bn(self.conv(x))
        b = torch.relu(a) + torch.tanh(a)
        c = b * self.w.view(1, -1, 1, 1)
        return c.sum(dim=1), torch.sigmoid(c)


class TaggedBranches(torch.nn.Module):
    """split_by_tags' source: two branches of linears joined by a cat, a
    buffer read inside and returned, a call_method and keyword arguments."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(5)
        self.linear1 = torch.nn.Linear(8, 8)
        self.linear2 = torch.nn.Linear(8, 8)
        self.linear3 = torch.nn.Linear(16, 4)
        self.register_buffer("b", torch.randn(8))

    def forward(self, x):
        r1 = self.linear1(x)
        r2 = self.linear2(x.relu())
        r3 = torch.cat([r1, r2 + self.b], dim=1)
        return self.linear3(r3).softmax(dim=-1), r1, self.b


class NestedTagged(torch.nn.Module):
    """split_by_tags on nested modules: a call_module block.0 and a get_attr
    of block.0.bias (read in another component) keep their dotted paths
    in the components, as torch's lift_subgraph_as_module builds them."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(6)
        self.block = torch.nn.Sequential(torch.nn.Linear(8, 8),
                                         torch.nn.ReLU())
        self.head = torch.nn.Sequential(torch.nn.Linear(8, 4))

    def forward(self, x):
        return self.head(self.block(x) + self.block[0].bias)


class ReadBeforeCall(torch.nn.Module):
    """split_by_tags with tags naming the submodules: a node reads
    block.0.bias before block.0 is called, so the component holds a
    container at block.0 until the module replaces it."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(6)
        self.block = torch.nn.Sequential(torch.nn.Linear(8, 8),
                                         torch.nn.ReLU())
        self.head = torch.nn.Linear(8, 4)

    def forward(self, x):
        return self.head(self.block(x * self.block[0].bias))


class SizesAndViews(torch.nn.Module):
    """The splitter's non-tensor flows: sizes read by call_method and
    getattr/getitem, used by views on either side of a linear."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(6)
        self.linear = torch.nn.Linear(12, 6)

    def forward(self, x):
        b = x.size(0)
        y = x.view(b, -1)
        z = torch.relu(self.linear(y))
        n = z.shape[1]
        return z.reshape(n, b) + 1


class FetchBook(torch.nn.Module):
    """param_fetch's corners: a convolution without bias and with string
    padding, a BatchNorm without affine weights or running statistics, an
    in-place ReLU, a MaxPool2d given tuples, a Linear."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(8)
        self.conv = torch.nn.Conv2d(3, 4, (3, 1), bias=False, padding="same",
                                    padding_mode="reflect")
        self.bn = torch.nn.BatchNorm2d(4, affine=False,
                                       track_running_stats=False)
        self.relu = torch.nn.ReLU(inplace=True)
        self.pool = torch.nn.MaxPool2d((2, 2), stride=(1, 2), ceil_mode=True)
        self.gap = torch.nn.AdaptiveAvgPool2d(1)
        self.fc = torch.nn.Linear(4, 2)

    def forward(self, x):
        x = self.pool(self.relu(self.bn(self.conv(x))))
        return self.fc(self.gap(x).flatten(1))
