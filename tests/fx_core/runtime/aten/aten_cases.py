"""Golden results for aten_op_test: each case is a call as torch.fx records
it (target spelling, args, kwargs), evaluated by Python torch. The C++ test
makes the same calls through fx::AtenOp and compares. Usage: aten_cases.py OUT.pt
"""
import sys

import torch

x = torch.arange(12.0).reshape(3, 4).sin()
y = torch.arange(12.0).reshape(3, 4).cos()
m = torch.tensor([[2.0, 1.0], [1.0, 3.0]])
cond = x > 0

cases = {
    "logsumexp": torch.logsumexp(x, 1),
    "std": x.std(),
    "std_dim": x.std(0),
    "std_dim_keepdim": x.std(dim=1, keepdim=True),
    "std_unbiased": x.std(1, unbiased=False),
    "std_correction": x.std(dim=1, correction=0),
    "gelu": torch._C._nn.gelu(x),
    "gelu_tanh": torch._C._nn.gelu(x, approximate="tanh"),
    "linalg_det": torch._C._linalg.linalg_det(m),
    "special_erf": torch._C._special.special_erf(x),
    "fft_rfft": torch._C._fft.fft_rfft(x),
    "aten_add_Tensor": torch.ops.aten.add.Tensor(x, y),
    "aten_add_packet": torch.ops.aten.add(x, 2),
    "add_alpha": torch.add(x, 2, alpha=3),
    "mul_number": torch.mul(x, 2.5),
    "rsub": torch.rsub(x, 1),
    "pow_number_base": torch.pow(2, x),
    "view_varargs": x.view(2, 6),
    "view_tuple": x.view((4, 3)),
    "permute": x.permute(1, 0),
    "zeros_dtype": torch.zeros((2, 3), dtype=torch.float64),
    "zeros_varargs": torch.zeros(2, 3),
    "max_dim": tuple(x.max(1)),
    "max": torch.max(x),
    "topk": tuple(torch.topk(x, 2)),
    "add_": x.clone().add_(1),
    "where": torch.where(cond, x, y),
    "cat": torch.cat([x, y], 1),
    "size": x.size(1),
    "clamp_min": torch.clamp(x, min=0.1),
    "sum_dtype": torch.sum(x, dtype=torch.float64),
    "mean_dims": x.mean((0, 1), keepdim=True),
    "diagonal": torch.diagonal(x),
    "sort": tuple(torch.sort(x)),
    "argsort": torch.argsort(x),
    "count_nonzero": torch.count_nonzero(x),
    "split": torch.split(x, 2, 1),
    "unbind": x.unbind(1),
    "eye_requires_grad": torch.eye(3, 2, device="cpu", requires_grad=True),
}
torch.save({"inputs": {"x": x, "y": y, "m": m, "cond": cond}, "cases": cases},
           sys.argv[1])
