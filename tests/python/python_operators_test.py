"""Python's `operator`, `builtins` and `math` functions in the SDK's
GraphModule against torch.fx's own gm(...) on the same one-node graph:
ints at the edges of 64 bits, exact int/float comparisons, shifts,
powers, slices with huge steps, str by character, truth values, dicts,
lexicographic comparisons and CPython's error messages.

Each expected value and message is torch.fx's (CPython's and torch's),
computed at test time. Where Python's exact int leaves the runtime's 64 bits
(2**63, -(-2**63)), the SDK must refuse with an OverflowError instead of
wrapping around (or, for -2**63 // -1, killing the process with SIGFPE);
where Python's result is complex, with a ValueError. Run by fx_sdk_test.sh
under /usr/bin/python3."""

import math
import operator

import pytest
import torch
import torch.fx

import fx_sdk

INT64_MIN, INT64_MAX = -2**63, 2**63 - 1
T = torch.tensor


class Input:
    """An argument given to the graph as an input rather than written in it
    as a constant: the first operand of an in-place operator (torch.fx
    cannot write `1 += x`), and a negative base of ** (torch.fx writes
    `-8.0 ** y`, which Python reads as -(8.0 ** y))."""

    def __init__(self, value):
        self.value = value

    def __repr__(self):
        return repr(self.value)

CASES = [
    # Ints at and beyond 64 bits: exact, or an OverflowError.
    (operator.floordiv, INT64_MIN, -1),
    (operator.mod, INT64_MIN, -1),
    (operator.ifloordiv, Input(INT64_MIN), -1),
    (operator.floordiv, INT64_MIN, 1),
    (operator.mod, -7, 2),
    (operator.mod, 7, -2),
    (operator.mod, 1, 0),
    (operator.floordiv, 1, 0),
    (operator.add, INT64_MAX, 1),
    (operator.add, INT64_MAX, -1),
    (operator.sub, INT64_MIN, 1),
    (operator.mul, 2**62, 2),
    (operator.mul, -2**62, 2),
    (operator.mul, 2**31, 2**31),
    (operator.neg, INT64_MIN),
    (operator.abs, INT64_MIN),
    (operator.abs, -5),
    (operator.pow, 1, 10**18),
    (operator.pow, -1, 10**18 + 1),
    (operator.pow, 2, 62),
    (operator.pow, 2, 63),
    (operator.pow, -2, 63),
    (operator.pow, 3, 40),
    (operator.pow, 2, -1),
    (operator.pow, 0, -1),
    (operator.pow, Input(-8.0), 1 / 3),
    (operator.pow, 10.0, 400),
    (operator.pow, 2.0, 0.5),
    (operator.truediv, 2**53 + 1, 3),
    (operator.truediv, INT64_MAX, 7),
    (operator.truediv, INT64_MIN, -3),
    (operator.truediv, 0, -5),
    (operator.truediv, 1, 0),
    # Shifts.
    (operator.lshift, 1, 62),
    (operator.lshift, 1, 63),
    (operator.lshift, 3, 62),
    (operator.lshift, 1, 64),
    (operator.lshift, -1, 63),
    (operator.lshift, 0, 100),
    (operator.lshift, 1, -1),
    (operator.rshift, 5, 64),
    (operator.rshift, -1, 100),
    (operator.rshift, -9, 2),
    (operator.rshift, 8, -1),
    (operator.ilshift, Input(1), -1),
    # An int against a float, exactly.
    (operator.eq, 2**53 + 1, float(2**53)),
    (operator.lt, 2**53, float(2**53 + 2)),
    (operator.gt, 2**53 + 1, float(2**53)),
    (operator.eq, float(2**53), 2**53 + 1),
    (operator.eq, INT64_MAX, 2.0**63),
    (operator.lt, INT64_MAX, 2.0**63),
    (operator.ne, 1, float("nan")),
    (operator.lt, 1, float("nan")),
    (operator.eq, 1, 1.0),
    (operator.eq, True, 1.0),
    (operator.eq, (2**53 + 1,), (2**53,)),
    (operator.contains, [2**53], 2**53 + 1),
    # Lexicographic comparisons.
    (operator.lt, "ab", "b"),
    (operator.ge, "b", "ab"),
    (operator.lt, "é", "z"),
    (operator.lt, [1, 2], [1, 3]),
    (operator.le, [1, 2], [1, 2]),
    (operator.ge, (1, 2), (1,)),
    (operator.gt, (1, [2, 3]), (1, [2])),
    (operator.lt, [1], (1,)),
    (operator.lt, None, 1),
    (operator.lt, "a", 1),
    # Equality and membership of other values.
    (operator.eq, {"a": 1}, {"a": 1}),
    (operator.eq, {"a": 1}, {"a": 2}),
    (operator.eq, slice(1, 2), slice(1, 2)),
    (operator.eq, slice(1, 2), slice(1, 3)),
    (operator.contains, "abc", "b"),
    (operator.contains, "abc", "d"),
    (operator.contains, "abc", 1),
    (operator.contains, {"a": 1}, "a"),
    (operator.contains, {1: "a"}, True),
    (operator.contains, 5, 1),
    # Truth values and unary operators.
    (operator.not_, 1.5),
    (operator.not_, 0.0),
    (operator.not_, ""),
    (operator.not_, "a"),
    (operator.not_, []),
    (operator.not_, [0]),
    (operator.not_, ()),
    (operator.not_, None),
    (operator.not_, {}),
    (operator.truth, [1]),
    (operator.truth, 0),
    (operator.pos, True),
    (operator.pos, "a"),
    (operator.pos, -2.5),
    (operator.neg, True),
    (operator.neg, "a"),
    (operator.neg, [1]),
    (operator.invert, True),
    (operator.invert, 1.5),
    (operator.abs, None),
    (operator.abs, -2.5),
    (operator.index, 3),
    (operator.index, True),
    (operator.index, 2.0),
    # Indexing and slicing.
    (operator.getitem, [1, 2, 3], slice(1, None, INT64_MAX)),
    (operator.getitem, [1, 2, 3], slice(None, None, -INT64_MAX)),
    (operator.getitem, [1, 2, 3], slice(INT64_MIN, INT64_MAX, 2)),
    (operator.getitem, [1, 2, 3, 4, 5], slice(-2, None, -2)),
    (operator.getitem, [1, 2, 3], slice(True, None)),
    (operator.getitem, [1, 2, 3], slice(None, None, 0)),
    (operator.getitem, [1, 2, 3], slice(1.5, None)),
    (operator.getitem, (1, 2), 5),
    (operator.getitem, torch.Size([1]), 5),
    (operator.getitem, [1, 2], -3),
    (operator.getitem, [1, 2], True),
    (operator.getitem, (1, 2), 1.0),
    (operator.getitem, "abcdef", slice(None, None, 2)),
    (operator.getitem, "abcdef", slice(None, None, -1)),
    (operator.getitem, "hé!", 1),
    (operator.getitem, "hé!", -1),
    (operator.getitem, "hé!", slice(1, None)),
    (operator.getitem, "abc", 5),
    (operator.getitem, "abc", 1.5),
    (operator.getitem, {1: "a"}, True),
    (operator.getitem, {1: "a"}, 1.0),
    (operator.getitem, {1: "a"}, 2),
    (operator.getitem, {"a": 1}, "b"),
    (operator.getitem, 5, 0),
    (len, "hé!"),
    (len, {"a": 1, "b": 2}),
    (len, None),
    # Concatenation.
    (operator.concat, [1], [2]),
    (operator.concat, "a", "b"),
    (operator.concat, 1, 2),
    (operator.add, [1], (2,)),
    (operator.add, "a", 1),
    (operator.iadd, Input((1,)), [2]),
    (operator.add, 1, "a"),
    (operator.iadd, Input(1), "x"),
    (operator.ipow, Input(1), "x"),
    (operator.pow, 1, "x"),
    (operator.matmul, 1, 2),
    # int() and float() of strs and floats; math's domain and range.
    (int, "12"),
    (int, " -1_000 "),
    (int, "1.5"),
    (int, "1__0"),
    (int, ""),
    (int, 2.9),
    (int, -2.9),
    (int, float("nan")),
    (int, float("inf")),
    (int, 1e20),
    (float, "1.5"),
    (float, " -1_0.5e1_0 "),
    (float, "inf"),
    (float, "-Infinity"),
    (float, "0x10"),
    (float, "1e"),
    (float, "abc"),
    (math.sqrt, -1.0),
    (math.sqrt, 4.0),
    (math.log, 0.0),
    (math.log, -1.0),
    (math.exp, 1000.0),
    (math.exp, 1.0),
    (math.sin, float("inf")),
    (math.tanh, 1000.0),
    (math.floor, 2**53 + 1),
    (math.floor, -2.5),
    (math.ceil, 2.1),
    (math.floor, float("inf")),
    (math.floor, float("nan")),
]

TENSOR_CASES = [
    (operator.eq, [T(1)], [T(1)]),
    (operator.eq, [T([1, 2])], [T([1, 2])]),
    (operator.contains, [T(3)], 3),
    (operator.contains, T([1, 2]), 2),
    (operator.contains, T([1, 2]), 5),
    (operator.not_, T(0)),
    (operator.not_, T(2.5)),
    (operator.not_, T([1, 0])),
    (operator.not_, T([])),
    (operator.getitem, (10, 20), T(1)),
    (operator.getitem, (10, 20), T(1.7)),
    (operator.getitem, "abc", T(1)),
    (operator.index, T(4)),
    (operator.index, T(4.0)),
    (int, T(2.7)),
    (int, T(-2.7)),
]


def _name(case):
    fn, *args = case
    return f"{getattr(fn, '__name__', fn)}{tuple(args)!r}"[:90]


def _graph(fn, args):
    """A GraphModule calling fn once: tensors (a graph cannot hold them as
    constants) and Input(...) values come in as placeholders, everything
    else is a constant."""
    g = torch.fx.Graph()
    inputs, call_args = [], []
    for i, a in enumerate(args):
        if isinstance(a, Input):
            a = a.value
        elif not isinstance(a, torch.Tensor) and not (
                isinstance(a, list) and any(isinstance(x, torch.Tensor)
                                            for x in a)):
            call_args.append(a)
            continue
        call_args.append(g.placeholder(f"x{i}"))
        inputs.append(a)
    g.output(g.call_function(fn, tuple(call_args)))
    return torch.fx.GraphModule(torch.nn.Module(), g), inputs


def _outcome(gm, inputs):
    try:
        return gm(*inputs), None
    except Exception as e:  # noqa: BLE001 (refusals are compared)
        return None, e


def _same(got, want):
    if isinstance(want, torch.Tensor):
        return isinstance(got, torch.Tensor) and torch.equal(got, want)
    if isinstance(want, float) and math.isnan(want):
        return isinstance(got, float) and math.isnan(got)
    if isinstance(want, float) and want == 0:
        return (type(got) is float and got == 0
                and math.copysign(1, got) == math.copysign(1, want))
    if isinstance(want, (list, tuple)):
        return (type(got) is type(want) and len(got) == len(want)
                and all(_same(x, y) for x, y in zip(got, want)))
    return type(got) is type(want) and got == want


def _beyond_the_runtime(value):
    """Python's result the runtime cannot hold: an int beyond 64 bits or a
    complex number."""
    return (isinstance(value, int) and not isinstance(value, bool)
            and not INT64_MIN <= value <= INT64_MAX) or isinstance(
                value, complex)


def _check(case):
    fn, *args = case
    gm, inputs = _graph(fn, args)
    want, want_error = _outcome(gm, inputs)
    got, got_error = _outcome(fx_sdk.from_torch_fx(gm), inputs)
    if want_error is not None:
        assert got_error is not None, (
            f"Python raises {want_error!r}, the SDK returns {got!r}")
        message = str(want_error).split("\n")[0]
        assert message in str(got_error), (
            f"Python: {type(want_error).__name__}: {message}; "
            f"the SDK: {got_error}")
        return
    if _beyond_the_runtime(want):
        assert got_error is not None, (
            f"Python's {want!r} is beyond the runtime, the SDK returns "
            f"{got!r}")
        expected = ("OverflowError" if isinstance(want, int) else
                    "ValueError")
        assert expected in str(got_error)
        return
    assert got_error is None, f"Python returns {want!r}, the SDK raises " \
        f"{got_error}"
    assert _same(got, want), f"Python: {want!r}, the SDK: {got!r}"


@pytest.mark.parametrize("case", CASES, ids=[_name(c) for c in CASES])
def test_operator_matches_python(case):
    _check(case)


@pytest.mark.parametrize("case", TENSOR_CASES,
                         ids=[_name(c) for c in TENSOR_CASES])
def test_operator_on_tensors_matches_python(case):
    _check(case)


BINARY_INT_OPS = [operator.add, operator.sub, operator.mul, operator.truediv,
                  operator.floordiv, operator.mod, operator.lshift,
                  operator.rshift, operator.eq, operator.lt, operator.ge]


@pytest.mark.parametrize("fn", BINARY_INT_OPS, ids=lambda f: f.__name__)
def test_random_ints_and_floats_match_python(fn):
    """One graph, 400 random pairs of ints of every magnitude up to 64 bits
    (and ints against floats near 2**53 for the comparisons): each result
    Python's, or an OverflowError where Python's int leaves 64 bits."""
    import random
    rng = random.Random(fn.__name__)
    g = torch.fx.Graph()
    g.output(g.call_function(fn, (g.placeholder("a"), g.placeholder("b"))))
    gm = torch.fx.GraphModule(torch.nn.Module(), g)
    sdk = fx_sdk.from_torch_fx(gm)
    for _ in range(400):
        a = rng.choice([1, -1]) * rng.getrandbits(rng.randint(1, 63))
        if fn in (operator.lshift, operator.rshift):
            b = rng.randint(0, 70)
        elif fn in (operator.eq, operator.lt, operator.ge):
            a = 2**53 + rng.randint(-3, 3)
            b = float(2**53 + rng.choice([-2, 0, 2]))
        else:
            b = rng.choice([1, -1]) * rng.getrandbits(rng.randint(1, 63))
        want, want_error = _outcome(gm, [a, b])
        got, got_error = _outcome(sdk, [a, b])
        if want_error is not None:
            assert got_error is not None and str(want_error).split("\n")[
                0] in str(got_error), (a, b, want_error, got_error)
        elif _beyond_the_runtime(want):
            assert got_error is not None and "OverflowError" in str(
                got_error), (a, b, want, got)
        else:
            assert got_error is None and _same(got, want), (a, b, want, got,
                                                            got_error)


MUTATION_CASES = [
    (operator.setitem, [1, 2], 0, 5),
    (operator.setitem, [1, 2], -1, 7),
    (operator.setitem, [1, 2], 5, 1),
    (operator.setitem, {"a": 1}, "b", 2),
    (operator.setitem, {"a": 1}, "a", 3),
    (operator.setitem, (1, 2), 0, 1),
    (operator.iadd, [1], "ab"),
    (operator.iadd, [1], {"a": 1}),
    (operator.iadd, [1], T([5, 6])),
    (operator.iadd, [1], T(5)),
    (operator.iadd, [1], 5),
]


@pytest.mark.parametrize("case", MUTATION_CASES,
                         ids=[_name(c) for c in MUTATION_CASES])
def test_mutation_matches_python(case):
    """The container after operator.setitem or list += (the graph returns
    its first input, read after the call)."""
    fn, first, *rest = case
    g = torch.fx.Graph()
    x = g.placeholder("x")
    # A tensor operand comes in as an input too (a graph holds no tensor
    # constants).
    tensors = [a for a in rest if isinstance(a, torch.Tensor)]
    rest = [g.placeholder("y") if isinstance(a, torch.Tensor) else a
            for a in rest]
    g.call_function(fn, (x, *rest))
    g.output(x)
    gm = torch.fx.GraphModule(torch.nn.Module(), g)
    import copy
    want, want_error = _outcome(gm, [copy.deepcopy(first), *tensors])
    got, got_error = _outcome(fx_sdk.from_torch_fx(gm),
                              [copy.deepcopy(first), *tensors])
    if want_error is not None:
        assert got_error is not None, (want_error, got)
        assert str(want_error).split("\n")[0] in str(got_error)
        return
    assert got_error is None, got_error
    if isinstance(want, dict):
        assert got == want
    else:
        assert _same(got, want), (want, got)
