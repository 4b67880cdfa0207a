"""fx_sdk: the fx SDK from Python, in memory.

    import torch, fx_sdk
    gm = torch.fx.symbolic_trace(model)
    sdk_gm = fx_sdk.from_torch_fx(gm)       # the SDK's GraphModule
    sdk_gm.graph_text, sdk_gm.code         # print(gm.graph), gm.code
    y = sdk_gm(x)                           # runs the SDK's compiled plan
    back = fx_sdk.to_torch_fx(sdk_gm)       # a torch.fx GraphModule again
    for node in sdk_gm.graph.nodes: ...     # torch.fx's graph API (graph.py)
    sdk_gm.recompile()
    out, report = fx_sdk.run_pipeline(gm, "dce,cse")
    fast = fx_sdk.compile(gm, [x])          # the SDK's InferencePlan
    y = fast(x)
    f = functorch.compile.aot_function(fn, fw_compiler=fx_sdk.compile)

Graphs cross as the fx-graph interchange format (../shared/spec) in memory,
never as files; parameters, buffers and get_attr tensors are shared, not
copied: the SDK's modules hold the same storage as the torch.fx
GraphModule's, and so does the GraphModule to_torch_fx returns. Submodules
cross by type and constructor config (tools/torchfx_export.py's
module_config), so a call_module target must be a module kind the SDK
knows (torch.nn's). Node meta crosses both ways where the format can hold
it (ARG values; shape_prop's TensorMetadata as the spec's tensor_meta);
the rest (tensors, types, other objects) is left out.

Errors: a graph the SDK cannot represent or load (an unsupported argument
value, module or target) raises ValueError naming the node or module; a
pipeline that does not parse or names an unknown pass raises ValueError; one
that stops at a failing pass raises RuntimeError naming it.

Installed with `bazel run //:install -- PREFIX`, the package is
PREFIX/lib/python/fx_sdk and finds its plugins in PREFIX/lib/fx-sdk/plugins.
Import torch before this module (it links the same LibTorch).
"""

import json
import os

import torch
import torch.fx

from . import _C
from . import graph as _graph
from . import torchfx_export as _export
from . import torchfx_import as _import

__all__ = ["GraphModule", "Graph", "Node", "CompiledGraph", "from_torch_fx",
           "to_torch_fx", "run_pipeline", "compile", "PLUGIN_DIR"]

GraphModule = _C.GraphModule
CompiledGraph = _C.CompiledGraph
Graph = _graph.Graph  # sdk_gm.graph: torch.fx's Graph API (graph.py)
Node = _graph.Node



def _plugin_dir():
    """The first-party plugins (dce, cse, shape_prop, decompose, ...): inside
    the package as Bazel builds it (bazel-bin/python/fx_sdk/plugins), or where
    `bazel run //:install -- PREFIX` puts them beside the installed package
    (PREFIX/lib/python/fx_sdk -> PREFIX/lib/fx-sdk/plugins)."""
    package = os.path.dirname(os.path.abspath(__file__))
    inside = os.path.join(package, "plugins")
    installed = os.path.join(package, os.pardir, os.pardir, "fx-sdk",
                             "plugins")
    if not os.path.isdir(inside) and os.path.isdir(installed):
        return os.path.normpath(installed)
    return inside


PLUGIN_DIR = _plugin_dir()

# Type names seen in graphs converted from torch.fx -> the Python types, so
# that to_torch_fx gives nodes back the types they had (torch.Tensor,
# typing.List[int], a user's class).
_types = {}


def _record_types(gm, document):
    by_name = {node.name: node for node in gm.graph.nodes}
    for entry in document["nodes"]:
        node = by_name.get(entry["name"])
        if "type" in entry and node is not None and node.type is not None:
            _types.setdefault(entry["type"], node.type)


def from_torch_fx(gm):
    """The SDK's GraphModule for a torch.fx GraphModule `gm` (parameters,
    buffers and get_attr tensors shared). Raises ValueError naming the node
    or module the SDK cannot take."""
    if not isinstance(gm, torch.fx.GraphModule):
        raise TypeError(f"from_torch_fx takes a torch.fx.GraphModule, not "
                        f"{type(gm).__name__}")
    document, weights = _export.graph_document(gm, copy_weights=False,
                                               meta=True)
    _record_types(gm, document)
    if weights:
        document["weights"] = "in-memory"
    return _C._from_bundle(json.dumps(document), list(weights.items()))


def to_torch_fx(sdk_gm):
    """A torch.fx GraphModule for the SDK's GraphModule `sdk_gm`: the same
    graph text and code, its parameters and buffers shared with sdk_gm's."""
    if not isinstance(sdk_gm, GraphModule):
        raise TypeError(f"to_torch_fx takes an fx_sdk.GraphModule, not "
                        f"{type(sdk_gm).__name__}")
    text, weights = _C._to_bundle(sdk_gm)
    try:
        return _import.build_graph_module(json.loads(text), dict(weights),
                                          share=True, types=_types)
    except _import.BundleError as e:
        raise ValueError(str(e)) from None


def run_pipeline(gm, pipeline, plugins=(), example_inputs=(),
                 default_plugins=True):
    """Runs the SDK's pass pipeline `pipeline` (fx run's text form:
    "shape_prop{shapes=1x3x224x224},decompose{rules=relu},dce") on a
    torch.fx GraphModule. `plugins` are plugin files or directories, loaded
    before the first-party plugins (PLUGIN_DIR) and $FX_PLUGIN_PATH
    (default_plugins=False leaves those out). `example_inputs` are the
    tensors passes get as example inputs.

    Returns (GraphModule, report): a new torch.fx GraphModule (parameters
    shared with gm's unless a pass replaced them) and one dict per pass:
    pass, plugin, outcome ("ran", "rolled_back", "not_run"), changed,
    seconds (run wall time), verify_seconds, error. A pass that failed and
    was rolled back is in the report; a pipeline that stops raises
    RuntimeError."""
    sdk_gm = from_torch_fx(gm)
    files, dirs = [], []
    for p in plugins:
        (dirs if os.path.isdir(p) else files).append(os.fspath(p))
    if default_plugins and os.path.isdir(PLUGIN_DIR):
        dirs.append(PLUGIN_DIR)
    report = _C._run_pipeline(sdk_gm, pipeline, files, dirs, default_plugins,
                              list(example_inputs))
    return to_torch_fx(sdk_gm), report


def compile(gm, example_inputs):  # noqa: A001 (torch.compile's name)
    """A callable that runs the SDK's InferencePlan
    (fx_core/runtime/plan/inference_plan.h) for `gm`, a torch.fx
    GraphModule or an fx_sdk.GraphModule, planned on `example_inputs`.
    Call it as gm: compiled(*inputs) returns what gm returns.

    It has the signature of a functorch.compile.aot_function fw_compiler
    (or bw_compiler): aot_function(fn, fw_compiler=fx_sdk.compile). Inputs
    of other shapes re-plan; with grad mode on the plan runs the SDK's
    GraphModule.forward. Raises ValueError naming the node the SDK cannot
    take or run on the example inputs."""
    sdk_gm = gm if isinstance(gm, GraphModule) else from_torch_fx(gm)
    return _C._compile(sdk_gm, list(example_inputs))
