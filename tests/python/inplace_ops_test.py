"""Python's in-place operators (operator.iadd ... operator.iconcat) in the
SDK's GraphModule (its compiled plan) and InferencePlan (fx_sdk.compile),
against torch.fx's own gm(...) on the same graph (issue 40).

torch.fx writes operator.iX(a, b) as `a X= b;  ix = a` (its
inplace_methods), so a later read of `a` sees the new value: for ints,
floats, bools and tuples a new object, for tensors and lists the same object,
mutated. Every case is computed by torch.fx at test time; an operation
torch.fx refuses must fail in the SDK too. Run by fx_sdk_test.sh under
/usr/bin/python3."""

import copy
import operator

import pytest
import torch
import torch.fx

import fx_sdk

OPS = ["iadd", "isub", "imul", "itruediv", "ifloordiv", "imod", "ipow",
       "iand", "ior", "ixor", "ilshift", "irshift", "imatmul", "iconcat"]


def _operands():
    """(id, a, b): each kind of left operand with right operands of its own
    and of other kinds."""
    return [
        ("int_int", 7, 3),
        ("int_negint", -7, 2),
        ("int_float", 7, 2.5),
        ("int_bool", 6, True),
        ("float_float", 7.5, 2.0),
        ("float_int", -7.5, 2),
        ("bool_bool", True, False),
        ("bool_int", True, 3),
        ("list_list", [1, 2], [3]),
        ("list_int", [1, 2], 2),
        ("tuple_tuple", (1, 2), (3,)),
        ("ftensor_ftensor", torch.tensor([[1.5, -2.0], [3.0, 4.0]]),
         torch.tensor([[2.0, 0.5], [-1.0, 3.0]])),
        ("ftensor_int", torch.tensor([1.5, -2.0, 3.0]), 2),
        ("ftensor_float", torch.tensor([1.5, -2.0, 3.0]), 0.5),
        ("ltensor_ltensor", torch.tensor([[6, -7], [8, 9]]),
         torch.tensor([[2, 3], [1, 2]])),
        ("ltensor_int", torch.tensor([6, -7, 8]), 2),
        ("ltensor_float", torch.tensor([6, -7, 8]), 2.5),
        ("btensor_btensor", torch.tensor([True, False, True]),
         torch.tensor([True, True, False])),
    ]


def _graph(op, output):
    """A GraphModule calling operator.OP on its two inputs. `output` picks
    what it returns: "node" the call's value, "both" the first input (read
    after the call) and the call's value, "container" the first input's
    container (the input wrapped in a list, read by getitem) after the
    call: a mutation in place shows there, a rebinding does not."""
    g = torch.fx.Graph()
    a = g.placeholder("a")
    b = g.placeholder("b")
    if output == "container":
        first = g.call_function(operator.getitem, (a, 0))
        g.call_function(getattr(operator, op), (first, b))
        g.output(g.call_function(operator.getitem, (a, 0)))
    else:
        n = g.call_function(getattr(operator, op), (a, b))
        g.output(n if output == "node" else (a, n))
    return torch.fx.GraphModule(torch.nn.Module(), g)


def _run(fn, a, b, container):
    """fn's result on copies of (a, b) (each run mutates its own), or the
    exception's type; with the inputs after the run (a mutation shows)."""
    a, b = copy.deepcopy(a), copy.deepcopy(b)
    if container:
        a = [a]
    try:
        return fn(a, b), (a, b)
    except Exception as e:  # noqa: BLE001 (any refusal is compared)
        return type(e), None


def _same(got, want):
    if isinstance(want, torch.Tensor):
        return (isinstance(got, torch.Tensor) and got.dtype == want.dtype
                and got.shape == want.shape
                and torch.allclose(got, want, rtol=0, atol=0, equal_nan=True))
    if isinstance(want, (list, tuple)):
        return (type(got) is type(want) and len(got) == len(want)
                and all(_same(x, y) for x, y in zip(got, want)))
    return type(got) is type(want) and got == want


def _check(engine, op, case, output):
    _, a, b = case
    gm = _graph(op, output)
    container = output == "container"
    want, want_inputs = _run(gm, a, b, container)
    if isinstance(want, type) and issubclass(want, Exception):
        got, _ = _run(engine(gm, a, b, container), a, b, container)
        assert isinstance(got, type) and issubclass(got, Exception), (
            f"torch.fx raises {want.__name__}, the SDK returns {got!r}")
        return
    got, got_inputs = _run(engine(gm, a, b, container), a, b, container)
    assert _same(got, want), f"torch.fx: {want!r}, the SDK: {got!r}"
    if isinstance(a, torch.Tensor):
        # The caller's tensor is mutated exactly as torch.fx mutates it.
        assert _same(got_inputs, want_inputs)
    if output == "both" and isinstance(want[0], (torch.Tensor, list)):
        # One object, mutated and returned, as in torch.fx.
        assert (got[0] is got[1]) == (want[0] is want[1])


def _graph_module(gm, a, b, container):
    return fx_sdk.from_torch_fx(gm)


def _inference_plan(gm, a, b, container):
    inputs = copy.deepcopy([[a] if container else a, b])
    try:
        return fx_sdk.compile(gm, inputs)
    except Exception as e:  # noqa: BLE001 (refused when planned: compared)
        error = e

        def refuses(*args):
            raise error
        return refuses


CASES = _operands()


@pytest.mark.parametrize("output", ["node", "both", "container"])
@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
@pytest.mark.parametrize("op", OPS)
def test_graph_module_matches_torch_fx(op, case, output):
    _check(_graph_module, op, case, output)


TENSOR_CASES = [c for c in CASES if isinstance(c[1], torch.Tensor)]


@pytest.mark.parametrize("output", ["node", "both", "container"])
@pytest.mark.parametrize("case", TENSOR_CASES,
                         ids=[c[0] for c in TENSOR_CASES])
@pytest.mark.parametrize("op", OPS)
def test_inference_plan_matches_torch_fx(op, case, output):
    _check(_inference_plan, op, case, output)
