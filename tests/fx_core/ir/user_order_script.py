"""Runs the user-order edit script on torch.fx and prints every node's users.

tests/fx_core/ir/user_list_test.cc runs the same script on fx::Graph and
compares the output: torch.fx is the reference for the order of Node.users
after update_arg, replace_input_with and replace_all_uses_with.
Usage: user_order_script.py NUM_NODES NUM_STEPS SEED
"""
import operator
import sys

import torch.fx

MASK = (1 << 64) - 1


class Lcg:
    def __init__(self, seed):
        self.state = seed

    def next(self, n):
        self.state = (self.state * 6364136223846793005 + 1442695040888963407) & MASK
        return (self.state >> 33) % n


def main():
    num_nodes, steps, seed = (int(a) for a in sys.argv[1:4])
    rnd = Lcg(seed)
    g = torch.fx.Graph()
    x = g.placeholder("x")
    w = g.placeholder("w")
    nodes = [g.call_function(operator.add, (x, w)) for _ in range(num_nodes)]
    g.output(tuple(nodes))

    def source_before(i):
        j = rnd.next(i + 2)
        return x if j == 0 else w if j == 1 else nodes[j - 2]

    for _ in range(steps):
        kind = rnd.next(3)
        i = rnd.next(num_nodes)
        node = nodes[i]
        if kind == 0:
            node.update_arg(rnd.next(2), source_before(i))
        elif kind == 1:
            old = node.args[rnd.next(2)]
            node.replace_input_with(old, source_before(i))
        else:
            k = rnd.next(i + 1)  # nodes[k] comes before every user of node
            if k == i:
                continue
            flag = rnd.next(2)
            node.replace_all_uses_with(
                nodes[k], lambda u: len(u.name) % 2 == flag)
    for n in g.nodes:
        print(n.name + ":" + "".join(" " + u.name for u in n.users))


if __name__ == "__main__":
    main()
