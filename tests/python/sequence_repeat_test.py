"""Python's sequence repetition, `seq * n` and `n * seq` (operator.mul and
operator.imul), in the SDK's GraphModule against torch.fx's own gm(...) on
the same graph: lists, tuples, torch.Size and str repeated by an int, a
bool or an integer tensor of one element (n.__index__()), and the
TypeErrors CPython and torch raise for every other count. Each result and
each error message is torch.fx's, computed at test time. Run by
fx_sdk_test.sh under /usr/bin/python3."""

import copy
import operator

import pytest
import torch
import torch.fx

import fx_sdk

CASES = [
    ("str_int", "ab", 3),
    ("int_str", 3, "ab"),
    ("str_bool", "ab", True),
    ("str_false", "ab", False),
    ("str_negint", "ab", -2),
    ("empty_str_int", "", 5),
    ("list_int", [1, 2], 2),
    ("list_bool", [1, 2], True),
    ("bool_tuple", True, (1, 2)),
    ("tuple_false", (1,), False),
    ("int_list", 2, [1, [2]]),
    ("size_int", torch.Size([2, 3]), 2),
    ("list_ltensor", [1, 2], torch.tensor([2])),
    ("ltensor_tuple", torch.tensor(2), (1, 2)),
    ("list_btensor", [1], torch.tensor(True)),
    ("str_u8tensor", "ab", torch.tensor(3, dtype=torch.uint8)),
    ("ltensor_list", torch.tensor([[3]]), [7]),
    # Refused by Python: the SDK must refuse them too, with its message.
    ("list_float", [1], 2.0),
    ("float_list", 2.0, [1]),
    ("str_float", "ab", 2.0),
    ("list_str", [1], "ab"),
    ("str_str", "ab", "cd"),
    ("list_list", [1], [2]),
    ("list_none", [1], None),
    ("list_ftensor", [1], torch.tensor(2.0)),
    ("list_two_element_tensor", [1], torch.tensor([2, 3])),
    ("ftensor_list", torch.ones(2), [2]),
]


def _graph(op):
    g = torch.fx.Graph()
    a = g.placeholder("a")
    b = g.placeholder("b")
    g.output(g.call_function(getattr(operator, op), (a, b)))
    return torch.fx.GraphModule(torch.nn.Module(), g)


def _run(fn, a, b):
    """fn's result on copies of (a, b), or the exception it raised."""
    try:
        return fn(copy.deepcopy(a), copy.deepcopy(b)), None
    except Exception as e:  # noqa: BLE001 (any refusal is compared)
        return None, e


def _same(got, want):
    if isinstance(want, torch.Tensor):
        return isinstance(got, torch.Tensor) and torch.equal(got, want)
    if isinstance(want, (list, tuple)):
        return (type(got) is type(want) and len(got) == len(want)
                and all(_same(x, y) for x, y in zip(got, want)))
    return type(got) is type(want) and got == want


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
@pytest.mark.parametrize("op", ["mul", "imul"])
def test_repeat_matches_torch_fx(op, case):
    _, a, b = case
    gm = _graph(op)
    want, want_error = _run(gm, a, b)
    got, got_error = _run(fx_sdk.from_torch_fx(gm), a, b)
    if want_error is not None:
        assert got_error is not None, (
            f"torch.fx raises {want_error!r}, the SDK returns {got!r}")
        assert str(want_error) in str(got_error)
        return
    assert got_error is None, f"torch.fx returns {want!r}, the SDK raises " \
        f"{got_error!r}"
    assert _same(got, want), f"torch.fx: {want!r}, the SDK: {got!r}"


def test_a_repeat_too_large_fails_at_once_as_python_does():
    # CPython: [1, 2] * 2**62 and 'a' * 2**62 are MemoryErrors before any
    # allocation; the SDK names the length and the count.
    gm = _graph("mul")
    for seq in ([1, 2], "a"):
        _, want_error = _run(gm, seq, 2**62)
        assert isinstance(want_error, MemoryError)
        _, got_error = _run(fx_sdk.from_torch_fx(gm), seq, 2**62)
        assert "MemoryError" in str(got_error)
        assert f"repeated {2**62} times" in str(got_error)
