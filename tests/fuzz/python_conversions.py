"""A fuzzer for fx_sdk's conversions (issue 34 item 7): torch.fx graphs
built at random, with every kind of Python value torch.fx lets a node hold
as an argument (numbers at their limits, NaN, strings with quotes, line
breaks and non-ASCII, slices, Ellipsis, dtypes, devices, layouts, memory
formats, torch.Size, complex numbers, bytes, nested tuples, lists and dicts
up to thousands deep, tensors, Python objects), go through
fx_sdk.from_torch_fx, the graph text, the code, to_torch_fx and a run.

Each case is one seed. A case passes when the SDK either accepts the graph
or raises an Exception with a message, and never kills the process: cases
run in a child process, and a child that dies by a signal is a crash (its
seed printed, to replay with --seed).

  python3 tests/fuzz/python_conversions.py --seed 17          # one case
  python3 tests/fuzz/python_conversions.py --cases 0:300      # seeds 0..299
  python3 tests/fuzz/python_conversions.py --seconds 600      # a campaign
  python3 tests/fuzz/python_conversions.py --cases 0:1000000 --jobs 2

--jobs N runs N children at once (one a core), each on its own batch of
consecutive seeds (--batch, 20,000 by default: a child's start, importing
fx_sdk and warming torch.fx and LibTorch, costs seconds, and with batches of
1,000 it took two thirds of a campaign's time); a campaign given as --cases
ranges can be split over several runs of the same build, since each seed is
the same case anywhere.

Exit status 1 when a case crashed, ran longer than --timeout seconds (30
by default; the child is killed), or raised an exception without a
message. Each child's address space is capped at its size after importing
fx_sdk plus --memory MB (2048): a case that allocates more must get an
error from the SDK, as it does from PyTorch.
No Atheris: the values come from random.Random(seed), so every seed is a
reproducer.
"""

import argparse
import concurrent.futures
import math
import multiprocessing
import operator
import random
import resource
import sys
import time

import torch
import torch.fx

# Outcomes that are findings, and the per-case limits (--timeout, --memory).
FINDINGS = ("crash", "bad error", "timeout")
TIMEOUT_SECONDS = 30
MEMORY_MB = 2048

# Imported in the child only (a crash there must not kill the driver).
fx_sdk = None

TEXTS = ["", "x", "a'b", 'a"b', "line\nbreak", "tab\t", "\\", "é", "ｅｖａｌ",
         "__import__('os')", "f'{x}'", "\x00", "a;b", "}{", "\ud7ff"]
INTS = [0, 1, -1, 2, 7, 2**31 - 1, -2**31, 2**63 - 1, -2**63, 2**64, -2**70]
FLOATS = [0.0, -0.0, 1.5, -2.25, math.inf, -math.inf, math.nan, 1e308,
          5e-324]
ATOMS = [None, True, False, Ellipsis, torch.float32, torch.int64,
         torch.bool, torch.complex64, torch.device("cpu"),
         torch.device("meta"), torch.strided, torch.sparse_coo,
         torch.contiguous_format, torch.channels_last, 1 + 2j, b"bytes",
         torch.Size([2, 3]), torch.Size([])]


def random_value(rng, depth=0, max_depth=4):
    """A value torch.fx keeps as a node argument."""
    kind = rng.randrange(12 if depth < max_depth else 6)
    if kind == 0:
        return rng.choice(INTS)
    if kind == 1:
        return rng.choice(FLOATS)
    if kind == 2:
        return rng.choice(TEXTS)
    if kind == 3:
        return rng.choice(ATOMS)
    if kind == 4:
        return torch.rand(rng.randrange(4)) if rng.random() < 0.5 else \
            torch.tensor(rng.choice(INTS[:6]))
    if kind == 5:
        return slice(*[rng.choice([None, 0, 1, -1, 2**40])
                       for _ in range(rng.randrange(1, 4))])
    items = [random_value(rng, depth + 1, max_depth)
             for _ in range(rng.randrange(4))]
    if kind in (6, 7):
        return tuple(items)
    if kind in (8, 9):
        return list(items)
    keys = [rng.choice(["a", "b", "key", "x y", "é", ""]) for _ in items]
    return dict(zip(keys, items))


# Nesting depths for deep(): either side of the SDK's 1000-level limits
# (kMaxValueDepth, kMaxJsonDepth, kMaxPickleDepth), and far past them.
DEPTHS = [10, 200, 999, 1000, 1001, 3000]


def deep(rng, depth):
    """A tuple, list or dict nested `depth` levels."""
    value = rng.choice([1, None, "leaf"])
    for _ in range(depth):
        value = rng.choice([(value,), [value], {"k": value}])
    return value


CALLS = [torch.add, torch.relu, torch.cat, operator.add, operator.getitem,
         operator.mul, torch.stack, torch.sum, torch.zeros, getattr, max,
         torch.nn.functional.relu, torch.where, len]
METHODS = ["view", "size", "to", "clamp", "sum", "reshape", "transpose",
           "__add__", "relu", "expand", "float", "get"]


def random_graph(rng):
    """A GraphModule of a few random nodes over one or two placeholders."""
    root = torch.nn.Module()
    root.lin = torch.nn.Linear(3, 3)
    root.register_buffer("buf", torch.rand(3))
    graph = torch.fx.Graph()
    values = [graph.placeholder(rng.choice(["x", "y", "input", "self_",
                                            "a_b", "x_1"]))
              for _ in range(rng.randrange(1, 3))]
    for _ in range(rng.randrange(1, 7)):
        values.append(random_node(rng, graph, values))
    out = rng.choice([values[-1], tuple(values), {"out": values[-1]},
                      [values[0], None], random_value(rng)])
    graph.output(out)
    return torch.fx.GraphModule(root, graph)


def random_arg(rng, values):
    if rng.random() < 0.5:
        return rng.choice(values)
    # Rare: a value 1000 levels deep costs torch.fx 40 ms to build, 30
    # times a whole ordinary case.
    if rng.random() < 0.005:
        return deep(rng, rng.choice(DEPTHS))
    return random_value(rng)


def random_node(rng, graph, values):
    args = tuple(random_arg(rng, values) for _ in range(rng.randrange(3)))
    kwargs = {rng.choice(["dim", "alpha", "out", "dtype", "k", "input"]):
              random_arg(rng, values) for _ in range(rng.randrange(2))}
    op = rng.randrange(5)
    if op == 0:
        return graph.call_method(rng.choice(METHODS),
                                 (rng.choice(values),) + args, kwargs)
    if op == 1:
        return graph.get_attr(rng.choice(["buf", "lin.weight", "lin"]))
    if op == 2:
        return graph.call_module("lin", (rng.choice(values),))
    return graph.call_function(rng.choice(CALLS), args, kwargs)


def random_inputs(rng, gm):
    count = sum(1 for n in gm.graph.nodes if n.op == "placeholder")
    return [torch.rand(rng.choice([(3,), (2, 3), ()])) for _ in range(count)]


def check_error(error, step):
    """An exception from the SDK must say what is wrong."""
    if not str(error).strip():
        raise AssertionError(f"{step}: {type(error).__name__} without a "
                             "message")


def run_case(seed):
    """One seed through every conversion; AssertionError on a bad error."""
    rng = random.Random(seed)
    try:
        gm = random_graph(rng)
    except Exception:  # torch.fx itself refuses: nothing to check
        return "torch refused"
    try:
        sdk = fx_sdk.from_torch_fx(gm)
    except Exception as e:  # noqa: BLE001 (any refusal, with a message)
        check_error(e, "from_torch_fx")
        return "refused"
    for step, action in (("graph_text", lambda: sdk.graph_text),
                         ("code", lambda: sdk.code),
                         ("to_torch_fx", lambda: fx_sdk.to_torch_fx(sdk)),
                         ("run", lambda: sdk(*random_inputs(rng, gm)))):
        try:
            action()
        except Exception as e:  # noqa: BLE001
            check_error(e, step)
    return "accepted"


def limit_memory(megabytes):
    """Caps this process's address space at its size now plus `megabytes`,
    so a case allocating more (torch.zeros(2**31 - 1) is 8 GiB, and zeroing
    it takes PyTorch itself 50 s on a small VM) fails at once with an
    allocation error, which the SDK must report as PyTorch does, instead of
    running past --timeout (libFuzzer's -malloc_limit_mb in spirit)."""
    with open("/proc/self/statm") as statm:
        pages = int(statm.read().split()[0])
    size = pages * resource.getpagesize() + megabytes * 2**20
    hard = resource.getrlimit(resource.RLIMIT_AS)[1]
    if hard != resource.RLIM_INFINITY:
        size = min(size, hard)
    resource.setrlimit(resource.RLIMIT_AS, (size, hard))


def child(seeds, sender, memory):
    """Runs `seeds`, sending each outcome at once (a crash loses none)."""
    global fx_sdk
    import fx_sdk as sdk_module
    fx_sdk = sdk_module
    sys.setrecursionlimit(20000)
    limit_memory(memory)
    for seed in seeds:
        try:
            outcome = run_case(seed)
        except AssertionError as e:
            outcome = f"bad error: {e}"
        sender.send((seed, outcome))
    sender.close()


def run_batch(seeds, timeout=TIMEOUT_SECONDS, memory=MEMORY_MB):
    """(seed, outcome) for each seed; a crash ends the batch with its seed
    and the signal, a case running longer than `timeout` seconds with its
    seed and "timeout" (the child is killed)."""
    context = multiprocessing.get_context("fork")
    receiver, sender = context.Pipe(duplex=False)
    process = context.Process(target=child, args=(seeds, sender, memory))
    process.start()
    sender.close()
    done, timed_out = [], False
    while True:
        # The first case also pays for the child's import of fx_sdk.
        if not receiver.poll(timeout + (0 if done else 60)):
            timed_out = True
            process.kill()
            break
        try:
            done.append(receiver.recv())
        except EOFError:  # the child finished or died
            break
    process.join()
    if timed_out:
        done.append((seeds[len(done)], f"timeout: over {timeout:g} s"))
    elif process.exitcode and len(done) < len(seeds):
        crashed = seeds[len(done)]
        done.append((crashed, f"crash: exit code {process.exitcode}"))
    return done


def run_batches(batches, jobs, timeout, memory):
    """run_batch over each batch, `jobs` children at a time; yields each
    batch's (seed, outcome) pairs as it ends, seeds after a crash or a
    timeout run again in a new child."""
    def whole(batch):
        done = []
        while batch:
            part = run_batch(batch, timeout, memory)
            done += part
            batch = batch[len(part):]
        return done

    with concurrent.futures.ThreadPoolExecutor(jobs) as pool:
        running = set()
        for batch in batches:
            running.add(pool.submit(whole, batch))
            if len(running) >= jobs:
                finished, running = concurrent.futures.wait(
                    running, return_when=concurrent.futures.FIRST_COMPLETED)
                for future in finished:
                    yield future.result()
        for future in concurrent.futures.as_completed(running):
            yield future.result()


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seed", type=int)
    parser.add_argument("--cases", help="FIRST:END, seeds FIRST..END-1")
    parser.add_argument("--seconds", type=float)
    parser.add_argument("--batch", type=int, default=20000)
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--timeout", type=float, default=TIMEOUT_SECONDS,
                        help="seconds a case may run (default 30)")
    parser.add_argument("--memory", type=int, default=MEMORY_MB,
                        help="MB a child may allocate beyond its size "
                        "after importing fx_sdk (default 2048)")
    args = parser.parse_args(argv)
    if args.seed is not None:
        seeds = iter([args.seed])
    elif args.cases:
        first, end = (int(v) for v in args.cases.split(":"))
        seeds = iter(range(first, end))
    else:
        seeds = iter(range(random.randrange(2**40), 2**62))
    start = time.time()
    deadline = start + args.seconds if args.seconds else math.inf

    def batches():
        while time.time() < deadline:
            batch = [s for _, s in zip(range(args.batch), seeds)]
            if not batch:
                return
            yield batch

    counts, failures = {}, []
    for done in run_batches(batches(), max(1, args.jobs), args.timeout,
                            args.memory):
        for seed, outcome in done:
            key = outcome.split(":")[0]
            counts[key] = counts.get(key, 0) + 1
            if key in FINDINGS:
                failures.append((seed, outcome))
                print(f"seed {seed}: {outcome}", flush=True)
    total = sum(counts.values())
    seconds = time.time() - start
    print(f"{total} cases in {seconds:.0f} s ({total / seconds:.0f} a "
          "second): " + ", ".join(f"{v} {k}" for k, v in
                                  sorted(counts.items())))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
