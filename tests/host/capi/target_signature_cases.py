"""What torch 1.13 says the signatures of target_signature_c_abi_test's targets are.

Reads a file of lines "F TARGET" (a call_function target, such as
torch.nn.functional.relu) and "M TYPE" (a module class, such as
torch.nn.Conv2d) and prints, for each, a line "= F TARGET" / "= M TYPE" and
then either
  - "! import: WHY" when Python cannot import what the target names,
  - "! builtin: WHY" when it is a builtin (inspect cannot read a C function's
    signature; torch.fx binds its arguments to its ATen schemas), or
  - one line per parameter, "NAME<TAB>KIND<TAB>DEFAULT", KIND as inspect
    names it, DEFAULT encoded as encode() below ("-" for none).
A call_function target's signature is inspect.signature(inspect.unwrap(fn)),
of the if_true branch for torch.nn.functional's boolean dispatches (as
torch.fx.operator_schemas.normalize_function reads them); a module's is its
class's forward without self.
"""
import importlib
import inspect
import sys

import torch
import torch._jit_internal


def encode(v):
    """A default value, spelled as the test's C++ side spells an FxArg."""
    if v is None:
        return "None"
    if v is True or v is False:
        return str(v)
    if isinstance(v, int):
        return "int:%d" % v
    if isinstance(v, float):
        return "float:%.17g" % v
    if isinstance(v, str):
        return "str:" + v
    if isinstance(v, (torch.dtype, torch.memory_format, torch.layout)):
        return str(v)
    if isinstance(v, tuple):
        return "(" + ", ".join(encode(x) for x in v) + ")"
    if isinstance(v, list):
        return "[" + ", ".join(encode(x) for x in v) + "]"
    return "?" + repr(v)


def resolve(qualified):
    """The object a dotted name names: the longest importable module prefix,
    then attributes."""
    parts = qualified.split(".")
    for i in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:i]))
        except Exception:  # noqa: BLE001 (ImportError, or a module failing)
            continue
        for attr in parts[i:]:
            obj = getattr(obj, attr)
        return obj
    raise ImportError("no module of " + qualified)


def params(sig, drop_self):
    ps = list(sig.parameters.values())
    if drop_self:
        ps = ps[1:]
    lines = []
    for p in ps:
        default = "-" if p.default is inspect.Parameter.empty else encode(p.default)
        lines.append("%s\t%s\t%s" % (p.name, p.kind.name, default))
    return lines


def function_signature(target):
    fn = resolve(target)
    dispatched = torch._jit_internal.boolean_dispatched
    if fn in dispatched:
        fn = dispatched[fn]["if_true"]
    fn = inspect.unwrap(fn)
    if inspect.isbuiltin(fn) or not (inspect.isfunction(fn) or inspect.ismethod(fn)):
        raise TypeError("builtin: " + type(fn).__name__)
    return params(inspect.signature(fn), drop_self=False)


def module_signature(type_name):
    cls = resolve(type_name)
    if not (inspect.isclass(cls) and issubclass(cls, torch.nn.Module)):
        raise ImportError(type_name + " is no torch.nn.Module class")
    return params(inspect.signature(inspect.unwrap(cls.forward)), drop_self=True)


def main(path):
    out = []
    with open(path) as f:
        for line in f:
            line = line.rstrip("\n")
            if not line:
                continue
            what, name = line.split(" ", 1)
            out.append("= " + line)
            try:
                if what == "F":
                    lines = function_signature(name)
                else:
                    lines = module_signature(name)
            except TypeError as e:
                out.append("! " + str(e))
                continue
            except Exception as e:  # noqa: BLE001
                out.append("! import: %s: %s" % (type(e).__name__, e))
                continue
            out.extend(lines)
    print("\n".join(out))


if __name__ == "__main__":
    main(sys.argv[1])
