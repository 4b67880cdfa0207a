"""ONNX Runtime's time per node against the InferencePlan's time per step.

    ort_node_profile.py MODEL.onnx [--threads N] [--runs N]
        [--shape 1,3,224,224] [--plan PLAN_PROFILE.txt] [--top N]

ONNX Runtime's CPU provider runs MODEL with its own profiler on (graph
optimisation level "all", sequential, N intra-op threads): ort_node_profile.c
is compiled on first use against the libonnxruntime.so that
setup_onnxruntime.sh installed (the node binding cannot profile). The median
time of each node is printed, summed by op type. With --plan, the text an
InferencePlan prints with FX_PLAN_PROFILE=1 on the same model and input is
joined to it by output shape (ONNX Runtime pads a convolution's channels to
its block of 16 in its NCHWc layout; where it has no node of the plan's
shape, the join rounds the plan's channels up likewise), so the
shapes where either engine spends more show first: which layers to look at,
not a benchmark (the profiler adds its own time to ONNX Runtime's runs).
"""
import argparse
import collections
import glob
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
NODE_PATH = os.path.expanduser("~/.cache/fx-sdk/onnxruntime/node_modules")
BINARY = os.path.expanduser("~/.cache/fx-sdk/ort_node_profile")
PLAN_LINE = re.compile(
    r"\s+([\d.]+)\s+[\d.]+%\s+[\d.]+\s+[\d.]+\s+(\w+)\s+(\S+) \((.*)\) "
    r"-> ([\dx]+) ")


def library():
    found = glob.glob(os.path.join(NODE_PATH, "onnxruntime-node", "bin", "*",
                                   "linux", "x64", "libonnxruntime.so*"))
    if not found:
        sys.exit("ort_node_profile: no libonnxruntime.so under " + NODE_PATH +
                 " (run tools/bench/setup_onnxruntime.sh)")
    return sorted(found)[0]


def binary():
    source = os.path.join(HERE, "ort_node_profile.c")
    if (not os.path.exists(BINARY) or
            os.path.getmtime(BINARY) < os.path.getmtime(source)):
        os.makedirs(os.path.dirname(BINARY), exist_ok=True)
        subprocess.run(["cc", "-O1", "-o", BINARY, source, "-ldl"], check=True)
    return BINARY


def ort_nodes(model, threads, runs, shape):
    """{node name: (op type, output shape, median us)} and the run's
    median in us."""
    with tempfile.TemporaryDirectory() as tmp:
        prefix = os.path.join(tmp, "profile")
        subprocess.run([binary(), library(), model, str(threads), str(runs),
                        prefix] + [str(d) for d in shape], check=True)
        (path,) = glob.glob(prefix + "*.json")
        with open(path) as f:
            events = json.load(f)
    times = collections.defaultdict(list)
    info, runs_us = {}, []
    for e in events:
        if e.get("cat") == "Session" and e.get("name") == "model_run":
            runs_us.append(e["dur"])
        if e.get("cat") != "Node" or not e["name"].endswith("_kernel_time"):
            continue
        name = e["name"][:-len("_kernel_time")]
        times[name].append(e["dur"])
        out = e["args"].get("output_type_shape") or [{}]
        dims = next(iter(out[0].values()), None) if out[0] else None
        info[name] = (e["args"].get("op_name"), tuple(dims) if dims else None)
    nodes = {n: (info[n][0], info[n][1], statistics.median(t))
             for n, t in times.items()}
    return nodes, statistics.median(runs_us) if runs_us else 0.0


def padded(shape):
    if shape is None or len(shape) != 4:
        return shape
    return (shape[0], (shape[1] + 15) // 16 * 16, shape[2], shape[3])


def join_key(shape, ort_shapes):
    """The plan's output shape as ONNX Runtime's nodes give it: the same
    shape, or for a convolution's result whose channels ONNX Runtime pads
    to 16 (NCHWc) the padded one; a 4-D shape ONNX Runtime has as it is
    (attention's heads) is not padded."""
    if shape in ort_shapes:
        return shape
    wider = padded(shape)
    return wider if wider in ort_shapes else shape


def plan_steps(path):
    """[(output shape, median us)] from an FX_PLAN_PROFILE text."""
    steps = []
    with open(path) as f:
        for line in f:
            m = PLAN_LINE.match(line)
            if m:
                shape = tuple(int(d) for d in m.group(5).split("x"))
                steps.append((shape, float(m.group(1))))
    return steps


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("model")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--runs", type=int, default=50)
    p.add_argument("--shape", default="1,3,224,224")
    p.add_argument("--plan", help="an FX_PLAN_PROFILE=1 text of the model")
    p.add_argument("--top", type=int, default=25)
    a = p.parse_args()
    shape = [int(d) for d in a.shape.split(",")]
    if not 1 <= len(shape) <= 8:
        sys.exit("ort_node_profile: --shape takes one to eight sizes")
    nodes, run_us = ort_nodes(a.model, a.threads, a.runs, shape)
    total = sum(t for _, _, t in nodes.values())
    print(f"ONNX Runtime: {len(nodes)} nodes, sum of medians "
          f"{total / 1e3:.3f} ms, run median {run_us / 1e3:.3f} ms "
          "(with the profiler)")
    by_op = collections.Counter()
    for op, _, t in nodes.values():
        by_op[op] += t
    print("by op: " + ", ".join(f"{op} {t / 1e3:.3f} ms"
                                for op, t in by_op.most_common()))
    if not a.plan:
        for name, (op, out, t) in sorted(nodes.items(),
                                         key=lambda kv: -kv[1][2])[:a.top]:
            print(f"{t:9.1f} us  {op:20s} {str(out):22s} {name}")
        return
    ort = collections.defaultdict(list)
    for op, out, t in nodes.values():
        ort[out].append(t)
    plan = collections.defaultdict(list)
    for out, t in plan_steps(a.plan):
        plan[join_key(out, ort)].append(t)
    rows = []
    for key in set(ort) | set(plan):
        rows.append((sum(plan[key]) - sum(ort[key]), key))
    print(f"plan: sum of step medians {sum(map(sum, plan.values())) / 1e3:.3f}"
          " ms")
    print(f"{'output shape':24s} {'plan steps':>16s} {'ORT nodes':>16s}"
          f" {'plan - ORT':>10s}")
    for diff, key in sorted(rows, key=lambda r: -abs(r[0]))[:a.top]:
        print(f"{str(key):24s} {len(plan[key]):3d} {sum(plan[key]):9.1f} us "
              f"{len(ort[key]):3d} {sum(ort[key]):9.1f} us {diff:+9.1f} us")


if __name__ == "__main__":
    main()
