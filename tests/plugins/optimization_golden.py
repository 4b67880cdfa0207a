#!/usr/bin/python3
"""torch.fx.experimental.optimization on a bundle: the goldens for the
optimization plugin's tests.

    optimization_golden.py TORCHFX_IMPORT_PY BUNDLE_DIR MODE OUT_DIR MODEL

MODEL is the module the bundle was exported from (torchvision:NAME or
FILE:CLASS, as tools/torchfx_export.py takes it). torch's passes take the
module and trace it themselves, so they get the module, built again with
the bundle's weights (read by tools/torchfx_import.py) and in the mode the
bundle records. Writes to OUT_DIR what torch 1.13 makes of it:
  fuse   torch.fx.experimental.optimization.fuse(gm): graph.txt, code.py,
         output.pt (the fused module on BUNDLE_DIR/input.pt), weights.pt
         (every convolution's weight and bias, by qualified name) and
         requires_grad.txt (theirs: "NAME True" lines); error.txt
         with the exception's type when fuse raises instead
  remove_dropout
         torch.fx.experimental.optimization.remove_dropout(gm): graph.txt,
         code.py, output.pt
  merge_matmul
         torch.fx.experimental.merge_matmul.merge_matmul(gm): graph.txt,
         code.py, output.pt
  extract_subgraph{inputs=A,B,outputs=C,nodes=D,E}
         (the pass's text form; nodes optional, by default every node the
         outputs need back to the inputs, in graph order)
         torch.fx.experimental.optimization.extract_subgraph on
         symbolic_trace(model)'s nodes of those names: graph.txt, code.py,
         inputs.pt (the inputs' values when the model runs on
         BUNDLE_DIR/input.pt), output.pt (the subgraph on them)
  replace_target_nodes_with{old_op=..,old_target=..,new_op=..,new_target=..}
         torch.fx.passes.graph_manipulation.replace_target_nodes_with on
         symbolic_trace(model) (call_function targets looked up by their
         dotted names): graph.txt, code.py, output.pt
  split_by_tags{tags=A,B,tag_nodes=A:N+N,B:N,...}
         torch.fx.passes.split_utils.split_by_tags on symbolic_trace(model)
         whose nodes get the tags tag_nodes gives (node.tag): graph.txt,
         code.py, output.pt, and each component's graph and code
         (TAG.graph.txt, TAG.code.py)
  splitter{supported=T,T,min_acc_module_size=N,skip_fusion=B,
           allow_non_tensor=B,non_acc_submodule_name=S}
         torch.fx.passes.splitter_base._SplitterBase(symbolic_trace(model),
         [BUNDLE_DIR/input.pt], OperatorSupport({T: None, ...}), settings)():
         graph.txt, code.py, output.pt, tags.txt (the submodules' names, one
         a line) and each one's graph and code (TAG.graph.txt, TAG.code.py),
         report.txt (node_support_preview's report, then what the splitter
         prints)
  param_fetch
         torch.fx.passes.param_fetch.lift_lowering_attrs_to_nodes on
         symbolic_trace(model): attrs.txt, "NODE REPR" per call_module node
         (repr of node.attrs_for_lowering with each tensor written as
         {'get_attr': QUALIFIED_NAME}, the module's attribute it is), or
         error.txt with the exception's type
  get_size_of_all_nodes
         torch.fx.passes.graph_manipulation.get_size_of_all_nodes on
         symbolic_trace(model) with BUNDLE_DIR/input.pt as its args (its
         ShapeProp): sizes.txt, "NAME OUTPUT_SIZE TOTAL_SIZE" per node
and, for every mode but an error and get_size_of_all_nodes, next_names.txt: the name the result's
graph gives a new node of each get_attr/call_* node's opcode and target, in
graph order, one per line (created one after another: what its namespace
holds after the pass).
Graph text uses the current docs' num_users form.
"""

import contextlib
import importlib.util
import io
import os
import re
import sys

import torch
import torch.fx
from torch.fx.experimental import optimization
from torch.fx.experimental.merge_matmul import merge_matmul


def build(source):
    if source.startswith("torchvision:"):
        import torchvision.models
        return getattr(torchvision.models, source.split(":", 1)[1])()
    path, cls = source.split(":")
    spec = importlib.util.spec_from_file_location("models", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return getattr(mod, cls)()


def main():
    spec = importlib.util.spec_from_file_location("torchfx_import", sys.argv[1])
    importer = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(importer)
    bundle, mode, out_dir, source = sys.argv[2:6]
    os.makedirs(out_dir, exist_ok=True)
    gm = importer.load_bundle(bundle)
    model = build(source)
    model.load_state_dict(gm.state_dict())
    recorded = dict(gm.named_modules())
    for name, m in model.named_modules():
        if name and name in recorded:
            m.training = recorded[name].training
    inputs = torch.load(os.path.join(bundle, "input.pt"))
    if mode.startswith("extract_subgraph"):
        extract(model, mode, inputs, out_dir)
        return
    if mode.startswith("replace_target_nodes_with"):
        replace_targets(model, mode, inputs, out_dir)
        return
    if mode.startswith("split_by_tags"):
        split(model, mode, inputs, out_dir)
        return
    if mode.startswith("splitter"):
        run_splitter(model, mode, inputs, out_dir)
        return
    if mode == "param_fetch":
        fetch_params(model, out_dir)
        return
    if mode == "get_size_of_all_nodes":
        write_sizes(model, inputs, out_dir)
        return
    passes = {"fuse": optimization.fuse,
              "remove_dropout": optimization.remove_dropout,
              "merge_matmul": merge_matmul}
    if mode not in passes:
        sys.exit(f"unknown mode {mode}")
    try:
        result = passes[mode](model)
    except Exception as e:  # torch's own refusal is the golden
        with open(os.path.join(out_dir, "error.txt"), "w") as f:
            f.write(type(e).__name__ + "\n")
        return
    write_text_and_code(result, out_dir)
    with torch.no_grad():
        out = result(*inputs)
    torch.save(out, os.path.join(out_dir, "output.pt"))
    convs = (torch.nn.Conv1d, torch.nn.Conv2d, torch.nn.Conv3d)
    weights, grads = {}, []
    for name, m in result.named_modules():
        if isinstance(m, convs):
            for p in ("weight", "bias"):
                if getattr(m, p) is not None:
                    weights[f"{name}.{p}"] = getattr(m, p).detach()
                    grads.append(f"{name}.{p} {getattr(m, p).requires_grad}")
    torch.save(weights, os.path.join(out_dir, "weights.pt"))
    with open(os.path.join(out_dir, "requires_grad.txt"), "w") as f:
        f.write("\n".join(grads) + "\n")
    write_next_names(result.graph, os.path.join(out_dir, "next_names.txt"))


def pass_options(text):
    """`name{a=x,y,b=z}` -> {"a": ["x", "y"], "b": ["z"]}: an item without
    '=' continues the previous option's list, as the SDK's pipelines read
    it."""
    options, key = {}, None
    body = text[text.index("{") + 1:text.rindex("}")] if "{" in text else ""
    for item in filter(None, (i.strip() for i in body.split(","))):
        if "=" in item:
            key, item = (part.strip() for part in item.split("=", 1))
            options[key] = []
        options[key].append(item)
    return options


def needed(graph, inputs, outputs):
    stop, seen, work = set(inputs), set(), []
    for n in outputs:
        if n not in stop and n not in seen:
            seen.add(n)
            work.append(n)
    while work:
        for i in work.pop().all_input_nodes:
            if i not in stop and i not in seen:
                seen.add(i)
                work.append(i)
    return [n for n in graph.nodes if n in seen]


def extract(model, mode, inputs, out_dir):
    options = pass_options(mode)
    gm = torch.fx.symbolic_trace(model)
    by_name = {n.name: n for n in gm.graph.nodes}
    ins = [by_name[n] for n in options.get("inputs", [])]
    outs = [by_name[n] for n in options["outputs"]]
    nodes = ([by_name[n] for n in options["nodes"]] if "nodes" in options
             else needed(gm.graph, ins, outs))
    values = {}

    class Record(torch.fx.Interpreter):
        def run_node(self, n):
            values[n] = super().run_node(n)
            return values[n]

    with torch.no_grad():
        Record(gm).run(*inputs)
    try:
        result = optimization.extract_subgraph(gm, nodes, ins, outs)
    except Exception as e:  # torch's own refusal is the golden
        with open(os.path.join(out_dir, "error.txt"), "w") as f:
            f.write(type(e).__name__ + "\n")
        return
    write_text_and_code(result, out_dir)
    write_attributes(result, out_dir)
    sub_inputs = [values[n] for n in ins]
    torch.save(sub_inputs, os.path.join(out_dir, "inputs.pt"))
    with torch.no_grad():
        torch.save(result(*sub_inputs), os.path.join(out_dir, "output.pt"))
    write_next_names(result.graph, os.path.join(out_dir, "next_names.txt"))


def lookup(dotted):
    """A function by its dotted name (torch.relu, operator.add): the
    longest importable module prefix, then attributes."""
    parts = dotted.split(".")
    for cut in range(len(parts) - 1, 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for name in parts[cut:]:
            obj = getattr(obj, name)
        return obj
    raise ValueError(f"cannot look up {dotted}")


def replace_targets(model, mode, inputs, out_dir):
    from torch.fx.passes.graph_manipulation import replace_target_nodes_with
    options = {"old_op": "call_function", "new_op": "call_function"}
    options.update({k: v[0] for k, v in pass_options(mode).items()})

    def target(op, name):
        return lookup(name) if op == "call_function" else name

    gm = torch.fx.symbolic_trace(model)
    replace_target_nodes_with(
        gm, options["old_op"], target(options["old_op"], options["old_target"]),
        options["new_op"], target(options["new_op"], options["new_target"]))
    write_text_and_code(gm, out_dir)
    with torch.no_grad():
        torch.save(gm(*inputs), os.path.join(out_dir, "output.pt"))
    write_next_names(gm.graph, os.path.join(out_dir, "next_names.txt"))


def split(model, mode, inputs, out_dir):
    from torch.fx.passes.split_utils import split_by_tags
    options = pass_options(mode)
    gm = torch.fx.symbolic_trace(model)
    tag_of = {}
    for item in options.get("tag_nodes", []):
        tag, names = item.split(":", 1)
        tag_of.update({name: tag for name in names.split("+")})
    for n in gm.graph.nodes:
        if n.name in tag_of:
            n.tag = tag_of[n.name]
    try:
        result = split_by_tags(gm, options["tags"])
    except Exception as e:  # torch's own refusal is the golden
        with open(os.path.join(out_dir, "error.txt"), "w") as f:
            f.write(type(e).__name__ + "\n")
        return
    write_text_and_code(result, out_dir)
    write_attributes(result, out_dir)
    for tag in options["tags"]:
        write_text_and_code(getattr(result, tag), out_dir, tag + ".")
    with torch.no_grad():
        torch.save(result(*inputs), os.path.join(out_dir, "output.pt"))
    write_next_names(result.graph, os.path.join(out_dir, "next_names.txt"))


def run_splitter(model, mode, inputs, out_dir):
    from torch.fx.passes.operator_support import OperatorSupport
    from torch.fx.passes.splitter_base import _SplitterBase, _SplitterSettingBase
    options = pass_options(mode)
    settings = _SplitterSettingBase()
    settings.min_acc_module_size = int(options.get("min_acc_module_size", ["1"])[0])
    settings.skip_fusion = options.get("skip_fusion", ["false"])[0] == "true"
    settings.allow_non_tensor = options.get("allow_non_tensor", ["false"])[0] == "true"
    support = OperatorSupport({t: None for t in options.get("supported", [])})
    name = options.get("non_acc_submodule_name", ["_run_on_cpu_"])[0]
    gm = torch.fx.symbolic_trace(model)
    printed = io.StringIO()
    try:
        splitter = _SplitterBase(gm, list(inputs), support, settings, name)
        with contextlib.redirect_stdout(io.StringIO()):
            preview = splitter.node_support_preview()
        with contextlib.redirect_stdout(printed):
            result = splitter()
    except Exception as e:  # torch's own refusal is the golden
        with open(os.path.join(out_dir, "error.txt"), "w") as f:
            f.write(type(e).__name__ + "\n")
        return
    write_text_and_code(result, out_dir)
    write_attributes(result, out_dir)
    with open(os.path.join(out_dir, "report.txt"), "w") as f:
        f.write(preview)
        f.write(printed.getvalue())
    with open(os.path.join(out_dir, "tags.txt"), "w") as f:
        f.write("".join(tag + "\n" for tag in splitter.tags))
    for tag in splitter.tags:
        write_text_and_code(getattr(result, tag), out_dir, tag + ".")
    with torch.no_grad():
        torch.save(result(*inputs), os.path.join(out_dir, "output.pt"))
    write_next_names(result.graph, os.path.join(out_dir, "next_names.txt"))


def fetch_params(model, out_dir):
    from torch.fx.passes.param_fetch import lift_lowering_attrs_to_nodes
    gm = torch.fx.symbolic_trace(model)
    try:
        lift_lowering_attrs_to_nodes(gm)
    except Exception as e:  # torch's own refusal is the golden
        with open(os.path.join(out_dir, "error.txt"), "w") as f:
            f.write(type(e).__name__ + "\n")
        return
    names = {id(t): name for name, t in
             list(gm.named_parameters()) + list(gm.named_buffers())}

    def referenced(value):
        if isinstance(value, torch.Tensor):
            return {"get_attr": names[id(value)]}
        return value

    with open(os.path.join(out_dir, "attrs.txt"), "w") as f:
        for n in gm.graph.nodes:
            if n.op == "call_module":
                attrs = {k: referenced(v)
                         for k, v in n.attrs_for_lowering.items()}
                f.write(f"{n.name} {attrs!r}\n")


def write_sizes(model, inputs, out_dir):
    from torch.fx.passes.graph_manipulation import get_size_of_all_nodes
    gm = torch.fx.symbolic_trace(model)
    get_size_of_all_nodes(gm, list(inputs))
    with open(os.path.join(out_dir, "sizes.txt"), "w") as f:
        for n in gm.graph.nodes:
            if n.op == "output":
                break
            f.write(f"{n.name} {n.size_bytes.output_size} "
                    f"{n.size_bytes.total_size}\n")


def write_text_and_code(gm, out_dir, prefix=""):
    """PREFIXgraph.txt (print(gm.graph), in the current docs' num_users
    form) and PREFIXcode.py (gm.code)."""
    with open(os.path.join(out_dir, prefix + "graph.txt"), "w") as f:
        f.write(re.sub(r"\[#users=", "[num_users=", str(gm.graph)))
    with open(os.path.join(out_dir, prefix + "code.py"), "w") as f:
        f.write(gm.code)


def write_attributes(gm, out_dir):
    """attributes.txt: the module's submodules, parameters and buffers by
    qualified name, in torch's order (named_modules, then each module's
    own), shared objects listed under every name."""
    modules = list(gm.named_modules(remove_duplicate=False))
    lines = [f"module {name}" for name, _ in modules if name]
    for kind, field in (("parameter", "_parameters"), ("buffer", "_buffers")):
        for name, m in modules:
            lines += [f"{kind} {name + '.' if name else ''}{key}"
                      for key, value in getattr(m, field).items()
                      if value is not None]
    with open(os.path.join(out_dir, "attributes.txt"), "w") as f:
        f.write("".join(line + "\n" for line in lines))


def write_next_names(graph, path):
    made = []
    for n in list(graph.nodes):
        if n.op in ("get_attr", "call_function", "call_method", "call_module"):
            made.append(graph.create_node(n.op, n.target).name)
    with open(path, "w") as f:
        f.write("".join(name + "\n" for name in made))


if __name__ == "__main__":
    main()
