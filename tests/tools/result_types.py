"""Python's result types through `fx exec`, for result_types_test.

    python3 result_types.py compare GOT.pt WANT.pt

exits 0 when both files hold the same value: the same Python types at every
level (tuple, list, dict, torch.Size, torch.return_types.*), equal tensors
(dtype, shape, values) and equal numbers. `ResultTypes` is the model the test
exports with tools/torchfx_export.py.
"""
import sys

import torch


class ResultTypes(torch.nn.Module):
    """Returns every kind of result a graph can: sizes, named tuples from
    torch.* functions and Tensor methods, their fields, ATen-level plain
    tuples, containers nested in each other, numbers and booleans."""

    def forward(self, x):
        s = x.size()
        m = torch.max(x, 1)
        srt = x.sort(1)
        return (s, x.shape, s[1:], s + (1,), 2 * s, (1,) + s,
                m, m.values, m[1], srt, srt.indices,
                torch.linalg.slogdet(x[:2, :2]),
                torch.ops.aten.max.dim(x, 1),
                {"a": x, "b": [s, (x.size(1), 3)], "c": {"d": m}},
                [x, x], (x, x), (1, 2), s[0], x.size(1),
                s == (3, 4), s == [3, 4], x.dim())


def same(got, want, where="result"):
    if type(got) is not type(want):
        raise AssertionError(f"{where}: {type(got)} is not {type(want)}")
    if isinstance(want, torch.Tensor):
        if got.dtype != want.dtype or got.shape != want.shape:
            raise AssertionError(f"{where}: {got.dtype}{list(got.shape)} is "
                                 f"not {want.dtype}{list(want.shape)}")
        if not torch.allclose(got, want, rtol=1e-4, atol=1e-5):
            raise AssertionError(f"{where}: values differ")
    elif isinstance(want, (list, tuple)):
        if len(got) != len(want):
            raise AssertionError(f"{where}: {len(got)} items, not {len(want)}")
        for i, (g, w) in enumerate(zip(got, want)):
            same(g, w, f"{where}[{i}]")
    elif isinstance(want, dict):
        if list(got) != list(want):
            raise AssertionError(f"{where}: keys {list(got)}, not {list(want)}")
        for k in want:
            same(got[k], want[k], f"{where}[{k!r}]")
    elif got != want:
        raise AssertionError(f"{where}: {got!r} is not {want!r}")


if __name__ == "__main__":
    if len(sys.argv) != 4 or sys.argv[1] != "compare":
        raise SystemExit(__doc__)
    same(torch.load(sys.argv[2]), torch.load(sys.argv[3]))
    print("same")
