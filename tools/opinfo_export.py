#!/usr/bin/python3
"""Exports PyTorch's operator database (OpInfo) as one-node fx-graph bundles.

    /usr/bin/python3 tools/opinfo_export.py -o DIR [--seed 0]
        [--max-samples-per-op N] [--ops NAME,NAME...]

For every OpInfo of torch.testing._internal.common_methods_invocations.op_db
(621 entries in torch 1.13) and every float32 CPU sample of it
(op.sample_inputs('cpu', torch.float32)), the call op(sample.input,
*sample.args, **sample.kwargs) is exported once for the function variant
(op.op) and once for the method variant (op.method_variant, when there is one)
as the graph torch.fx records for it:

  - every tensor argument, also inside lists, tuples and dicts of args and
    kwargs, is a placeholder (x0, x1, ... in the order met); everything else is
    a constant of the node;
  - the graph is symbolically traced (torch.fx.symbolic_trace of a function
    taking the placeholders and making the call), so the node holds what
    torch.fx really records: torch.nn.functional and torch.functional
    functions as one call_function with the arguments their
    __torch_function__ handling passes on, Tensor methods as call_method,
    reflected operators (__radd__, ...) as operator.*; OpInfo's own lambdas are
    traced through to the torch calls they make;
  - when tracing records no call (no tensor argument, so torch.fx would fold the
    call into a constant) or fails, a named torch callable becomes the one
    call_function node directly (what torch.fx records for it under
    torch.fx.wrap) and the case says so ("how": "direct").

Each case is written by tools/torchfx_export.py's export() into
DIR/cases/NNNNN/ (graph.fx.json, model.weights.pt when there are constants,
input.pt, expected.pt). expected.pt is PyTorch eager's result, computed right
after torch.manual_seed(SEED): a runner seeds LibTorch the same way before
running the graph, so random ops (dropout, bernoulli, rand_like ...) are
compared too. Each case is run eagerly five times more on copies of its
inputs with the same seed: once as is, once with LibTorch's CPU allocator
zero-filling every new block and once with it junk-filling (c10's
caffe2_cpu_allocator_do_{zero,junk}_fill flags, so a result read from
uninitialised memory, as empty's, always differs), twice after memory was
filled with one of two values and freed; when those results differ
(uninitialised memory, nondeterministic kernels) the case is marked
"reproducible": false and a runner compares only its structure, dtypes and
shapes. torch.save (1.13) drops a tensor's conjugate and negative bits, so a
lazily conjugated result (fft.ifft's) would be saved as its conjugate: such an
expected.pt is rewritten with the same eager result materialised.

A case that cannot be exported (a constant the fx-graph format cannot encode,
torch.fx failing, eager PyTorch itself raising) is kept in the index with its
reason. DIR/index.json lists every case: op name, variant, sample index, and
its directory or its skip reason; ops OpInfo runs without float32 on CPU, or
without samples, appear once with that reason.

Deterministic: each op's samples are made after torch.manual_seed(SEED).
--max-samples-per-op caps the samples taken from each op (every op is kept).
Needs Debian's /usr/bin/python3 with python3-torch.
"""

import argparse
import contextlib
import ctypes
import io
import json
import math
import os
import shutil
import sys
import time
import types
import unittest
import warnings

import torch
import torch.fx

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from torchfx_export import encode, export, qualified_function_name  # noqa: E402


def load_op_db():
    """op_db, imported without the test-only packages it does not need.

    torch.testing._internal.common_utils imports `expecttest` (a PyPI-only
    package Debian does not ship) for its TestCase base class, and parses
    sys.argv for unittest's flags. Neither matters here: a stand-in module is
    given and argv hidden during the import."""
    if "expecttest" not in sys.modules:
        try:
            import expecttest  # noqa: F401
        except ImportError:
            stand_in = types.ModuleType("expecttest")
            stand_in.TestCase = unittest.TestCase
            stand_in.ACCEPT = False
            sys.modules["expecttest"] = stand_in
    argv = sys.argv
    sys.argv = argv[:1]
    try:
        from torch.testing._internal.common_methods_invocations import op_db
    finally:
        sys.argv = argv
    return op_db


# Arguments: tensors out, placeholders in.


def collect_tensors(value, found):
    """Appends every tensor in `value` (through lists, tuples, dicts)."""
    if isinstance(value, torch.Tensor):
        found.append(value)
    elif isinstance(value, (list, tuple)):
        for v in value:
            collect_tensors(v, found)
    elif isinstance(value, dict):
        for v in value.values():
            collect_tensors(v, found)


def substitute(value, replacements):
    """`value` with its tensors replaced, in collect_tensors' order, by the
    next items of the iterator `replacements`."""
    if isinstance(value, torch.Tensor):
        return next(replacements)
    if isinstance(value, (list, tuple)):
        items = [substitute(v, replacements) for v in value]
        if isinstance(value, list):
            return items
        if type(value) is tuple:
            return tuple(items)
        try:  # torch.Size, named tuples
            return type(value)(items)
        except TypeError:
            return type(value)(*items)
    if isinstance(value, dict):
        return {k: substitute(v, replacements) for k, v in value.items()}
    return value


def is_tensor_method(fn):
    """torch.Tensor's methods: C descriptors and Python ones (Tensor.split)."""
    if isinstance(fn, (types.MethodDescriptorType, types.WrapperDescriptorType)):
        return getattr(fn, "__objclass__", None) in (torch.Tensor,
                                                    torch._C._TensorBase)
    if isinstance(fn, types.FunctionType):
        name = getattr(fn, "__name__", "")
        return fn.__qualname__ == "Tensor." + name and \
            getattr(torch.Tensor, name, None) is fn
    return False


def nameable(fn):
    """A torch callable torch.fx can name as a call_function target (not one of
    OpInfo's lambdas or helpers)."""
    if isinstance(fn, torch._ops.OpOverload):
        return True
    try:
        name = torch.fx.node._get_qualified_name(fn)
    except Exception:  # noqa: BLE001 - objects without __module__/__name__
        return False
    return name.startswith("torch.") and "<" not in name and \
        not name.startswith("torch.testing.")


def trace_call(call, tensors):
    """symbolic_trace of a function of one parameter per tensor that makes
    `call(placeholders)`."""
    names = [f"x{i}" for i in range(len(tensors))]
    source = (f"def forward({', '.join(names)}):\n"
              f"    return _call([{', '.join(names)}])\n")
    scope = {"_call": call}
    exec(source, scope)  # noqa: S102 - our own two-line function
    return torch.fx.symbolic_trace(scope["forward"])


def direct_graph(fn, args, kwargs, count):
    """The one-node graph: placeholders, call_function(fn), output."""
    graph = torch.fx.Graph()
    placeholders = iter([graph.placeholder(f"x{i}") for i in range(count)])
    node = graph.call_function(fn, substitute(args, placeholders),
                               substitute(kwargs, placeholders))
    graph.output(node)
    return torch.fx.GraphModule(torch.nn.Module(), graph)


def build_graph(fn, variant, sample):
    """(GraphModule, example inputs, how) for one call of `fn`, or raises with
    the reason it cannot be built. `how` is "traced", or "direct: WHY" when
    tracing gave no graph."""
    args = resolved((sample.input,) + tuple(sample.args))
    kwargs = resolved(dict(sample.kwargs))
    tensors = []
    collect_tensors((args, kwargs), tensors)
    # Tensor methods are called as methods, so torch.fx records what a user
    # writing x.NAME(...) gets; OpInfo's lambdas are called and traced through.
    method = is_tensor_method(fn)
    if method:
        name = fn.__name__

        def call(xs):
            a, k = substitute((args, kwargs), iter(xs))
            return getattr(a[0], name)(*a[1:], **k)
    else:
        def call(xs):
            a, k = substitute((args, kwargs), iter(xs))
            return fn(*a, **k)

    trace_error = None
    try:
        gm = trace_call(call, tensors)
        calls = [n for n in gm.graph.nodes
                 if n.op in ("call_function", "call_method", "call_module")]
        if calls:
            return gm, tensors, "traced"
        trace_error = "torch.fx records no call (folded into a constant)"
    except Exception as e:  # noqa: BLE001 - any tracing failure is a reason
        trace_error = f"torch.fx cannot trace it: {type(e).__name__}: " + \
            first_line(str(e))
    if not method and nameable(fn):
        return (direct_graph(fn, args, kwargs, len(tensors)), tensors,
                "direct: " + trace_error)
    raise RuntimeError(trace_error)


def lazy_bits(value):
    """True when a tensor in `value` carries a conjugate or negative bit, which
    torch.save in torch 1.13 drops (a saved x.conj() loads as x)."""
    found = []
    collect_tensors(value, found)
    return any(t.is_conj() or t.is_neg() for t in found)


def resolved(value):
    """`value` with conjugate and negative bits materialised."""
    found = []
    collect_tensors(value, found)
    return substitute(value, iter([t.resolve_conj().resolve_neg()
                                   for t in found]))


class AllocatorFill:
    """Makes LibTorch's CPU allocator zero-fill ("zero") or junk-fill ("junk")
    each block it hands out, through c10's gflags booleans; a no-op where the
    loaded libc10 does not export them."""

    # As gflags declares them (namespace fLB, Debian's libc10), else as
    # c10's own flags without gflags declare them (plain globals).
    _NAMES = (("zero", "FLAGS_caffe2_cpu_allocator_do_zero_fill"),
              ("junk", "FLAGS_caffe2_cpu_allocator_do_junk_fill"))
    _SPELLINGS = ({mode: f"_ZN3fLB{len(name)}{name}E" for mode, name in _NAMES},
                  {mode: name for mode, name in _NAMES})
    _flags = None

    @classmethod
    def flags(cls):
        if cls._flags is None:
            cls._flags = {}
            with open("/proc/self/maps") as maps:
                paths = {line.split()[5] for line in maps
                         if "/libc10.so" in line and len(line.split()) > 5}
            for path in paths:
                try:
                    lib = ctypes.CDLL(path)
                except OSError:
                    continue
                for spelling in cls._SPELLINGS:
                    try:
                        cls._flags = {mode: ctypes.c_bool.in_dll(lib, symbol)
                                      for mode, symbol in spelling.items()}
                        break
                    except ValueError:
                        continue
                if cls._flags:
                    break
            if not cls._flags:
                print("opinfo_export: libc10 exports no allocator fill flags;"
                      " uninitialised results are found by poisoning only",
                      file=sys.stderr)
        return cls._flags

    def __init__(self, mode):
        self.flag = self.flags().get(mode)

    def __enter__(self):
        if self.flag is not None:
            self.flag.value = True

    def __exit__(self, *exc):
        if self.flag is not None:
            self.flag.value = False


def poison(result, value):
    """Allocates, fills with `value` and frees memory the size of each strided
    tensor of `result`: the allocator hands those blocks out next."""
    found = []
    collect_tensors(result, found)
    blocks = []
    for t in found:
        try:
            blocks.append(torch.full((t.storage().size(),), value,
                                     dtype=t.dtype))
        except Exception:  # noqa: BLE001 - sparse, quantized: not poisoned
            pass
    del blocks


def first_line(text):
    text = text.strip()
    return text.splitlines()[0] if text else ""


# Results, compared between eager runs.


def same_result(a, b):
    if isinstance(a, torch.Tensor) or isinstance(b, torch.Tensor):
        if not (isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor)):
            return False
        if a.dtype != b.dtype or a.shape != b.shape or a.layout != b.layout:
            return False
        if a.layout != torch.strided:
            a, b = a.to_dense(), b.to_dense()
        return bool(torch.equal(a, b)) or bool(
            torch.isclose(a, b, rtol=0, atol=0, equal_nan=True).all()) \
            if a.dtype != torch.bool and not a.is_quantized else \
            bool(torch.equal(a, b))
    if isinstance(a, (list, tuple)):
        return type(a) is type(b) and len(a) == len(b) and all(
            same_result(x, y) for x, y in zip(a, b))
    if isinstance(a, float) and isinstance(b, float):
        return a == b or (math.isnan(a) and math.isnan(b))
    return type(a) is type(b) and a == b


def describe(value):
    """A short text of an argument: f32[5, 5] for tensors."""
    if isinstance(value, torch.Tensor):
        dtype = str(value.dtype).replace("torch.", "")
        text = f"{dtype}{list(value.shape)}"
        if value.layout != torch.strided:
            text += f"({str(value.layout).replace('torch.', '')})"
        return text
    if isinstance(value, list):
        return "[" + ", ".join(describe(v) for v in value) + "]"
    if isinstance(value, tuple):
        return "(" + ", ".join(describe(v) for v in value) + \
            ("," if len(value) == 1 else "") + ")"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k!r}: {describe(v)}"
                               for k, v in value.items()) + "}"
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def describe_call(sample):
    parts = [describe(sample.input)] + [describe(a) for a in sample.args]
    parts += [f"{k}={describe(v)}" for k, v in sample.kwargs.items()]
    return "(" + ", ".join(parts) + ")"


def export_case(fn, variant, sample, case_dir, seed):
    """Writes one bundle. Returns the index fields, or raises with the reason
    the case could not be exported."""
    gm, tensors, how = build_graph(fn, variant, sample)
    try:  # what the format cannot hold, before anything runs
        for node in gm.graph.nodes:
            encode((node.args, node.kwargs), "")
    except ValueError as e:
        raise RuntimeError(f"cannot export: ValueError: "
                           f"{str(e).split(': ', 1)[-1]}") from e
    # Five eager runs on copies (ops may mutate their inputs), same seed: as
    # is, with new blocks zero-filled, junk-filled, and twice right after
    # memory of the result's size was filled with 1 or 3 and freed, so that a
    # result holding uninitialised memory (empty_like) comes out different.
    # (A failing GraphModule prints its generated code to stderr: hidden.)
    runs = []
    try:
        with torch.no_grad(), contextlib.redirect_stderr(io.StringIO()):
            for fill in (None, "zero", "junk", 1, 3):
                inputs = [t.clone() for t in tensors]
                if isinstance(fill, int):
                    poison(runs[0], fill)
                torch.manual_seed(seed)
                with AllocatorFill(fill):
                    runs.append(gm(*inputs))
    except Exception as e:  # noqa: BLE001
        raise RuntimeError(f"eager PyTorch raises: {type(e).__name__}: "
                           f"{first_line(str(e))}") from e
    try:
        torch.manual_seed(seed)
        export(gm, tensors, case_dir)  # expected.pt: a third eager run
    except Exception as e:  # noqa: BLE001
        shutil.rmtree(case_dir, ignore_errors=True)
        message = first_line(str(e))
        if message.startswith("node '"):
            message = message.split(": ", 1)[-1]  # "node 'x': cannot encode"
        raise RuntimeError(f"cannot export: {type(e).__name__}: {message}") \
            from e
    # torch.save would write a lazily conjugated result (fft.ifft's) as its
    # conjugate: the same eager result, materialised, is written instead.
    if lazy_bits(runs[0]):
        torch.save(resolved(runs[0]), os.path.join(case_dir, "expected.pt"))
    nodes = [n for n in gm.graph.nodes
             if n.op not in ("placeholder", "output", "get_attr")]
    target = None
    if nodes:
        target = nodes[0].target
        if nodes[0].op == "call_function":
            target = qualified_function_name(target)
    return {
        "how": how,
        "nodes": len(nodes),
        "opcode": nodes[0].op if nodes else None,
        "target": str(target),
        "reproducible": all(same_result(runs[0], r) for r in runs[1:]),
    }


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("-o", "--output", required=True, metavar="DIR")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--max-samples-per-op", type=int, default=0,
                        metavar="N", help="0: every sample (the default)")
    parser.add_argument("--ops", default="",
                        help="comma-separated OpInfo names (default: all)")
    args = parser.parse_args(argv)

    warnings.simplefilter("ignore")
    torch.set_num_threads(1)
    op_db = load_op_db()
    wanted = set(filter(None, args.ops.split(",")))
    cases = []
    if os.path.isdir(os.path.join(args.output, "cases")):
        shutil.rmtree(os.path.join(args.output, "cases"))
    os.makedirs(os.path.join(args.output, "cases"), exist_ok=True)
    start = time.time()
    ops_seen = 0
    for op in op_db:
        full_name = op.name + ("." + op.variant_test_name
                               if op.variant_test_name else "")
        if wanted and op.name not in wanted and full_name not in wanted:
            continue
        ops_seen += 1
        variants = [("function", op.op)]
        if op.method_variant is not None:
            variants.append(("method", op.method_variant))

        def skip_op(reason):
            for variant, _ in variants:
                cases.append({"op": full_name, "variant": variant,
                              "sample": None, "skip": reason})

        if torch.float32 not in op.supported_dtypes("cpu"):
            skip_op("OpInfo: float32 is not supported on CPU")
            continue
        torch.manual_seed(args.seed)
        try:
            samples = list(op.sample_inputs("cpu", torch.float32))
        except Exception as e:  # noqa: BLE001
            skip_op(f"OpInfo's sample_inputs raises: {type(e).__name__}: "
                    f"{first_line(str(e))}")
            continue
        if not samples:
            skip_op("OpInfo has no float32 CPU samples")
            continue
        if args.max_samples_per_op > 0:
            samples = samples[:args.max_samples_per_op]
        for index, sample in enumerate(samples):
            for variant, fn in variants:
                case = {"op": full_name, "variant": variant, "sample": index,
                        "call": describe_call(sample), "seed": args.seed}
                case_dir = os.path.join("cases", f"{len(cases):05d}")
                try:
                    case.update(export_case(
                        fn, variant, sample,
                        os.path.join(args.output, case_dir), args.seed))
                    case["dir"] = case_dir
                except Exception as e:  # noqa: BLE001
                    case["skip"] = str(e) if isinstance(e, RuntimeError) \
                        else f"{type(e).__name__}: {first_line(str(e))}"
                cases.append(case)
    exported = sum(1 for c in cases if "dir" in c)
    index = {
        "torch": torch.__version__,
        "seed": args.seed,
        "max_samples_per_op": args.max_samples_per_op,
        "ops": ops_seen,
        "exported": exported,
        "skipped": len(cases) - exported,
        "seconds": round(time.time() - start, 1),
        "cases": cases,
    }
    with open(os.path.join(args.output, "index.json"), "w") as f:
        json.dump(index, f, indent=1)
    print(f"{ops_seen} ops, {len(cases)} cases: {exported} exported, "
          f"{len(cases) - exported} not exported, "
          f"{index['seconds']} s -> {args.output}/index.json")


if __name__ == "__main__":
    main(sys.argv[1:])
