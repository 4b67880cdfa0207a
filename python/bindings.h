// The parts of fx_sdk._C, one per file; fx_sdk_module.cc assembles them into
// the module. Bindings only: the work lives in fx_core and plugin_api. The
// values every part converts are below them all (python_values.h,
// held_objects.h); a part calls no function of fx_sdk_module.cc.
//
// Errors cross as Python exceptions: an input the SDK cannot take (a graph,
// an argument value, a pipeline) raises ValueError; a misuse of a handle
// (a node of another graph, a graph replaced since it was read) raises
// RuntimeError or ValueError with the SDK's message.
#ifndef PYTHON_BINDINGS_H_
#define PYTHON_BINDINGS_H_

#include <pybind11/pybind11.h>

#include <memory>
#include <string>
#include <unordered_map>

#include "fx_core/runtime/graph_module.h"

namespace fx {
struct InProcessParts;
class CodeGen;
class Graph;
}  // namespace fx

namespace fx_sdk {

using GraphModuleClass =
    pybind11::class_<fx::GraphModule, std::shared_ptr<fx::GraphModule>>;

// fx_sdk._C.Graph and Node, and GraphModule's graph and recompile
// (graph_api.cc).
void bind_graph(pybind11::module_& m, GraphModuleClass& graph_module);
// Tells the graph API that gm's graph was replaced (a pipeline rolled a pass
// back): Graph and Node handles read before then raise from now on.
void graph_replaced(const fx::GraphModule& gm);
// fx_sdk._C.CompiledGraph and _compile (compiled_graph.cc).
void bind_compiled_graph(pybind11::module_& m);
// fx_sdk._C._build_torch_fx_graph (torch_fx_builder.cc).
void bind_torch_fx_builder(pybind11::module_& m);
// fx_sdk._C._from_torch_fx and _attribute_nodes (torch_fx_reader.cc).
void bind_torch_fx_reader(pybind11::module_& m);
// fx_sdk._C._forward_code (forward_bytecode.cc).
void bind_forward_bytecode(pybind11::module_& m);
// fx_sdk._C.ShapeEnv and GraphModule.shape_env (shape_env_api.cc).
void bind_shape_env(pybind11::module_& m, GraphModuleClass& graph_module);

// fx_sdk._C._symbolic_shape_prop (symbolic_shape_prop_api.cc).
void bind_symbolic_shape_prop(pybind11::module_& m);

// Python callables in process (python_callables.cc): into `parts`, a
// foreign target for each call_function target of `graph` that has no
// kernel (its object from `function_names`, object -> target name; two
// objects of one such name raise ValueError naming both), an
// fx::OpaqueModuleImpl for each (path, module, type name) of
// `opaque_modules` and a foreign attribute for each (path, object) of
// `attributes` (get_attr targets that are no tensors). Each holds its
// Python object.
void add_python_parts(
    const fx::Graph& graph,
    const std::unordered_map<PyObject*, std::string>& function_names,
    pybind11::handle opaque_modules, pybind11::handle attributes,
    fx::InProcessParts& parts);
// A user's torch.fx CodeGen subclass (`codegen`, a Python object) as the
// SDK graph's code generator (python_codegen.cc): text and run-time hooks
// asked of the object itself.
std::unique_ptr<fx::CodeGen> python_codegen(pybind11::handle codegen);
// The Python object behind a python_codegen, or None for any other CodeGen.
pybind11::object python_codegen_object(const fx::CodeGen& codegen);
// fx_sdk._C._python_objects, _module_kind_known, _add_python_function and
// _python_function (python_callables.cc).
void bind_python_callables(pybind11::module_& m);

}  // namespace fx_sdk

#endif  // PYTHON_BINDINGS_H_
