#!/usr/bin/python3
"""torch.fx's own subgraph rewrites, the reference for subgraph_rewriter_test.

    /usr/bin/python3 rewrite_cases.py TORCHFX_EXPORT_PY OUT_DIR

For every case below (ports of torch.fx's test_subgraph_rewriter.py and the
docs' examples) writes OUT_DIR/CASE/:
    original.fx.json                       the traced graph, before rewriting
    pattern.fx.json, replacement.fx.json   the traced pattern and replacement
                                           (each with NAME.weights.pt when it
                                           calls modules or reads attributes)
    code.py, graph.txt                     gm.code and print(gm.graph) after
                                           subgraph_rewriter.replace_pattern
    matches.txt                            one line per match: the graph
                                           nodes matched, as pattern=graph
    matcher.txt                            SubgraphMatcher's match counts
                                           with other options: `overlapping
                                           N` (remove_overlapping_matches=
                                           False), `match_output N`
"""

import copy
import importlib.util
import json
import operator
import os
import random
import re
import sys

import torch
import torch.fx
import torch.fx as fx
from torch.fx import subgraph_rewriter, symbolic_trace

spec = importlib.util.spec_from_file_location("torchfx_export", sys.argv[1])
export = importlib.util.module_from_spec(spec)
spec.loader.exec_module(export)


def graph_json(gm, path):
    nodes, weights, modules = [], {}, {}
    for node in gm.graph.nodes:
        where = f"node '{node.name}'"
        target = (export.qualified_function_name(node.target)
                  if node.op == "call_function" else node.target)
        nodes.append({
            "name": node.name, "op": node.op, "target": target,
            "args": [export.encode(a, where) for a in node.args],
            "kwargs": {k: export.encode(v, where) for k, v in node.kwargs.items()},
        })
        if node.op == "call_module" and node.target not in modules:
            sub = gm.get_submodule(node.target)
            modules[node.target] = {
                "type": export.module_type_name(sub),
                "config": export.module_config(sub),
                "training": sub.training,
            }
            for key, tensor in sub.state_dict().items():
                weights[node.target + "." + key] = tensor.detach().clone()
        if node.op == "get_attr":
            value = gm
            for atom in node.target.split("."):
                value = getattr(value, atom)
            weights[node.target] = value.detach().clone()
    document = {"format": "fx-graph", "version": 1, "nodes": nodes}
    if modules:
        document["modules"] = modules
    if weights:
        name = os.path.basename(path).split(".")[0] + ".weights.pt"
        document["weights"] = name
        torch.save(weights, os.path.join(os.path.dirname(path), name))
    with open(path, "w") as f:
        json.dump(document, f, indent=1)


CASES = {}


def case(name):
    def register(fn):
        CASES[name] = fn
        return fn
    return register


# The docs' basic usage and torch.fx's test_subgraph_rewriter_preserves_logic
# / multiple_pattern_match: two matches.
@case("docs_basic_usage")
def _():
    def forward(x, w1, w2):
        m1 = torch.cat([w1, w2]).sum()
        m2 = torch.cat([w1, w2]).sum()
        return x + torch.max(m1) + torch.max(m2)

    def pattern(w1, w2):
        return torch.cat([w1, w2]).sum()

    def replacement(w1, w2):
        return torch.stack([w1, w2])
    return forward, pattern, replacement


@case("oneliner_pattern")
def _():
    def forward(x):
        val = torch.neg(x) + torch.relu(x)
        return torch.add(val, val)

    def pattern(x):
        return torch.neg(x)

    def replacement(x):
        return torch.relu(x)
    return forward, pattern, replacement


@case("single_pattern_match")
def _():
    def forward(x):
        val = torch.neg(x) + torch.relu(x)
        return torch.add(val, val)

    def pattern(x):
        return torch.neg(x) + torch.relu(x)

    def replacement(x):
        return torch.relu(x)
    return forward, pattern, replacement


@case("graph_argument_order")
def _():
    def forward(x, y):
        return torch.mm(x, y)

    def pattern(x, y):
        return torch.mm(x, y)

    def replacement(x, y):
        return torch.mm(x, y)
    return forward, pattern, replacement


@case("correct_output_replacement")
def _():
    def forward(x, y):
        val = torch.neg(y) + torch.relu(x)
        return torch.add(val, val)

    def pattern(x):
        return torch.relu(x)

    def replacement(x):
        return torch.neg(x)
    return forward, pattern, replacement


@case("pattern_is_entire_graph")
def _():
    def forward(x):
        a = torch.neg(x)
        return torch.add(a, a)

    def pattern(x):
        a = torch.neg(x)
        return torch.add(a, a)

    def replacement(x):
        a = torch.sigmoid(x)
        return torch.cat([a, a])
    return forward, pattern, replacement


@case("returned_node_used_outside")
def _():
    def forward(x):
        y = torch.relu(x)
        return torch.neg(y) - y

    def pattern(x):
        return torch.relu(x)

    def replacement(x):
        return torch.sigmoid(x)
    return forward, pattern, replacement


@case("internal_node_used_outside")
def _():
    def forward(x, w1, w2, b1, b2):
        m0 = torch.cat([w1, w2])  # noqa: F841
        m1 = torch.cat([w1, w2])
        m2 = torch.cat([x, b2])
        t0 = torch.addmm(b1, m1, m2.t())  # noqa: F841
        t1 = torch.sum(w1, 1)
        t2 = torch.addmm(b1, m1, m2.t())
        return torch.sum(t1), torch.sum(t2)

    def pattern(x, w1, w2, b1, b2):
        m1 = torch.cat([w1, w2])
        m2 = torch.cat([x, b2])
        return torch.addmm(b1, m1, m2.t())

    def replacement(x, w1, w2, b1, b2):
        return torch.cat([x, w1, w2])
    return forward, pattern, replacement


@case("overlapping_matches")
def _():
    def forward(x):
        y = torch.sigmoid(x)
        y = torch.sigmoid(y)
        y = torch.sigmoid(y)
        y = torch.sigmoid(y)
        return y

    def pattern(x):
        return torch.sigmoid(torch.sigmoid(x))

    def replacement(x):
        return torch.exp(x)
    return forward, pattern, replacement


@case("trivial_replacement")
def _():
    def forward(x):
        val = torch.neg(x)
        val = torch.add(val, val)
        return torch.add(val, val)

    def pattern(x):
        return torch.add(x, x)

    def replacement(x):
        return x
    return forward, pattern, replacement


@case("call_method")
def _():
    def forward(x):
        x = x.dequantize()
        x = x.sigmoid()
        x = x.to(torch.float16)
        return x

    def pattern(x):
        x = x.dequantize()
        x = x.sigmoid()
        x = x.to(torch.float16)
        return x

    def replacement(x):
        return x
    return forward, pattern, replacement


@case("multiple_outputs")
def _():
    def forward(x):
        y = torch.sigmoid(x)
        z = torch.relu(x)
        return y + z

    def pattern(a):
        b = torch.sigmoid(a)
        c = torch.relu(a)
        return b, c

    def replacement(x):
        return torch.exp(x), torch.abs(x)
    return forward, pattern, replacement


@case("duplicated_outputs")
def _():
    def forward(x1, x2):
        x = x1 - x2
        y = torch.sigmoid(x)
        z = torch.relu(x)
        return y + z

    def pattern(a1, a2):
        a = a1 - a2
        b = torch.sigmoid(a)
        c = torch.relu(a)
        return b, c, a

    def replacement(x1, x2):
        y1 = torch.exp(x1)
        y2 = torch.abs(x2)
        return y2, y2, y1
    return forward, pattern, replacement


@case("unused_args")
def _():
    def forward(x, y, z):
        return x + y

    def pattern(x, y):
        return x + y

    def replacement(x, y):
        return x - y
    return forward, pattern, replacement


@case("kwargs")
def _():
    class M(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.w0 = torch.nn.Parameter(torch.empty([4, 4]))
            self.b0 = torch.nn.Parameter(torch.empty([4]))

        def forward(self, in0):
            lin_res = torch.nn.functional.linear(in0, self.w0, bias=self.b0)
            mul_res = in0 * lin_res
            sum_res = mul_res + in0
            return sum_res

    def pattern(a, b, bias):
        lin_res = torch.nn.functional.linear(a, b, bias=bias)
        mul_res = a * lin_res
        return mul_res

    def replacement(a, b, bias):
        lin_res = torch.nn.functional.linear(a, b, bias=bias)
        add_res = a + lin_res
        return add_res
    return M(), pattern, replacement


@case("list_literal")
def _():
    def forward(x):
        y = torch.reshape(x, [2, -1])
        z = torch.reshape(x, [-1, 2])
        return y, z

    def pattern(x):
        return torch.reshape(x, [2, -1])

    def replacement(x):
        return torch.flatten(x)
    return forward, pattern, replacement


@case("scalar_literal")
def _():
    def forward(x):
        a = torch.relu(x + 1)
        b = torch.relu(a + 2)
        return torch.relu(b + 1.0)

    def pattern(x):
        return torch.relu(x + 1)

    def replacement(x):
        return torch.sigmoid(x)
    return forward, pattern, replacement


# Pattern and replacement as modules: the replacement's submodule that the
# graph lacks (`id`) is copied into it.
@case("replaces_referenced_submodules")
def _():
    class M(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.sigmoid = torch.nn.Sigmoid()
            self.submod = torch.nn.ReLU()

        def forward(self, x):
            x = x + 1
            return self.submod(self.sigmoid(x))

    class Pattern(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.sigmoid = torch.nn.Sigmoid()
            self.submod = torch.nn.ReLU()

        def forward(self, x):
            return self.submod(self.sigmoid(x))

    class Replacement(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.id = torch.nn.Identity()
            self.submod = torch.nn.ReLU()

        def forward(self, x):
            return self.submod(self.id(x))
    return M(), Pattern(), Replacement()


# Random graphs of sigmoid / relu / add / mul / clamp / cat with shared
# inputs, outside uses and several outputs, and patterns that overlap, share
# inputs, return several values or their input, take kwargs or lists: the
# rewrite must be torch.fx's on every one (random_cases.txt lists them).
def p_sigmoid2(x):
    return torch.sigmoid(torch.sigmoid(x))


def r_exp(x):
    return torch.exp(x)


def p_add_relu(x, y):
    return torch.relu(x + y)


def r_sub(x, y):
    return x - y


def p_pair(a):
    return torch.sigmoid(a), torch.relu(a)


def r_pair(a):
    return torch.exp(a), torch.abs(a)


def p_mul_relu(x):
    return torch.relu(x * 2)


def r_identity(x):
    return x


def p_add(x, y):
    return x + y


def r_add_swapped(x, y):
    return y + x


def p_shared(x):
    return torch.sigmoid(x) + torch.relu(x)


def r_tanh(x):
    return torch.tanh(x)


def p_clamp_sigmoid(x):
    return torch.sigmoid(x.clamp(min=0.0))


def r_relu(x):
    return torch.relu(x)


def p_cat(x, y):
    return torch.cat([x, y], 1)


def r_stack(x, y):
    return torch.stack([y, x])


# Each pattern with the ops its random graphs are drawn from (so that most
# of them match).
RANDOM_PATTERNS = [
    (p_sigmoid2, r_exp, ["sigmoid", "sigmoid", "relu", "add", "mul"]),
    (p_add_relu, r_sub, ["add", "relu", "relu", "sigmoid", "mul"]),
    (p_pair, r_pair, ["sigmoid", "relu", "add"]),
    (p_mul_relu, r_identity, ["mul", "relu", "add", "sigmoid"]),
    (p_add, r_add_swapped, ["add", "relu", "sigmoid", "mul", "clamp", "cat"]),
    (p_shared, r_tanh, ["sigmoid", "relu", "add"]),
    (p_clamp_sigmoid, r_relu, ["clamp", "sigmoid", "relu", "add"]),
    (p_cat, r_stack, ["cat", "relu", "add", "sigmoid"]),
]


def random_graph(rng, ops):
    g = fx.Graph()
    nodes = [g.placeholder("x"), g.placeholder("y")]

    def pick():
        return rng.choice(nodes[-3:]) if rng.random() < 0.8 else rng.choice(nodes)
    for _ in range(rng.randint(8, 24)):
        op = rng.choice(ops)
        if op == "clamp":
            n = g.call_method("clamp", (pick(),),
                              {"min": rng.choice([0.0, 0.0, 1.0])})
        elif op == "cat":
            n = g.call_function(torch.cat, ([pick(), pick()], rng.choice([1, 1, 0])))
        elif op == "sigmoid":
            n = g.call_function(torch.sigmoid, (pick(),))
        elif op == "relu":
            n = g.call_function(torch.relu, (pick(),))
        elif op == "add":
            n = g.call_function(operator.add, (pick(), pick()))
        else:
            n = g.call_function(operator.mul, (pick(), rng.choice([2, 2, 3])))
        nodes.append(n)
    outs = [nodes[-1]] + rng.sample(nodes[2:-1], k=min(len(nodes) - 3, rng.randint(0, 2)))
    g.output(tuple(outs) if len(outs) > 1 else outs[0])
    g.eliminate_dead_code()
    return fx.GraphModule(torch.nn.Module(), g)


def random_cases(count):
    names = []
    seed = 0
    while len(names) < count:
        seed += 1
        rng = random.Random(seed)
        pattern, replacement, ops = RANDOM_PATTERNS[len(names) % len(RANDOM_PATTERNS)]
        gm = random_graph(rng, ops)
        probe = copy.deepcopy(gm)
        try:
            found = subgraph_rewriter.replace_pattern(probe, pattern, replacement)
            probe.graph.lint()
        except Exception:  # torch.fx cannot rewrite this one: not a reference
            continue
        if not found and len(names) % 10 != 9:  # mostly graphs that match
            continue
        name = f"random_{len(names)}"
        CASES[name] = (lambda gm=gm, p=pattern, r=replacement: (gm, p, r))
        names.append(name)
    return names


def main():
    out = sys.argv[2]
    random_names = random_cases(80)
    for name, make in CASES.items():
        forward, pattern, replacement = make()
        d = os.path.join(out, name)
        os.makedirs(d, exist_ok=True)
        gm = symbolic_trace(forward)
        graph_json(gm, os.path.join(d, "original.fx.json"))
        from torch.fx.passes.utils.matcher_utils import SubgraphMatcher
        pattern_graph = symbolic_trace(pattern).graph
        overlapping = SubgraphMatcher(
            pattern_graph, remove_overlapping_matches=False).match(gm.graph)
        whole = SubgraphMatcher(pattern_graph, match_output=True).match(gm.graph)
        with open(os.path.join(d, "matcher.txt"), "w") as f:
            f.write(f"overlapping {len(overlapping)}\nmatch_output {len(whole)}\n")
        graph_json(symbolic_trace(pattern), os.path.join(d, "pattern.fx.json"))
        graph_json(symbolic_trace(replacement), os.path.join(d, "replacement.fx.json"))
        matches = subgraph_rewriter.replace_pattern(gm, pattern, replacement)
        with open(os.path.join(d, "matches.txt"), "w") as f:
            for m in matches:
                f.write(" ".join(f"{p.name}={g.name if isinstance(g, torch.fx.Node) else repr(g)}"
                                 for p, g in m.nodes_map.items()) + "\n")
        with open(os.path.join(d, "code.py"), "w") as f:
            f.write(gm.code)
        with open(os.path.join(d, "graph.txt"), "w") as f:
            f.write(re.sub(r"\[#users=", "[num_users=", str(gm.graph)) + "\n")
    with open(os.path.join(out, "cases.txt"), "w") as f:
        f.write("\n".join(n for n in CASES if n not in random_names) + "\n")
    with open(os.path.join(out, "random_cases.txt"), "w") as f:
        f.write("\n".join(random_names) + "\n")


if __name__ == "__main__":
    main()
