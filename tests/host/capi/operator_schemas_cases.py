"""What torch 1.13 says the targets of operator_schemas_c_abi_test name.

Prints, for each target, a line "= TARGET" and then one line per schema, as
torch prints str(schema): first the test's chosen targets, each resolved the
way Python resolves it (torch.ops.aten.NAME.OVERLOAD's _schema, an
OpOverloadPacket's overloads(), torch._C._jit_get_schemas_for_operator for
the spellings that name every overload), then torch.ops.aten.NAME for every
aten operator TorchScript's registry has.
"""
import torch


def every_overload(qualified_name):
    return [str(s) for s in torch._C._jit_get_schemas_for_operator(qualified_name)]


def one_overload(op):
    return [str(op._schema)]


def packet(p):
    return [str(getattr(p, name)._schema) for name in p.overloads()]


aten = torch.ops.aten
cases = {
    "torch.ops.aten.diagonal.default": one_overload(aten.diagonal.default),
    "torch.ops.aten.split.Tensor": one_overload(aten.split.Tensor),
    "torch.ops.aten.add_.Tensor": one_overload(aten.add_.Tensor),
    "torch.ops.aten.add.int": one_overload(aten.add.int),
    "torch.ops.aten.max.dim": one_overload(aten.max.dim),
    "torch.ops.aten.add": packet(aten.add),
    "torch.ops.aten.max": packet(aten.max),
    "torch.ops.aten.split": packet(aten.split),
    "torch.add": every_overload("aten::add"),
    "torch.max": every_overload("aten::max"),
    "add": every_overload("aten::add"),
    "add_": every_overload("aten::add_"),
    "transpose": every_overload("aten::transpose"),
    "torch.nn.functional.dropout": every_overload("aten::dropout"),
    "torch._C._nn.linear": every_overload("aten::linear"),
    "torch.ops.quantized.add": packet(torch.ops.quantized.add),
    "operator.add": [],
    "torch.ops.aten.no_such_operator": [],
    "torch.ops.aten.add.no_such_overload": [],
}
names = sorted({s.name for s in torch._C._jit_get_all_schemas()})
for name in names:
    if name.startswith("aten::"):
        cases["torch.ops.aten." + name[len("aten::"):]] = every_overload(name)
for target, schemas in cases.items():
    print("= " + target)
    for s in schemas:
        print(s)
