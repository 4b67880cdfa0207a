"""Issue 36's bad input, for every pass of libfx_optimization.so, and the
graph_manipulation and param_fetch passes through fx_sdk.run_pipeline
against torch 1.13's own functions.

The passes and their options are read from `fx plugins` (the plugin's own
table), so a pass added to the plugin is covered without editing this file:
 - an unknown option name is refused naming the pass and the option;
 - every declared option given a value of the wrong type (bool, int and
   float options: text that is none; string and string-list options: a
   value of the wrong form, from BAD_STRING_VALUES, which must cover each
   one) is refused naming the pass and the option;
 - a graph a pass's precondition rejects is refused naming the pass and the
   node;
 - after every refusal the torch.fx GraphModule given to run_pipeline, and
   an SDK GraphModule the pipeline ran on (rolled back), are as they were:
   graph text, code, state_dict;
 - every pass issue 36 asks for is listed by `fx plugins`, with its options.
Then param_fetch, get_size_of_all_nodes and replace_target_nodes_with give
torch's results on torchvision's resnet18 and hand-written modules, and
extract_subgraph, split_by_tags and the splitter's report give torch's
module attributes and spellings. Run by fx_sdk_test.sh (or pytest directly
with PYTHONPATH=bazel-bin/python).
"""

import operator
import os
import re
import subprocess

import pytest
import torch
import torchvision
from torch.fx.experimental.proxy_tensor import make_fx

import fx_sdk

OPTIMIZATION_PLUGIN = os.path.join(fx_sdk.PLUGIN_DIR, "libfx_optimization.so")

# What issue 36 names, by the passes' Python names.
ISSUE_36_PASSES = [
    "normalize_args", "normalize_operators", "reinplace", "merge_matmul",
    "fuse", "remove_dropout", "extract_subgraph", "splitter", "split_by_tags",
    "param_fetch", "replace_target_nodes_with", "get_size_of_all_nodes",
    "annotate_types_with_schema", "gradual_typecheck", "unify_refinements",
    "accelerator_partition",
]


def fx_binary():
    """The `fx` command: in the test's runfiles, else beside the package's
    bazel-bin (bazel-bin/python/fx_sdk/plugins -> bazel-bin/tools/fx)."""
    runfiles = os.path.join(os.environ.get("TEST_SRCDIR", ""),
                            os.environ.get("TEST_WORKSPACE", ""))
    here = os.path.dirname(os.path.abspath(__file__))
    for path in (os.path.join(runfiles, "tools", "fx"),
                 os.path.join(fx_sdk.PLUGIN_DIR, os.pardir, os.pardir,
                              os.pardir, "tools", "fx"),
                 os.path.join(here, os.pardir, os.pardir, "bazel-bin",
                              "tools", "fx")):
        if os.path.isfile(path) and os.access(path, os.X_OK):
            return os.path.normpath(path)
    return None


def fx_plugins(*args):
    fx = fx_binary()
    if fx is None:
        pytest.fail("the fx command is not built (bazel build //tools:fx)")
    result = subprocess.run([fx, "plugins", *args], capture_output=True,
                            text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    return result.stdout


def parse_plugins(text):
    """{plugin: {pass: {option: type}}} from `fx plugins`."""
    plugins, passes = {}, None
    options = None
    for line in text.splitlines():
        m = re.match(r"^plugin (\S+) ", line)
        if m:
            passes = plugins.setdefault(m.group(1), {})
            continue
        m = re.match(r"^  pass ([A-Za-z0-9_]+): ", line)
        if m and passes is not None:
            options = passes.setdefault(m.group(1), {})
            continue
        m = re.match(r"^    option ([A-Za-z0-9_]+) \(([^,]+), default ", line)
        if m and options is not None:
            options[m.group(1)] = m.group(2)
    return plugins


def optimization_passes():
    """The passes of libfx_optimization.so and their options' types, from
    the plugin's own table (`fx plugins` of that file alone)."""
    if fx_binary() is None:
        return {}
    plugins = parse_plugins(fx_plugins("--no-default-plugins", "--plugin",
                                       OPTIMIZATION_PLUGIN))
    return plugins.get("fx_optimization", {})


PASSES = optimization_passes()


def pass_option_cases():
    return [(p, o) for p in sorted(PASSES) for o in sorted(PASSES[p])]


# ------------------------------------------------------------------ graphs


class Small(torch.nn.Module):
    """A Linear and a ReLU module (both in param_fetch's book), a parameter
    read by get_attr, a function and a method."""

    def __init__(self):
        super().__init__()
        self.l = torch.nn.Linear(4, 4)
        self.relu = torch.nn.ReLU()
        self.w = torch.nn.Parameter(torch.rand(4, 4))

    def forward(self, x):
        return torch.matmul(self.relu(self.l(x)), self.w) + torch.sin(x)


class Typed(torch.nn.Module):
    """What gradual_typecheck has rules for."""

    def __init__(self):
        super().__init__()
        self.l = torch.nn.Linear(4, 4)
        self.relu = torch.nn.ReLU()

    def forward(self, x):
        return self.relu(self.l(x)) + x


def functional(x):
    y = x.sin()
    return y.add(1) * 2


class ConvBn(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 4, 3)
        self.bn = torch.nn.BatchNorm2d(4)

    def forward(self, x):
        return self.bn(self.conv(x))


class Dropping(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.l = torch.nn.Linear(4, 4)
        self.drop = torch.nn.Dropout()

    def forward(self, x):
        return self.drop(self.l(x))


class TwoGroups(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.w = torch.nn.Parameter(torch.rand(4, 4))
        self.v = torch.nn.Parameter(torch.rand(4, 4))

    def forward(self, x):
        return (torch.matmul(x, self.w) + torch.matmul(x.sin(), self.w)
                + torch.matmul(x.cos(), self.v) + torch.matmul(x.tan(),
                                                               self.v))


def mutating(x):
    y = x.clone()
    y.add_(1)
    return y * 2


PRECONDITION_GRAPHS = {
    "conv_bn_train": lambda: (torch.fx.symbolic_trace(ConvBn().train()),
                              torch.randn(1, 3, 6, 6)),
    "dropping": lambda: (torch.fx.symbolic_trace(Dropping()),
                         torch.randn(2, 4)),
    "two_groups": lambda: (torch.fx.symbolic_trace(TwoGroups()),
                           torch.randn(2, 4)),
    "mutating": lambda: (make_fx(mutating)(torch.randn(3)), torch.randn(3)),
}


def make_graph(name):
    torch.manual_seed(0)
    if name == "small":
        return torch.fx.symbolic_trace(Small().eval()), torch.randn(2, 4)
    if name == "typed":
        return torch.fx.symbolic_trace(Typed().eval()), torch.randn(2, 4)
    if name == "aten":
        x = torch.randn(3, 4)
        return make_fx(functional)(x), x
    return PRECONDITION_GRAPHS[name]()


# Each pass's run that succeeds: the graph, the passes before it and its
# options. A pass not listed runs alone, without options, on "small".
BASE = {
    "extract_subgraph": ("small", "", "inputs=x,outputs=relu"),
    "replace_target_nodes_with": ("small", "",
                                  "old_target=torch.sin,new_target=torch.cos"),
    "get_size_of_all_nodes": ("small", "shape_prop,", ""),
    "split_by_tags": ("small", "",
                      "tags=a,b,tag_nodes=a:l+relu,b:matmul+sin+add"),
    "splitter": ("small", "shape_prop,",
                 "supported=torch.nn.modules.linear.Linear"),
    "reinplace": ("aten", "", ""),
    "gradual_typecheck": ("typed", "", ""),
    "unify_refinements": ("typed", "gradual_typecheck,", ""),
    "accelerator_partition": ("small", "shape_prop,",
                              "devices=dev_0:1000000000:0"),
}


def base(pass_name):
    return BASE.get(pass_name, ("small", "", ""))


def with_option(pass_name, option, value):
    """The pass's base run with `option` set to `value` (replacing the base's
    value of that option)."""
    graph, before, options = base(pass_name)
    items = split_options(options)
    items = [(k, v) for k, v in items if k != option] + [(option, value)]
    text = ",".join(f"{k}={v}" for k, v in items)
    return graph, before, f"{pass_name}{{{text}}}"


def split_options(text):
    """[(option, value)] of an options text, list values kept whole (an item
    without '=' continues the list before it)."""
    items = []
    for part in text.split(",") if text else []:
        if "=" in part:
            key, value = part.split("=", 1)
            items.append((key, value))
        else:
            items[-1] = (items[-1][0], items[-1][1] + "," + part)
    return items


# A value of the wrong form for each string and string-list option, or None
# where every string is a valid value (with why). Every such option of the
# plugin must be here (test_every_string_option_has_a_bad_value).
BAD_STRING_VALUES = {
    ("extract_subgraph", "inputs"): "no_such_node",
    ("extract_subgraph", "outputs"): "no_such_node",
    ("extract_subgraph", "nodes"): "no_such_node",
    ("replace_target_nodes_with", "old_op"): "call_nothing",
    ("replace_target_nodes_with", "new_op"): "call_nothing",
    # torch's old_target matches what it matches: any target is valid.
    ("replace_target_nodes_with", "old_target"): None,
    ("replace_target_nodes_with", "new_target"): "",
    ("split_by_tags", "tags"): "not.an.identifier",
    # Any meta key is valid (torch reads node.tag; any key names one).
    ("split_by_tags", "meta_key"): None,
    ("split_by_tags", "tag_nodes"): "no_colon",
    # torch's OperatorSupport takes any target name as a key.
    ("splitter", "supported"): None,
    ("splitter", "non_acc_submodule_name"): "not.an.identifier",
    ("splitter", "report"): "/nonexistent_directory/report.txt",
    ("accelerator_partition", "devices"): "no_colons",
    ("accelerator_partition", "mode"): "no_such_mode",
    ("accelerator_partition", "node_to_latency_mapping"): "no_colons",
    ("accelerator_partition", "node_to_partition_mapping"): "no_colons",
    ("accelerator_partition",
     "partition_to_logical_device_mapping"): "no_colons",
}

WRONG_TYPED = {"bool": ["maybe", "2", ""], "int": ["x", "1.5", ""],
               "float": ["x", ""]}


# ------------------------------------------------------------------ checks


def snapshot(gm):
    """Graph text, code and state_dict (copied) of a torch.fx GraphModule."""
    return (str(gm.graph), gm.code,
            {k: v.detach().clone() for k, v in gm.state_dict().items()})


def assert_same(before, after):
    assert after[0] == before[0]
    assert after[1] == before[1]
    assert sorted(after[2]) == sorted(before[2])
    for k, v in before[2].items():
        assert torch.equal(after[2][k], v), k


def sdk_snapshot(sdk):
    return snapshot(fx_sdk.to_torch_fx(sdk))


def refused(graph, before, pipeline, *names):
    """Runs `before` + `pipeline` on `graph` through fx_sdk.run_pipeline and,
    after `before`, `pipeline` alone on an SDK GraphModule: both must refuse
    naming each of `names`, leave the torch.fx GraphModule and the SDK one
    as they were; returns the message."""
    gm, x = make_graph(graph)
    kept = snapshot(gm)
    with pytest.raises((ValueError, RuntimeError)) as e:
        fx_sdk.run_pipeline(gm, before + pipeline, example_inputs=[x])
    message = str(e.value)
    for name in names:
        assert name in message, (name, message)
    assert_same(kept, snapshot(gm))

    sdk = fx_sdk.from_torch_fx(gm)
    if before:
        fx_sdk._C._run_pipeline(sdk, before.rstrip(","), [],
                                [fx_sdk.PLUGIN_DIR], True, [x])
    kept = sdk_snapshot(sdk)
    with pytest.raises((ValueError, RuntimeError)) as e:
        fx_sdk._C._run_pipeline(sdk, pipeline, [], [fx_sdk.PLUGIN_DIR], True,
                                [x])
    for name in names:
        assert name in str(e.value), (name, str(e.value))
    assert_same(kept, sdk_snapshot(sdk))
    return message


def test_the_plugin_has_passes():
    assert fx_binary() is not None, "bazel build //tools:fx"
    assert len(PASSES) >= len(ISSUE_36_PASSES), PASSES


def test_fx_plugins_lists_every_issue_36_pass():
    listed = parse_plugins(fx_plugins())
    passes = listed.get("fx_optimization", {})
    missing = [p for p in ISSUE_36_PASSES if p not in passes]
    assert not missing, missing
    # Options named after torch's Python arguments where torch has them.
    assert "min_acc_module_size" in passes["splitter"]
    assert "allow_non_tensor" in passes["splitter"]
    assert "skip_fusion" in passes["splitter"]
    assert {"old_op", "old_target", "new_op",
            "new_target"} <= set(passes["replace_target_nodes_with"])
    assert {"inputs", "outputs", "nodes"} <= set(passes["extract_subgraph"])
    assert "tags" in passes["split_by_tags"]
    assert "normalize_to_only_use_kwargs" in passes["normalize_args"]


@pytest.mark.parametrize("pass_name", sorted(PASSES))
def test_base_run_succeeds(pass_name):
    """The run the refusals below vary: without a bad value, it runs."""
    graph, before, options = base(pass_name)
    gm, x = make_graph(graph)
    text = pass_name + (f"{{{options}}}" if options else "")
    _, report = fx_sdk.run_pipeline(gm, before + text, example_inputs=[x])
    assert report[-1]["pass"] == pass_name
    assert report[-1]["outcome"] in ("ran", "not_run"), report


@pytest.mark.parametrize("pass_name", sorted(PASSES))
def test_unknown_option_is_refused(pass_name):
    graph, before, _ = base(pass_name)
    _, _, pipeline = with_option(pass_name, "no_such_option", "1")
    refused(graph, before, pipeline, f"'{pass_name}'", "no_such_option")


def test_every_string_option_has_a_bad_value():
    missing = [(p, o) for p, o in pass_option_cases()
               if PASSES[p][o] not in WRONG_TYPED
               and (p, o) not in BAD_STRING_VALUES]
    assert not missing, (
        "add a value of the wrong form for these options to "
        f"BAD_STRING_VALUES: {missing}")


@pytest.mark.parametrize("pass_name,option", pass_option_cases())
def test_option_of_the_wrong_type_is_refused(pass_name, option):
    kind = PASSES[pass_name][option]
    if kind in WRONG_TYPED:
        values = WRONG_TYPED[kind]
    else:
        value = BAD_STRING_VALUES.get((pass_name, option))
        if value is None:
            pytest.skip(f"{kind} option {option}: every value is valid")
        values = [value]
    graph, before, _ = base(pass_name)
    for value in values:
        _, _, pipeline = with_option(pass_name, option, value)
        refused(graph, before, pipeline, pass_name, f"'{option}'")


# A graph each pass's precondition rejects: (pass, graph, passes before,
# the pipeline, what the refusal names the node as).
PRECONDITIONS = [
    ("fuse", "conv_bn_train", "", "fuse", "'conv'"),
    ("get_size_of_all_nodes", "small", "", "get_size_of_all_nodes",
     "Node x "),
    ("splitter", "small", "",
     "splitter{supported=torch.nn.modules.linear.Linear}", "'l'"),
    ("accelerator_partition", "small", "",
     "accelerator_partition{devices=dev_0:1000000000:0}", "Node x "),
    ("param_fetch", "dropping", "", "param_fetch", "'drop'"),
    ("merge_matmul", "two_groups", "", "merge_matmul", "'matmul_2'"),
    ("reinplace", "mutating", "", "reinplace", "'add_'"),
    ("gradual_typecheck", "dropping", "", "gradual_typecheck", "'drop'"),
    ("extract_subgraph", "small", "",
     "extract_subgraph{inputs=x,outputs=add,nodes=relu,add}", "'relu'"),
    ("split_by_tags", "small", "",
     "split_by_tags{tags=a,tag_nodes=a:l+relu}", "'matmul'"),
    ("replace_target_nodes_with", "small", "",
     "replace_target_nodes_with{old_target=torch.sin,"
     "new_target=no_such.function}", "Node sin "),
]


@pytest.mark.parametrize("pass_name,graph,before,pipeline,node",
                         PRECONDITIONS,
                         ids=[c[0] for c in PRECONDITIONS])
def test_precondition_refusal_names_pass_and_node(pass_name, graph, before,
                                                  pipeline, node):
    refused(graph, before, pipeline, pass_name, node)


# ----------------------------------------- param_fetch, graph_manipulation


class FetchBook(torch.nn.Module):
    """torch's module_fetch_book's corners: a convolution without bias and
    with string padding, a BatchNorm2d without affine weights or running
    statistics, ReLU in place, MaxPool2d with tuples, AdaptiveAvgPool2d."""

    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 4, 3, padding="same", bias=False)
        self.bn = torch.nn.BatchNorm2d(4, affine=False,
                                       track_running_stats=False)
        self.relu = torch.nn.ReLU(inplace=True)
        self.pool = torch.nn.MaxPool2d((2, 2), stride=(1, 2), padding=(1, 0),
                                       ceil_mode=True)
        self.avg = torch.nn.AdaptiveAvgPool2d((1, 1))
        self.fc = torch.nn.Linear(4, 3)

    def forward(self, x):
        y = self.avg(self.pool(self.relu(self.bn(self.conv(x)))))
        return self.fc(torch.flatten(y, 1))


def resnet18():
    torch.manual_seed(0)
    return torchvision.models.resnet18().eval(), torch.randn(1, 3, 64, 64)


def fetch_book():
    torch.manual_seed(0)
    return FetchBook().eval(), torch.randn(2, 3, 8, 8)


def small():
    torch.manual_seed(0)
    return Small().eval(), torch.randn(2, 4)


MODELS = {"resnet18": resnet18, "fetch_book": fetch_book, "small": small}


def torch_attrs(gm, node):
    """torch's node.attrs_for_lowering, tensors as the {'get_attr': NAME}
    references the SDK's meta holds."""
    names = {id(t): name for name, t in
             list(gm.named_parameters()) + list(gm.named_buffers())}
    return {k: {"get_attr": names[id(v)]} if isinstance(v, torch.Tensor)
            else v for k, v in node.attrs_for_lowering.items()}


@pytest.mark.parametrize("model", ["resnet18", "fetch_book", "small"])
def test_param_fetch_is_torchs(model):
    from torch.fx.passes.param_fetch import lift_lowering_attrs_to_nodes
    module, _ = MODELS[model]()
    expected = torch.fx.symbolic_trace(module)
    lift_lowering_attrs_to_nodes(expected)
    got, report = fx_sdk.run_pipeline(torch.fx.symbolic_trace(module),
                                      "param_fetch")
    assert report[0]["outcome"] == "ran"
    assert str(got.graph) == str(expected.graph)
    assert got.code == expected.code
    theirs = {n.name: n for n in expected.graph.nodes}
    fetched = 0
    for n in got.graph.nodes:
        if n.op != "call_module":
            assert "attrs_for_lowering" not in n.meta, n.name
            continue
        fetched += 1
        assert n.meta["attrs_for_lowering"] == torch_attrs(
            expected, theirs[n.name]), n.name
    assert fetched > 0


def test_param_fetch_refuses_as_torch_does():
    """Conv1d is not in torch's book: both refuse, naming the class as
    torch.typename spells it."""
    from torch.fx.passes.param_fetch import lift_lowering_attrs_to_nodes
    module = torch.nn.Sequential(torch.nn.Conv1d(3, 4, 3))
    with pytest.raises(RuntimeError) as theirs:
        lift_lowering_attrs_to_nodes(torch.fx.symbolic_trace(module))
    gm = torch.fx.symbolic_trace(module)
    with pytest.raises(RuntimeError) as ours:
        fx_sdk.run_pipeline(gm, "param_fetch")
    typename = "torch.nn.modules.conv.Conv1d"
    assert str(theirs.value).startswith(typename + " is not in the "
                                        "module_fetch_book yet")
    assert typename + ", which is not in the module_fetch_book yet" in str(
        ours.value)
    assert "node '_0'" in str(ours.value)


@pytest.mark.parametrize("model", ["resnet18", "fetch_book", "small"])
def test_get_size_of_all_nodes_is_torchs(model):
    from torch.fx.passes.graph_manipulation import get_size_of_all_nodes
    module, x = MODELS[model]()
    expected = torch.fx.symbolic_trace(module)
    get_size_of_all_nodes(expected, [x])
    got, report = fx_sdk.run_pipeline(torch.fx.symbolic_trace(module),
                                      "shape_prop,get_size_of_all_nodes",
                                      example_inputs=[x])
    assert [r["outcome"] for r in report] == ["ran", "ran"]
    theirs = {n.name: n for n in expected.graph.nodes}
    sized = 0
    for n in got.graph.nodes:
        if n.op == "output":
            assert "size_bytes" not in n.meta
            continue
        want = theirs[n.name].size_bytes
        assert tuple(n.meta["size_bytes"]) == (want.output_size,
                                               want.total_size), n.name
        sized += 1
    assert sized == len(theirs) - 1
    assert str(got.graph) == str(expected.graph)
    assert got.code == expected.code


class Replaceable(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.l = torch.nn.Linear(4, 4)

    def forward(self, x):
        y = torch.sin(self.l(x)).sigmoid()
        return torch.neg(y) + torch.sin(x)


# (model, torch's arguments, the pass's options); the targets of
# call_function nodes are callables for torch and qualified names here.
REPLACEMENTS = [
    ("resnet18", ("call_function", operator.add, "call_function", torch.add),
     "old_target=operator.add,new_target=torch.add"),
    ("resnet18", ("call_module", "relu", "call_function", torch.relu),
     "old_op=call_module,old_target=relu,new_target=torch.relu"),
    ("resnet18", ("call_function", torch.flatten, "call_method", "flatten"),
     "old_target=torch.flatten,new_op=call_method,new_target=flatten"),
    ("replaceable", ("call_function", torch.sin, "call_function", torch.cos),
     "old_target=torch.sin,new_target=torch.cos"),
    ("replaceable", ("call_method", "sigmoid", "call_method", "tanh"),
     "old_op=call_method,old_target=sigmoid,new_op=call_method,"
     "new_target=tanh"),
    ("replaceable", ("call_function", torch.neg, "call_method", "neg"),
     "old_target=torch.neg,new_op=call_method,new_target=neg"),
    ("replaceable", ("call_module", "l", "call_function", torch.relu),
     "old_op=call_module,old_target=l,new_target=torch.relu"),
    # Nothing matches: nothing changes.
    ("replaceable", ("call_function", torch.cos, "call_function", torch.sin),
     "old_target=torch.cos,new_target=torch.sin"),
]


def replaceable():
    torch.manual_seed(0)
    return Replaceable().eval(), torch.randn(2, 4)


@pytest.mark.parametrize("model,args,options", REPLACEMENTS,
                         ids=[f"{m}-{o}" for m, _, o in REPLACEMENTS])
def test_replace_target_nodes_with_is_torchs(model, args, options):
    from torch.fx.passes.graph_manipulation import replace_target_nodes_with
    module, x = {**MODELS, "replaceable": replaceable}[model]()
    expected = torch.fx.symbolic_trace(module)
    replace_target_nodes_with(expected, *args)
    expected.recompile()
    got, report = fx_sdk.run_pipeline(
        torch.fx.symbolic_trace(module),
        f"replace_target_nodes_with{{{options}}}")
    assert report[0]["outcome"] in ("ran", "not_run")
    assert str(got.graph) == str(expected.graph)
    assert got.code == expected.code
    with torch.no_grad():
        torch.testing.assert_close(got(x), expected(x), rtol=0, atol=0)


# ------------------------------------------------- torch's module, spelling


def attribute_names(gm):
    return ([n for n, _ in gm.named_parameters()],
            [n for n, _ in gm.named_buffers()],
            [n for n, _ in gm.named_modules()])


class Extra(torch.nn.Module):
    """Modules, a parameter and a buffer, some of which a cut leaves out."""

    def __init__(self):
        super().__init__()
        self.a = torch.nn.Linear(4, 4)
        self.b = torch.nn.Linear(4, 4)
        self.c = torch.nn.Linear(4, 4)
        self.register_buffer("buf", torch.ones(4))
        self.p = torch.nn.Parameter(torch.ones(4))

    def forward(self, x):
        y = torch.relu(self.a(x)) + self.buf
        return self.c(self.b(y) * self.p)


@pytest.mark.parametrize("cut", [("add", "mul", ["b", "p", "mul"]),
                                 ("x", "relu", ["a", "relu"]),
                                 ("relu", "c", None)])
def test_extract_subgraph_module_is_torchs(cut):
    from torch.fx.experimental.optimization import extract_subgraph
    inputs, outputs, nodes = cut
    module = Extra()
    gm = torch.fx.symbolic_trace(module)
    by_name = {n.name: n for n in gm.graph.nodes}
    if nodes is None:  # the pass's default: what the output needs
        nodes = ["buf", "add", "b", "p", "mul", "c"]
    expected = extract_subgraph(gm, [by_name[n] for n in nodes],
                                [by_name[inputs]], [by_name[outputs]])
    options = f"inputs={inputs},outputs={outputs}" + (
        ",nodes=" + ",".join(nodes) if cut[2] is not None else "")
    got, _ = fx_sdk.run_pipeline(torch.fx.symbolic_trace(module),
                                 f"extract_subgraph{{{options}}}")
    assert str(got.graph) == str(expected.graph)
    assert attribute_names(got) == attribute_names(expected)


def test_extract_subgraph_module_of_resnet18_is_torchs():
    from torch.fx.experimental.optimization import extract_subgraph
    module, _ = resnet18()
    gm = torch.fx.symbolic_trace(module)
    nodes = list(gm.graph.nodes)
    names = [n.name for n in nodes]
    start, end = names.index("layer1_1_relu_1"), names.index(
        "layer2_1_relu_1")
    expected = extract_subgraph(gm, nodes[start + 1:end + 1], [nodes[start]],
                                [nodes[end]])
    got, _ = fx_sdk.run_pipeline(
        torch.fx.symbolic_trace(module),
        "extract_subgraph{inputs=layer1_1_relu_1,outputs=layer2_1_relu_1}")
    assert got.code == expected.code
    assert attribute_names(got) == attribute_names(expected)


def split_torch(module, tags, tag_of):
    from torch.fx.passes.split_utils import split_by_tags
    gm = torch.fx.symbolic_trace(module)
    for n in gm.graph.nodes:
        if n.name in tag_of:
            n.tag = tag_of[n.name]
    return split_by_tags(gm, tags)


def tags_pipeline(tags, tag_of):
    groups = {t: [n for n, g in tag_of.items() if g == t] for t in tags}
    return ("split_by_tags{tags=" + ",".join(tags) + ",tag_nodes=" +
            ",".join(f"{t}:{'+'.join(ns)}" for t, ns in groups.items()
                     if ns) + "}")


class ModulesOnly(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.nn.Linear(4, 4)
        self.b = torch.nn.Linear(4, 4)
        self.unused = torch.nn.Linear(4, 4)
        self.register_buffer("buf", torch.ones(4))

    def forward(self, x):
        return self.b(torch.relu(self.a(x)) + self.buf)


def test_split_by_tags_module_is_torchs():
    tags = ["t1", "t2"]
    tag_of = {"a": "t1", "relu": "t1", "add": "t2", "b": "t2"}
    module = ModulesOnly()
    expected = split_torch(module, tags, tag_of)
    got, _ = fx_sdk.run_pipeline(torch.fx.symbolic_trace(module),
                                 tags_pipeline(tags, tag_of))
    assert got.code == expected.code
    assert attribute_names(got) == attribute_names(expected)
    for tag in tags:
        assert attribute_names(getattr(got, tag)) == attribute_names(
            getattr(expected, tag))


def test_split_by_tags_keeps_a_components_parameter_a_parameter():
    """A Parameter a component reads by get_attr is one in torch's split
    and in ours (a child GraphModule's file records its parameters' kinds:
    its reader's GraphModule constructor makes buffers of plain tensors)."""
    tags = ["t1", "t2"]
    tag_of = {"a": "t1", "relu": "t1", "add": "t1", "b": "t2", "mul": "t2",
              "c": "t2"}
    module = Extra()
    expected = split_torch(module, tags, tag_of)
    got, _ = fx_sdk.run_pipeline(torch.fx.symbolic_trace(module),
                                 tags_pipeline(tags, tag_of))
    assert attribute_names(got) == attribute_names(expected)


def test_param_fetch_goes_into_graph_module_children():
    """torch's lift_lowering_attrs_to_nodes recurses into GraphModule
    children; ours through C ABI version 16's GraphSubmoduleGraph."""
    from torch.fx.passes.param_fetch import lift_lowering_attrs_to_nodes
    tags = ["t1", "t2"]
    tag_of = {"a": "t1", "relu": "t1", "add": "t2", "b": "t2"}
    module = ModulesOnly()
    expected = split_torch(module, tags, tag_of)
    lift_lowering_attrs_to_nodes(expected)
    got, _ = fx_sdk.run_pipeline(torch.fx.symbolic_trace(module),
                                 tags_pipeline(tags, tag_of) + ",param_fetch")
    compared = 0
    for tag in tags:
        theirs = {n.name: n for n in getattr(expected, tag).graph.nodes}
        for n in getattr(got, tag).graph.nodes:
            if n.op == "call_module":
                assert n.meta.get("attrs_for_lowering") == torch_attrs(
                    getattr(expected, tag), theirs[n.name])
                compared += 1
    assert compared == 2  # a in t1, b in t2
    # The calls of the children themselves get nothing, as in torch.
    for n in got.graph.nodes:
        assert "attrs_for_lowering" not in n.meta, n.name


def test_param_fetch_in_a_child_is_rolled_back_with_the_pass():
    """A module outside torch's module_fetch_book inside a child
    GraphModule: the pass fails (naming the node) after annotating the
    other child, and the rollback takes that child's entries back too."""
    tags = ["t1", "t2"]
    tag_of = {"a": "t1", "relu": "t1", "add": "t2", "b": "t2"}
    module = ModulesOnly()
    module.b = torch.nn.Hardswish()
    traced = torch.fx.symbolic_trace(module)
    with pytest.raises(RuntimeError, match="node 'b' calls "
                       "torch.nn.modules.activation.Hardswish"):
        fx_sdk.run_pipeline(traced, tags_pipeline(tags, tag_of) +
                            ",param_fetch")
    sdk_gm = fx_sdk.from_torch_fx(traced)
    files, dirs = fx_sdk._plugin_sources((), True)
    report = fx_sdk._C._run_pipeline(
        sdk_gm, tags_pipeline(tags, tag_of), files, dirs, True, [],
        recompile=True, example_batches=[])
    assert report[0]["outcome"] == "ran"
    split = fx_sdk.to_torch_fx(sdk_gm)
    with pytest.raises(RuntimeError, match="rolled back"):
        fx_sdk._C._run_pipeline(sdk_gm, "param_fetch", files, dirs, True,
                                [], recompile=True, example_batches=[])
    after = fx_sdk.to_torch_fx(sdk_gm)
    for tag in tags:
        for n in getattr(after, tag).graph.nodes:
            assert "attrs_for_lowering" not in n.meta, (tag, n.name)
        assert str(getattr(after, tag).graph) == \
            str(getattr(split, tag).graph)


class ManyClasses(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 4, 3)
        self.act = torch.nn.Hardswish()
        self.pool = torch.nn.MaxPool2d(2)
        self.avg = torch.nn.AdaptiveAvgPool2d(1)
        self.flat = torch.nn.Flatten()
        self.drop = torch.nn.Dropout()
        self.fc = torch.nn.Linear(4, 3)
        self.norm = torch.nn.LayerNorm(3)

    def forward(self, x):
        y = self.pool(self.act(self.conv(x)))
        return self.norm(self.fc(self.drop(self.flat(self.avg(y))))).relu()


def torch_splitter_report(module, x, supported, min_size):
    from torch.fx.passes.operator_support import OperatorSupport
    from torch.fx.passes.splitter_base import (_SplitterBase,
                                               _SplitterSettingBase)
    import contextlib
    import io
    settings = _SplitterSettingBase()
    settings.min_acc_module_size = min_size
    splitter = _SplitterBase(torch.fx.symbolic_trace(module), [x],
                             OperatorSupport({t: None for t in supported}),
                             settings)
    with contextlib.redirect_stdout(io.StringIO()):
        preview = splitter.node_support_preview()
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        splitter()
    return preview + printed.getvalue()


@pytest.mark.parametrize("model", ["many_classes", "resnet18"])
def test_splitter_report_spells_classes_as_torch(model, tmp_path):
    if model == "resnet18":
        module, x = resnet18()
        supported = ["torch.nn.modules.conv.Conv2d",
                     "torch.nn.modules.batchnorm.BatchNorm2d"]
    else:
        torch.manual_seed(0)
        module, x = ManyClasses().eval(), torch.randn(2, 3, 8, 8)
        supported = ["torch.nn.modules.conv.Conv2d",
                     "torch.nn.modules.activation.Hardswish",
                     "torch.nn.modules.normalization.LayerNorm"]
    expected = torch_splitter_report(module, x, supported, 2)
    assert "torch.nn.modules." in expected
    path = tmp_path / "report.txt"
    fx_sdk.run_pipeline(
        torch.fx.symbolic_trace(module),
        "shape_prop,splitter{supported=" + ",".join(supported) +
        f",min_acc_module_size=2,report={path}}}", example_inputs=[x])
    assert path.read_text() == expected



class ConvBnRelu(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 3, 3)
        self.bn = torch.nn.BatchNorm2d(3)

    def forward(self, x):
        return torch.relu(self.bn(self.conv(x)))


def test_a_python_meta_kernel_that_raises_inside_a_pipeline_is_handled():
    """split_by_tags' components are checked against shape_prop's
    tensor_meta on meta tensors; the BatchNorm's runs torch's meta kernel,
    written in Python, which raises on CPU running statistics. The host
    takes that as "cannot be checked": run_pipeline returns its report (it
    raised SystemError, returning with Python's error indicator still set)
    and the split module computes the model's numbers."""
    model = ConvBnRelu().eval()
    gm = torch.fx.symbolic_trace(model)
    x = torch.randn(1, 3, 8, 8)
    out, report = fx_sdk.run_pipeline(
        gm, "shape_prop,split_by_tags{tags=a,b,tag_nodes=a:conv,b:bn+relu}",
        example_inputs=[x])
    assert [r["outcome"] for r in report] == ["ran", "ran"]
    with torch.no_grad():
        assert torch.equal(out(x), model(x))
