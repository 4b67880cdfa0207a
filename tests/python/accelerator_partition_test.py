"""accelerator_partition against torch 1.13's Partitioner
(torch.fx.experimental.accelerator_partitioner) on the same graphs: PyTorch's
own cases from test/fx/test_fx_experimental.py (their assertions kept, on
torch's result and ours), Kernighan-Lin cases, torchvision models by size,
and refusals. For each graph both results must agree on the partitions
(nodes, ids, parents, children, BFS level, memory, logical devices), the
DAG torch's dump_dag builds, the main graph's text and code, every
submodule's graph and code, the latencies, and the numbers. Where torch
1.13 is wrong (kl_based, aot_based's DAG) the comparison runs the options
that reproduce it, and the fixed defaults are checked on their own. Run by
fx_sdk_test.sh.
"""

import pytest
import torch
from torch.fx import symbolic_trace
from torch.fx.experimental.accelerator_partitioner import (
    Partitioner,
    reorganize_partitions,
)
from torch.fx.experimental.partitioner_utils import (
    Device,
    NodeLatency,
    PartitionerConfig,
    Partition,
    PartitionMode,
    get_latency_of_partitioned_graph,
    get_partition_to_latency_mapping,
)
from torch.fx.passes import graph_manipulation

import fx_sdk


# ------------------------------------------------------------ helpers


def torch_partition(model, inputs, config, traced=None):
    """torch 1.13's Partitioner on `traced` (by default a fresh trace of
    `model`), sizes from its ShapeProp."""
    traced = traced or symbolic_trace(model)
    graph_manipulation.get_size_of_all_nodes(traced, inputs)
    partitioner = Partitioner()
    ret = partitioner.partition_graph(traced, model, config)
    return traced, partitioner, ret


# The options that reproduce torch 1.13's bugs, by mode (the pass's defaults
# fix them).
AS_TORCH = {"kl_based": "kl_as_torch=true",
            "aot_based": "dag_by_list_position=true"}


def options_text(config, traced=None, as_torch=True):
    """The pass's options for a PartitionerConfig (node keys by name); with
    `as_torch`, also the option that makes the mode torch 1.13's."""
    items = ["devices=" + ",".join(
        f"{d.name}:{d.available_mem_bytes}:{d.logical_id}"
        for d in config.devices),
        "mode=" + config.mode.name,
        "transfer_rate_bytes_per_sec=" +
        repr(float(config.transfer_rate_bytes_per_sec)),
        "saturate_host=" + ("true" if config.saturate_host else "false")]
    if config.node_to_latency_mapping:
        items.append("node_to_latency_mapping=" + ",".join(
            f"{n.name}:{float(l.mem_latency_sec)!r}:"
            f"{float(l.computer_latency_sec)!r}"
            for n, l in config.node_to_latency_mapping.items()))
    if config.node_to_partition_mapping:
        items.append("node_to_partition_mapping=" + ",".join(
            f"{n.name}:{p}" for n, p in
            config.node_to_partition_mapping.items()))
        items.append("partition_to_logical_device_mapping=" + ",".join(
            f"{p}:" + "+".join(str(i) for i in ids) for p, ids in
            config.partition_to_logical_device_mapping.items()))
    if as_torch and config.mode.name in AS_TORCH:
        items.append(AS_TORCH[config.mode.name])
    return "accelerator_partition{" + ",".join(items) + "}"


def sdk_partition(traced, inputs, config, as_torch=True):
    out, report = fx_sdk.run_pipeline(
        traced, "shape_prop," + options_text(config, as_torch=as_torch),
        example_inputs=inputs)
    assert [r["outcome"] for r in report] == ["ran", "ran"], report
    return out


def submodule_names(gm):
    return [n.target for n in gm.graph.nodes if n.op == "call_module"]


def partition_facts(p):
    return {"partition_id": p.partition_id,
            "nodes": sorted(n.name for n in p.nodes),
            "parents": sorted(q.partition_id for q in p.parents),
            "children": sorted(q.partition_id for q in p.children),
            "bfs_level": p.bfs_level,
            "used_mem_bytes": p.used_mem_bytes,
            "logical_device_ids": list(p.logical_device_ids)}


def assert_same(model, inputs, config, seed=None, traced=None):
    """Both partitioners on one trace of `model` (its tensor constants, such
    as torch.rand's, made once); everything compared; torch's result, its
    partitioner and ours returned."""
    traced = traced or symbolic_trace(model)
    out = sdk_partition(traced, inputs, config)
    traced, partitioner, ret = torch_partition(model, inputs, config, traced)
    expected = ret.module_with_submodules
    assert out.code == expected.code
    assert str(out.graph) == str(expected.graph)
    names = submodule_names(expected)
    assert submodule_names(out) == names
    for name in names:
        want, got = getattr(expected, name), getattr(out, name)
        # Nested modules as torch names them: layer1.0.conv1 is called as
        # layer1_0_conv1, an attribute of the submodule.
        assert str(got.graph) == str(want.graph), name
        assert got.code == want.code, name
        for n in want.graph.nodes:
            if n.op == "call_module":
                assert "." not in n.target
                assert isinstance(getattr(got, n.target),
                                  type(getattr(want, n.target))), name
    # Partitions and the DAG, from meta['partition'] of each submod call.
    calls = {n.name: n.meta["partition"] for n in out.graph.nodes
             if n.op == "call_module"}
    by_id = {p.partition_id: p for p in partitioner.partitions}
    for dag_node in ret.dag.nodes:
        meta = calls[dag_node.submodule_node.name]
        assert [n.name for n in dag_node.input_nodes] == meta["input_nodes"]
        assert [n.name for n in dag_node.output_nodes] == meta["output_nodes"]
        assert list(dag_node.logical_device_ids) == \
            meta["logical_device_ids"]
        assert dag_node.size_bytes == meta["size_bytes"]
        want = partition_facts(by_id[meta["partition_id"]])
        # meta's logical_device_ids is the DAG node's, compared above (with
        # dag_by_list_position another partition's, as torch's dump_dag).
        del want["logical_device_ids"]
        got = {k: (sorted(meta[k]) if k == "nodes" else meta[k])
               for k in want}
        assert got == want
    assert len(calls) == len(ret.dag.nodes)
    if config.node_to_latency_mapping:
        latencies = get_partition_to_latency_mapping(
            partitioner.partitions, config.node_to_latency_mapping)
        for p, latency in latencies.items():
            meta = calls.get(f"submod_{p.partition_id}")
            if meta is not None:
                assert tuple(meta["latency"].values()) == tuple(latency)
        critical = get_latency_of_partitioned_graph(
            partitioner.partitions, latencies,
            config.transfer_rate_bytes_per_sec)
        output = [n for n in out.graph.nodes if n.op == "output"][0]
        assert output.meta["critical_path_latency_sec"] == critical
    # The numbers: torch's split module, ours and the unsplit trace.
    with torch.no_grad():
        torch.manual_seed(seed or 0)
        want = expected(*inputs)
        torch.manual_seed(seed or 0)
        got = out(*inputs)
        torch.manual_seed(seed or 0)
        plain = traced(*inputs)
    torch.testing.assert_close(got, want, rtol=0, atol=0)
    torch.testing.assert_close(got, plain, rtol=0, atol=0)
    return ret, partitioner, out


def refused(model, inputs, options, match):
    """The pipeline stops with an error matching `match`; the graph is as
    it was."""
    gm = symbolic_trace(model)
    sdk = fx_sdk.from_torch_fx(gm)
    before = fx_sdk.to_torch_fx(sdk)
    with pytest.raises((RuntimeError, ValueError), match=match):
        fx_sdk._C._run_pipeline(sdk, "shape_prop," + options, [],
                                [fx_sdk.PLUGIN_DIR], True, list(inputs))
    after = fx_sdk.to_torch_fx(sdk)
    assert after.code == before.code
    assert str(after.graph) == str(before.graph)
    assert not any(n.op == "call_module" and n.target.startswith("submod_")
                   for n in after.graph.nodes)


# ------------------------------------------------- PyTorch's own cases


class AddModule(torch.nn.Module):
    def forward(self, a, b):
        return a + b


def test_find_single_partition():
    a, b = torch.rand(1), torch.rand(1)
    devices = [Device("dev_0", 125, 0), Device("dev_1", 150, 1),
               Device("dev_2", 125, 2)]
    ret, _, out = assert_same(AddModule(), [a, b], PartitionerConfig(devices))
    assert ret.dag.nodes[0].logical_device_ids == [1]
    call = [n for n in out.graph.nodes if n.op == "call_module"][0]
    assert call.meta["partition"]["logical_device_ids"] == [1]


def test_lack_of_devices():
    a, b = torch.rand(4), torch.rand(4)
    devices = [Device("dev_0", 4, 0), Device("dev_1", 4, 1)]
    config = PartitionerConfig(devices, PartitionMode.size_based)
    with pytest.raises(RuntimeError,
                       match="Devices have no enough memory for the module"):
        torch_partition(AddModule(), [a, b], config)
    refused(AddModule(), [a, b], options_text(config),
            "accelerator_partition: Devices have no enough memory for the "
            "module")


class LinearAdd(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = torch.nn.Linear(4, 4)

    def forward(self, a):
        linear = self.linear(a)
        add = linear + a
        return add


def test_large_node_error():
    a = torch.rand(4)
    devices = [Device(f"dev_{i}", 40, 0) for i in range(5)]
    config = PartitionerConfig(devices, PartitionMode.size_based)
    with pytest.raises(RuntimeError, match="linearis too large to fit any "
                                           "device"):
        torch_partition(LinearAdd(), [a], config)
    refused(LinearAdd(), [a], options_text(config),
            "accelerator_partition: linearis too large to fit any device")


class RandAdds(torch.nn.Module):
    def forward(self, a, b):
        add_1 = a + b
        add_2 = add_1 + torch.rand(4)
        add_3 = add_2 + torch.rand(4)
        return add_3


def test_partition_node_manipulation():
    a, b = torch.rand(4), torch.rand(4)
    config = PartitionerConfig([Device("dev_0", 1000, 0)])
    _, partitioner, out = assert_same(RandAdds(), [a, b], config)
    assert partitioner.partitions[0].used_mem_bytes == 112
    call = [n for n in out.graph.nodes if n.op == "call_module"][0]
    assert call.meta["partition"]["used_mem_bytes"] == 112


class SizeBased(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = torch.nn.Linear(4, 4)
        self.c = torch.rand(4)

    def forward(self, a, b):
        add_1 = a + b
        linear = self.linear(add_1)
        add_2 = linear + self.c
        return add_2


def test_size_based_partition():
    a, b = torch.rand(4), torch.rand(4)
    devices = [Device("dev_0", 125, 0), Device("dev_1", 125, 1),
               Device("dev_2", 125, 2)]
    ret, _, out = assert_same(
        SizeBased(), [a, b], PartitionerConfig(devices,
                                               PartitionMode.size_based))
    for i, node in enumerate(ret.dag.nodes):
        assert node.logical_device_ids == [i]
    calls = [n for n in out.graph.nodes if n.op == "call_module"]
    assert [c.meta["partition"]["logical_device_ids"] for c in calls] == \
        [[0], [1], [2]]


class DeviceMapping(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = torch.nn.Linear(4, 4)

    def forward(self, a):
        b = torch.rand(4)
        add_1 = a + b
        linear_1 = self.linear(add_1)
        add_2 = torch.rand(4) + a
        add_3 = add_2 + linear_1
        return add_3


def test_partition_device_mapping():
    a = torch.rand(4)
    devices = [Device("dev_0", 120, 0), Device("dev_1", 160, 1)]
    ret, _, _ = assert_same(DeviceMapping(), [a],
                            PartitionerConfig(devices,
                                              PartitionMode.size_based))
    for i, node in enumerate(ret.dag.nodes):
        assert node.logical_device_ids == ([1] if i == 1 else [0])


class MyRecommendationModule(torch.nn.Module):
    def create_mlp(self, num_of_layers, input_size, output_size):
        layers = torch.nn.ModuleList()
        for _ in range(num_of_layers):
            layers.append(torch.nn.Linear(input_size, output_size))
            layers.append(torch.nn.ReLU())
        return layers

    def __init__(self):
        super().__init__()
        self.bottom_layers = torch.nn.Sequential(*self.create_mlp(4, 4, 4))
        self.top_layers = torch.nn.Sequential(*self.create_mlp(3, 24, 24))
        self.embedding_layers = torch.nn.ModuleList()
        self.embedding_layers.append(
            torch.nn.EmbeddingBag(500000, 4, mode="sum", sparse=True))
        for _ in range(3):
            self.embedding_layers.append(
                torch.nn.EmbeddingBag(1000000, 4, mode="sum", sparse=True))
        self.embedding_layers.append(
            torch.nn.EmbeddingBag(500000, 4, mode="sum", sparse=True))

    def forward(self, a, b, offset):
        x = self.bottom_layers(a)
        y = []
        c = []
        for i in range(len(self.embedding_layers)):
            temp = torch.randint(10, (8,))
            c.append(temp + b)
        for i in range(len(self.embedding_layers)):
            if i % 2 == 0:
                y.append(self.embedding_layers[i](c[i], offset))
            else:
                y.append(self.embedding_layers[i](torch.randint(10, (8,)),
                                                  offset))
        z = torch.cat([x] + y, dim=1)
        return self.top_layers(z)


SPARSE_NN = None


def sparse_nn_model():
    global SPARSE_NN
    if SPARSE_NN is None:
        torch.manual_seed(0)
        SPARSE_NN = MyRecommendationModule()
    return SPARSE_NN


def sparse_nn_inputs():
    torch.manual_seed(1)
    return [torch.rand(2, 4), torch.randint(10, (8,)),
            torch.randint(1, (2,))]


@pytest.mark.parametrize("saturate_host", [False, True])
def test_sparse_nn_partition(saturate_host):
    devices = [Device("dev_0", 33000000, 0), Device("dev_1", 33000000, 1),
               Device("dev_2", 33000000, 2)]
    if saturate_host:  # room for a copy of each: torch's shared id list
        devices += [Device(f"dev_{i}", 33000000, i) for i in range(3, 9)]
    config = PartitionerConfig(devices, PartitionMode.sparse_nn,
                               saturate_host=saturate_host)
    _, _, out = assert_same(sparse_nn_model(), sparse_nn_inputs(), config,
                            seed=3)
    if not saturate_host:
        assert len(out.graph.nodes) == 24


class LatencyModule(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = torch.nn.Linear(4, 4)

    def forward(self, a):
        add_1 = a + torch.rand(4)
        add_2 = add_1 + torch.rand(4)
        linear_1 = self.linear(add_1)
        add_3 = add_2 + linear_1
        add_4 = add_2 + add_3
        return add_4


def latency_by_size(traced, compute_when_equal, inputs=None):
    """PyTorch's tests' node latencies, from each node's size."""
    graph_manipulation.get_size_of_all_nodes(traced,
                                             inputs or [torch.rand(4)])
    mapping = {}
    for node in traced.graph.nodes:
        if node.op in {"output", "placeholder", "get_attr"}:
            continue
        sizes = node.size_bytes
        if sizes.total_size == sizes.output_size:
            mapping[node] = NodeLatency(sizes.total_size,
                                        compute_when_equal(sizes.total_size))
        else:
            mapping[node] = NodeLatency(sizes.total_size, sizes.output_size)
    return mapping


def test_partition_latency():
    model = LatencyModule()
    traced = symbolic_trace(model)
    mapping = latency_by_size(traced, lambda t: 2.0 * t)
    devices = [Device("dev_0", 200, 0), Device("dev_1", 200, 1)]
    config = PartitionerConfig(devices, transfer_rate_bytes_per_sec=2,
                               node_to_latency_mapping=mapping)
    _, partitioner, out = assert_same(model, [torch.rand(4)], config,
                                      traced=traced)
    latencies = get_partition_to_latency_mapping(partitioner.partitions,
                                                 mapping)
    for p, latency in latencies.items():
        assert latency == ((128.0, 80.0, 160.0) if p.partition_id == 0
                           else (16.0, 32.0, 32.0))
    output = [n for n in out.graph.nodes if n.op == "output"][0]
    assert output.meta["critical_path_latency_sec"] == 208.0


class CostAware(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = torch.nn.Linear(4, 4)

    def forward(self, a):
        add_1 = a + torch.rand(4)
        add_2 = add_1 + torch.rand(4)
        linear_1 = self.linear(add_1)
        add_3 = add_2 + torch.rand(4)
        add_4 = add_2 + linear_1
        add_5 = add_3 + add_4
        return add_5


def test_cost_aware_partition():
    model = CostAware()
    traced = symbolic_trace(model)
    mapping = latency_by_size(traced, lambda t: 1)
    devices = [Device(f"dev_{i}", 125, i) for i in range(4)]
    config = PartitionerConfig(devices, mode=PartitionMode.cost_aware,
                               transfer_rate_bytes_per_sec=2,
                               node_to_latency_mapping=mapping)
    _, _, out = assert_same(model, [torch.rand(4)], config, traced=traced)
    output = [n for n in out.graph.nodes if n.op == "output"][0]
    assert output.meta["critical_path_latency_sec"] == 160.0


@pytest.mark.parametrize("rate,memory", [(2, 125), (1000, 125), (2, 160),
                                         (0.5, 200)])
def test_kl_based_partition(rate, memory):
    """Not among PyTorch's tests: size_based, then Kernighan-Lin swaps."""
    model = CostAware()
    traced = symbolic_trace(model)
    mapping = latency_by_size(traced, lambda t: 1)
    devices = [Device(f"dev_{i}", memory, i) for i in range(4)]
    config = PartitionerConfig(devices, mode=PartitionMode.kl_based,
                               transfer_rate_bytes_per_sec=rate,
                               node_to_latency_mapping=mapping)
    assert_same(model, [torch.rand(4)], config, traced=traced)


class KlChain(torch.nn.Module):
    """A chain whose size_based split puts relu alone on a small device:
    moving it to the next partition empties its own."""

    def forward(self, a):
        x = torch.relu(a)
        x = torch.tanh(x)
        x = torch.sigmoid(x)
        x = x * 2
        return x.repeat(8).sum()


class KlInPlace(torch.nn.Module):
    """Nodes nothing reads (add_, mul_): a move can leave a partition with no
    result, which split_module cannot split; the fixed kl_based makes no
    such move."""

    def forward(self, x):
        y = x.clone()
        y.add_(1)
        y.view(-1).mul_(2)
        return y + x.sum()


def kl_case(name):
    """(model, inputs, traced, config) of a kl_based case: the four of
    test_kl_based_partition (cost_aware_RATE_MEMORY), test_mixed_graph's
    that torch partitions (mixed_SCALE), KlChain (chain) and KlInPlace
    (in_place)."""
    if name.startswith("cost_aware"):
        rate, memory = (float(x) for x in name.split("_")[2:])
        model, inputs = CostAware(), [torch.rand(4)]
        devices = [Device(f"dev_{i}", int(memory), i) for i in range(4)]
    elif name.startswith("mixed"):
        torch.manual_seed(0)
        model, inputs = Mixed(), [torch.rand(2, 8), torch.rand(2, 8)]
        total, largest = largest_need(model, inputs)
        memory = int(largest * float(name.split("_")[1]))
        devices = [Device(f"dev_{i}", memory, i)
                   for i in range(total // memory + 2)]
        rate = 16
    elif name == "chain":
        model, inputs = KlChain(), [torch.rand(16)]
        devices = [Device("dev_0", 130, 0), Device("dev_1", 400, 1),
                   Device("dev_2", 600, 2)]
        rate = 1
    else:
        model, inputs = KlInPlace(), [torch.rand(3, 4)]
        devices = [Device(f"dev_{i}", 200, i) for i in range(3)]
        rate = 16
    traced = symbolic_trace(model)
    mapping = latency_by_size(traced, lambda t: 1, inputs)
    config = PartitionerConfig(devices, PartitionMode.kl_based,
                               transfer_rate_bytes_per_sec=rate,
                               node_to_latency_mapping=mapping)
    return model, inputs, traced, config


def torch_latency(partitions, config):
    """The critical path's latency of `partitions` (torch Partition
    objects) by torch's partitioner_utils."""
    latencies = get_partition_to_latency_mapping(
        partitions, config.node_to_latency_mapping)
    return get_latency_of_partitioned_graph(
        partitions, latencies, config.transfer_rate_bytes_per_sec)


def op_key(node):
    """(op, target) of a node; a call_module target as split_module calls
    it inside a submodule (layer1.0 as layer1_0)."""
    target = str(node.target)
    if node.op == "call_module":
        target = target.replace(".", "_")
    return node.op, target


def split_facts(out):
    """From the split module's main graph: each submodule call's partition
    id, the ids of the calls it reads (directly or through getitem), and
    the (op, target) of its submodule's op nodes, sorted."""
    source, reads, ops = {}, {}, {}
    for n in out.graph.nodes:
        if n.op == "call_module":
            pid = int(n.target.rsplit("_", 1)[1])
            source[n] = pid
            reads[pid] = sorted({source[i] for i in n.all_input_nodes
                                 if i in source})
            ops[pid] = sorted(
                op_key(m) for m in getattr(out, n.target).graph.nodes
                if m.op not in ("placeholder", "get_attr", "output"))
        elif n.op == "call_function" and n.args and n.args[0] in source:
            source[n] = source[n.args[0]]  # a getitem of a call's results
    return reads, ops


def check_split(traced, inputs, config, out):
    """`out`, the fixed kl_based's result on `traced`: the unsplit trace's
    numbers; each op node in exactly one partition, ids 0, 1, ..., the
    submodules, parents and children as the split has them, BFS levels
    (longest path from a root), devices that hold them; the latencies
    recomputed by torch's partitioner_utils. Returns the critical path's
    latency."""
    with torch.no_grad():
        torch.testing.assert_close(out(*inputs), traced(*inputs), rtol=0,
                                   atol=0)
    metas = {int(n.target.rsplit("_", 1)[1]): n.meta["partition"]
             for n in out.graph.nodes if n.op == "call_module"}
    assert sorted(metas) == list(range(len(metas)))
    by_name = {n.name: n for n in traced.graph.nodes}
    op_names = [n.name for n in traced.graph.nodes
                if n.op not in ("placeholder", "get_attr", "output")]
    held = [v for m in metas.values() for v in m["nodes"] if v in op_names]
    assert sorted(held) == sorted(op_names)
    reads, ops = split_facts(out)
    memory = {d.logical_id: d.available_mem_bytes for d in config.devices}
    for pid, meta in metas.items():
        assert meta["partition_id"] == pid
        assert meta["parents"] == reads[pid]
        assert meta["children"] == sorted(q for q in reads if pid in reads[q])
        assert meta["bfs_level"] == max(
            (metas[q]["bfs_level"] + 1 for q in reads[pid]), default=0)
        want = sorted(op_key(by_name[v]) for v in meta["nodes"]
                      if v in op_names)
        assert ops[pid] == want
        assert meta["logical_device_ids"]
        for d in meta["logical_device_ids"]:
            assert meta["used_mem_bytes"] <= memory[d]
    partitions = []
    for pid, meta in sorted(metas.items()):
        p = Partition(pid)
        p.nodes = {by_name[v] for v in meta["nodes"]}
        p.logical_device_ids = list(meta["logical_device_ids"])
        partitions.append(p)
    reorganize_partitions(partitions)
    for p, latency in get_partition_to_latency_mapping(
            partitions, config.node_to_latency_mapping).items():
        assert tuple(metas[p.partition_id]["latency"].values()) == \
            tuple(latency)
    critical = torch_latency(partitions, config)
    output = [n for n in out.graph.nodes if n.op == "output"][0]
    assert output.meta["critical_path_latency_sec"] == critical
    return critical


KL_CASES = ["cost_aware_2_125", "cost_aware_1000_125", "cost_aware_2_160",
            "cost_aware_0.5_200", "mixed_1.5", "mixed_2.0", "mixed_2.5",
            "chain", "in_place"]
# Where the fixed kl_based beats size_based, and so torch 1.13's kl_based,
# whose split is size_based's: 168 against 192 (add_1 moves next to linear)
# and 836 against 900 (relu joins the chain's middle partition, emptying
# its own).
KL_IMPROVED = {"cost_aware_2_160", "chain"}


@pytest.mark.parametrize("name", KL_CASES)
def test_kl_based_fixed(name):
    """The default kl_based (each node's best improving move applied, the
    split following the partitions; see check_split) against torch 1.13's
    size_based on the same trace: the critical path's latency is never
    higher, and strictly lower on KL_IMPROVED. torch 1.13's kl_based splits
    as size_based does (it never updates node_to_partition), so there the
    default also differs from kl_as_torch=true, which matches torch."""
    model, inputs, traced, config = kl_case(name)
    out = sdk_partition(traced, inputs, config, as_torch=False)
    latency = check_split(traced, inputs, config, out)
    _, sized, _ = torch_partition(
        model, inputs, config._replace(mode=PartitionMode.size_based), traced)
    size_based = torch_latency(sized.partitions, config)
    assert latency <= size_based
    if name not in KL_IMPROVED:
        return
    assert latency < size_based
    _, kl, _ = torch_partition(model, inputs, config, traced)
    torch_split = {}
    for node, pid in kl.node_to_partition.items():
        torch_split.setdefault(pid, set()).add(node.name)
    assert sorted(map(sorted, torch_split.values())) == \
        sorted(sorted(n.name for n in p.nodes) for p in sized.partitions)
    as_torch = sdk_partition(traced, inputs, config)
    assert str(as_torch.graph) != str(out.graph)
    if name == "chain":
        assert_same(model, inputs, config, traced=traced)
        assert len(sized.partitions) == 3
        assert len(submodule_names(out)) == 2


class Aot(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.b = torch.rand(4)
        self.c = torch.rand(4)

    def forward(self, a):
        add_1 = a + self.b
        add_2 = self.c + add_1
        return add_2


def test_aot_based_partition():
    model = Aot()
    traced = symbolic_trace(model)
    node_to_partition, partition_to_devices = {}, {}
    for count, node in enumerate(n for n in traced.graph.nodes
                                 if n.op not in {"placeholder", "get_attr",
                                                 "output"}):
        node_to_partition[node] = count
        partition_to_devices[count] = [0]
    config = PartitionerConfig(
        devices=[Device("dev_0", 200, 0)], mode=PartitionMode.aot_based,
        node_to_partition_mapping=node_to_partition,
        partition_to_logical_device_mapping=partition_to_devices)
    ret, _, out = assert_same(model, [torch.rand(4)], config, traced=traced)
    for node in ret.dag.nodes:
        assert node.size_bytes == 48
        assert node.logical_device_ids == [0]
    for n in out.graph.nodes:
        if n.op == "call_module":
            assert n.meta["partition"]["size_bytes"] == 48


class AotUneven(torch.nn.Module):
    """Three call nodes whose partitions differ in size."""

    def __init__(self):
        super().__init__()
        self.b = torch.rand(4)

    def forward(self, a):
        add = a + self.b
        rep = add.repeat(4)
        return rep.sum()


@pytest.mark.parametrize("ids", [(0, 0, 1), (1, 1, 0), (2, 0, 1), (2, 1, 0),
                                 (5, 5, 3), (0, 0, 5)])
def test_aot_based_dag(ids):
    """aot_based with partition ids (of add, repeat, sum_1) not 0, 1, ... in
    order of first appearance. By default each DAG node (its meta's
    logical_device_ids and size_bytes) is its own partition's: the devices
    given for its id, its memory. With dag_by_list_position=true, torch
    1.13's dump_dag: the partition at the list position named by the id;
    where that is past the list's end torch raises IndexError and the pass
    refuses, the graph unchanged."""
    model = AotUneven()
    traced = symbolic_trace(model)
    calls = [n for n in traced.graph.nodes
             if n.op not in ("placeholder", "get_attr", "output")]
    devices = [Device(f"dev_{i}", 1000, i) for i in range(6)]
    config = PartitionerConfig(
        devices, PartitionMode.aot_based,
        node_to_partition_mapping=dict(zip(calls, ids)),
        partition_to_logical_device_mapping={i: [i] for i in set(ids)})
    inputs = [torch.rand(4)]
    out = sdk_partition(traced, inputs, config, as_torch=False)
    graph_manipulation.get_size_of_all_nodes(traced, inputs)
    own = {}
    for node, pid in zip(calls, ids):
        own.setdefault(pid, Partition(pid)).add_node(node)
    for n in out.graph.nodes:
        if n.op == "call_module":
            meta = n.meta["partition"]
            pid = meta["partition_id"]
            assert n.target == f"submod_{pid}"
            assert meta["logical_device_ids"] == [pid]
            assert meta["size_bytes"] == meta["used_mem_bytes"] == \
                own[pid].used_mem_bytes
    if max(ids) < len(set(ids)):
        _, _, listed = assert_same(model, inputs, config, traced=traced)
        order = list(dict.fromkeys(ids))  # torch's partitions list
        for n in listed.graph.nodes:
            if n.op == "call_module":
                position = int(n.name.rsplit("_", 1)[1])
                meta = n.meta["partition"]
                assert meta["logical_device_ids"] == [order[position]]
                assert meta["size_bytes"] == \
                    own[order[position]].used_mem_bytes
        if order != sorted(order):
            assert str(listed.graph) == str(out.graph)
            assert [n.meta["partition"]["logical_device_ids"]
                    for n in listed.graph.nodes if n.op == "call_module"] != \
                [n.meta["partition"]["logical_device_ids"]
                 for n in out.graph.nodes if n.op == "call_module"]
        return
    with pytest.raises(IndexError):
        torch_partition(model, inputs, config, traced)
    position = max(ids)
    refused(model, inputs, options_text(config),
            rf"accelerator_partition: dump_dag: submodule call "
            rf"'submod_{position}' reads partitions\[{position}\], but there "
            rf"are {len(set(ids))} partitions \(torch 1.13 raises IndexError")


def test_saturate_host():
    devices = [Device("dev_0", 200, 0), Device("dev_1", 200, 1),
               Device("dev_2", 100, 2), Device("dev_3", 100, 3),
               Device("dev_4", 200, 4), Device("dev_5", 100, 5)]
    config = PartitionerConfig(devices, saturate_host=True)
    _, partitioner, out = assert_same(LatencyModule(), [torch.rand(4)],
                                      config)
    assert len(partitioner.partitions) == 2
    assert partitioner.partitions[0].logical_device_ids == [0, 4]
    assert partitioner.partitions[1].logical_device_ids == [1, 2]
    calls = [n for n in out.graph.nodes if n.op == "call_module"]
    assert [c.meta["partition"]["logical_device_ids"] for c in calls] == \
        [[0, 4], [1, 2]]


# ------------------------------------------------------ more graphs


class ManyOutputs(torch.nn.Module):
    """Partitions with several results (getitem), kwargs, a dead node."""

    def __init__(self):
        super().__init__()
        self.linear = torch.nn.Linear(8, 8)
        self.register_buffer("scale", torch.rand(8))

    def forward(self, x, y):
        a = torch.relu(x)
        b = torch.sigmoid(y) * self.scale
        c = self.linear(a + b)
        d = torch.cat([c, a], dim=0)
        e = torch.add(d, 1.0, alpha=2.0)
        return e.sum(dim=0, keepdim=True), b, self.scale


@pytest.mark.parametrize("memory", [500, 600, 800, 1200])
def test_size_based_several_results(memory):
    devices = [Device(f"dev_{i}", memory, i) for i in range(6)]
    assert_same(ManyOutputs(), [torch.rand(2, 8), torch.rand(2, 8)],
                PartitionerConfig(devices))


class Mixed(torch.nn.Module):
    """A module called twice, keyword arguments holding nodes, a value read
    by several later partitions, nested module targets, an annotated
    placeholder and a dict result."""

    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(8, 8)
        self.seq = torch.nn.Sequential(torch.nn.Linear(8, 8),
                                       torch.nn.ReLU())

    def forward(self, x: torch.Tensor, y):
        a = self.lin(x)
        b = self.lin(a)
        c = torch.add(input=a, other=b, alpha=2.0)
        d = self.seq(c)
        e = torch.stack([a, b, c, d, y])
        return {"e": e.sum(dim=0), "a": a}


def largest_need(model, inputs):
    traced = symbolic_trace(model)
    graph_manipulation.get_size_of_all_nodes(traced, inputs)
    nodes = [n for n in traced.graph.nodes if n.op != "output"]
    total = sum(n.size_bytes.total_size for n in nodes)
    return total, max(n.size_bytes.total_size +
                      sum(i.size_bytes.output_size for i in n.all_input_nodes)
                      for n in nodes)


@pytest.mark.parametrize("scale", [1.0, 1.5, 2.0, 2.5])
@pytest.mark.parametrize("mode", ["size_based", "kl_based"])
def test_mixed_graph(scale, mode):
    torch.manual_seed(0)
    model = Mixed()
    inputs = [torch.rand(2, 8), torch.rand(2, 8)]
    total, largest = largest_need(model, inputs)
    memory = int(largest * scale)
    devices = [Device(f"dev_{i}", memory, i)
               for i in range(total // memory + 2)]
    traced = symbolic_trace(model)
    mapping = latency_by_size(traced, lambda t: 1, inputs)
    config = PartitionerConfig(devices, PartitionMode[mode],
                               transfer_rate_bytes_per_sec=16,
                               node_to_latency_mapping=mapping)
    probe = symbolic_trace(model)
    try:
        torch_partition(model, inputs, config._replace(
            node_to_latency_mapping=latency_by_size(probe, lambda t: 1,
                                                    inputs)), probe)
    except RuntimeError as e:  # torch's refusal is the pass's
        refused(model, inputs, options_text(config), str(e))
        return
    ret, _, _ = assert_same(model, inputs, config, traced=traced)
    assert len(ret.dag.nodes) >= 2


@pytest.mark.parametrize("name,memory", [("resnet18", 12_000_000),
                                         ("mobilenet_v2", 3_000_000),
                                         ("squeezenet1_1", 1_000_000)])
def test_torchvision_size_based(name, memory):
    import torchvision
    torch.manual_seed(0)
    model = getattr(torchvision.models, name)().eval()
    x = torch.rand(1, 3, 64, 64)
    traced = symbolic_trace(model)
    graph_manipulation.get_size_of_all_nodes(traced, [x])
    sizes = [n for n in traced.graph.nodes if n.op != "output"]
    total = sum(n.size_bytes.total_size for n in sizes)
    largest = max(n.size_bytes.total_size +
                  sum(i.size_bytes.output_size for i in n.all_input_nodes)
                  for n in sizes)
    memory = max(memory, 2 * largest)
    count = total // memory + 2
    devices = [Device(f"dev_{i}", memory, i) for i in range(count)]
    ret, _, _ = assert_same(model, [x], PartitionerConfig(devices))
    assert len(ret.dag.nodes) >= 2


# ------------------------------------------------------------ refusals


DEVICES = "devices=dev_0:100:0,dev_1:100:1"


@pytest.mark.parametrize("options,match", [
    ("accelerator_partition", "No devices"),
    ("accelerator_partition{devices=dev_0:100}", "NAME:AVAILABLE_MEM_BYTES"),
    ("accelerator_partition{devices=dev_0:lots:0}", "'lots' is not an "
                                                    "integer"),
    ("accelerator_partition{devices=d:1:0,d:2:1}", "names device 'd' twice"),
    ("accelerator_partition{" + DEVICES + ",mode=fastest}",
     "option 'mode' is 'fastest'"),
    ("accelerator_partition{" + DEVICES + ",saturate_host=maybe}",
     "saturate_host"),
    ("accelerator_partition{" + DEVICES + ",transfer_rate_bytes_per_sec=x}",
     "transfer_rate_bytes_per_sec"),
    ("accelerator_partition{" + DEVICES + ",colour=red}", "colour"),
    ("accelerator_partition{" + DEVICES +
     ",node_to_latency_mapping=nowhere:1:2}", "'nowhere', which is no node"),
    ("accelerator_partition{" + DEVICES +
     ",node_to_partition_mapping=add:0}", "are for mode aot_based"),
    ("accelerator_partition{devices=dev_0:100:0,mode=aot_based,"
     "node_to_partition_mapping=add:0}", "gives no devices for partition 0"),
    ("accelerator_partition{devices=dev_0:100:0,mode=aot_based,"
     "node_to_partition_mapping=a:0,partition_to_logical_device_mapping=0:0}",
     "'a', which is no call node"),
    ("accelerator_partition{devices=dev_0:100:0,mode=aot_based,"
     "node_to_partition_mapping=add:0,"
     "partition_to_logical_device_mapping=0:7,saturate_host=true}",
     "logical device 7"),
])
def test_bad_options(options, match):
    refused(AddModule(), [torch.rand(4), torch.rand(4)], options, match)


def test_no_tensor_meta():
    gm = symbolic_trace(AddModule())
    sdk = fx_sdk.from_torch_fx(gm)
    with pytest.raises(RuntimeError, match="accelerator_partition: Node a "
                                           "has no tensor metadata"):
        fx_sdk._C._run_pipeline(sdk, "accelerator_partition{" + DEVICES + "}",
                                [], [fx_sdk.PLUGIN_DIR], True, [])


class NoOps(torch.nn.Module):
    def forward(self, a):
        return a


def test_no_operations():
    with pytest.raises(RuntimeError, match="No Partition since no operations"):
        torch_partition(NoOps(), [torch.rand(4)],
                        PartitionerConfig([Device("d", 100, 0)]))
    refused(NoOps(), [torch.rand(4)], "accelerator_partition{" + DEVICES + "}",
            "accelerator_partition: No Partition since no operations")


def test_cost_aware_needs_latencies_and_a_rate():
    model = CostAware()
    devices = ",".join(f"dev_{i}:125:{i}" for i in range(4))
    refused(model, [torch.rand(4)],
            "accelerator_partition{devices=" + devices +
            ",mode=cost_aware,transfer_rate_bytes_per_sec=2}",
            "node 'add' has no latency")
    mapping = latency_by_size(symbolic_trace(model), lambda t: 1)
    latencies = ",".join(f"{n.name}:{l.mem_latency_sec}:"
                         f"{l.computer_latency_sec}"
                         for n, l in mapping.items())
    refused(model, [torch.rand(4)],
            "accelerator_partition{devices=" + devices +
            ",mode=cost_aware,node_to_latency_mapping=" + latencies + "}",
            "transfer_rate_bytes_per_sec' is 0")


def test_sparse_nn_refusals():
    devices = ",".join(f"dev_{i}:200:{i}" for i in range(2))
    refused(CostAware(), [torch.rand(4)],
            "accelerator_partition{devices=" + devices + ",mode=sparse_nn}",
            "no embedding nodes")
    refused(CostAware(), [torch.rand(4)],
            "accelerator_partition{devices=dev_0:200:0,dev_1:220:1,"
            "mode=sparse_nn}", "All devices must have same memory size")


class DeadBranch(torch.nn.Module):
    def forward(self, a):
        torch.relu(a)
        return a + 1


def test_partition_without_result():
    """torch's split_module fails (IndexError) on a partition whose nodes
    nothing outside uses; the pass refuses it."""
    config = PartitionerConfig([Device("d0", 40, 0), Device("d1", 40, 1)])
    with pytest.raises(IndexError):
        torch_partition(DeadBranch(), [torch.rand(4)], config)
    refused(DeadBranch(), [torch.rand(4)], options_text(config),
            "has no result used outside it")
