// torch 1.13's torch.fx.passes.graph_manipulation as passes:
//
//  - replace_target_nodes_with: every node whose opcode and target are
//    `old_op` / `old_target` becomes a node of `new_op` / `new_target` with
//    the same arguments and name. torch rebuilds the graph (create_node for
//    those, node_copy for the rest) and assigns it to the module: the new
//    nodes have no type annotation and no meta, every name stays, and the
//    graph's namespace is a fresh graph's. Placeholders and the output are
//    not replaced, nor made (torch would change the signature or the
//    result): refused, as is an unknown opcode (torch asserts).
//  - get_size_of_all_nodes: each node before the output gets torch's
//    size_bytes(output_size, total_size), as meta['size_bytes'] = (output,
//    total) (torch sets it as the attribute node.size_bytes): the bytes of
//    its result from meta['tensor_meta'] (run shape_prop first, as torch's
//    `args` runs ShapeProp), plus, for a call_module, those of the module's
//    parameters (named_parameters: recursive, a shared tensor once); the
//    element size of the result's dtype counts for the parameters too, as in
//    torch. A node without tensor_meta is refused with torch's message, one
//    whose result is not one tensor (torch fails reading its shape) or has a
//    symbolic size is refused naming it.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "fx/plugin_api.hpp"
#include "plugins/optimization/passes.h"
#include "plugins/optimization/retrace.h"

namespace fx_optimization {
namespace {

using fxp::Arg;
using fxp::ArgView;
using fxp::Graph;
using fxp::Node;

[[noreturn]] void refuse(const char* pass, FxStatusCode code,
                         const std::string& what) {
  throw fxp::Error(code, std::string(pass) + ": " + what);
}

// ------------------------------------------------ replace_target_nodes_with

constexpr const char* kReplace = "replace_target_nodes_with";

FxOpcode opcode(const fxp::Options& options, const char* option) {
  static const char* const kNames[] = {"placeholder",   "get_attr",
                                       "call_function", "call_method",
                                       "call_module",   "output"};
  const std::string name = options.get_string(option);
  for (int op = 0; op < 6; ++op) {
    if (name != kNames[op]) continue;
    if (op == FX_OP_PLACEHOLDER || op == FX_OP_OUTPUT) {
      refuse(kReplace, FX_INVALID_ARGUMENT,
             std::string("option '") + option + "' is '" + name +
                 "': placeholders and the output are not replaced (the "
                 "graph's signature and result would change)");
    }
    return static_cast<FxOpcode>(op);
  }
  refuse(kReplace, FX_INVALID_ARGUMENT,
         std::string("option '") + option + "' is '" + name +
             "', not one of get_attr, call_function, call_method, "
             "call_module");
}

}  // namespace

bool replace_target_nodes_with(Graph& g, const fxp::Options& options) {
  require_renaming(kReplace);
  const FxOpcode old_op = opcode(options, "old_op");
  const FxOpcode new_op = opcode(options, "new_op");
  const std::string old_target = options.get_string("old_target");
  const std::string new_target = options.get_string("new_target");
  if (new_target.empty()) {
    refuse(kReplace, FX_INVALID_ARGUMENT, "option 'new_target' is empty");
  }
  Renames renames;
  for (Node n : g.nodes()) {
    if (n.op() != old_op || n.target() != old_target) continue;
    std::vector<Arg> args;
    for (const ArgView& a : n.args()) args.emplace_back(a);
    fxp::Kwargs kwargs;
    for (size_t i = 0; i < n.num_kwargs(); ++i) {
      kwargs.emplace_back(n.kwarg_key(i), Arg(n.kwarg_value(i)));
    }
    Node made;
    {
      fxp::InsertGuard at = g.inserting_before(n);
      made = g.create_node(new_op, new_target.c_str(), args, kwargs);
    }
    n.replace_all_uses_with(made);
    renames.emplace_back(made, std::string(n.name()));
    g.erase_node(n);
  }
  apply_retrace_names(g, renames);  // torch assigns the module a new graph
  return !renames.empty();
}

namespace {

// ----------------------------------------------------- get_size_of_all_nodes

constexpr const char* kSizes = "get_size_of_all_nodes";

// torch's element_size() of a dtype (quantized ones: their storage's).
int64_t element_size(const std::string& dtype, const Node& n) {
  static const std::pair<const char*, int64_t> kElementSizes[] = {
      {"torch.float32", 4},     {"torch.float64", 8},   {"torch.float16", 2},
      {"torch.bfloat16", 2},    {"torch.complex32", 4}, {"torch.complex64", 8},
      {"torch.complex128", 16}, {"torch.int64", 8},     {"torch.int32", 4},
      {"torch.int16", 2},       {"torch.int8", 1},      {"torch.uint8", 1},
      {"torch.bool", 1},        {"torch.qint8", 1},     {"torch.quint8", 1},
      {"torch.qint32", 4},      {"torch.quint4x2", 1},  {"torch.quint2x4", 1},
  };
  for (const auto& [name, size] : kElementSizes) {
    if (dtype == name) return size;
  }
  refuse(kSizes, FX_FAILED_PRECONDITION,
         "node '" + std::string(n.name()) + "' has dtype '" + dtype +
             "', whose element size is unknown");
}

// The number of elements of the tensor meta['tensor_meta'] describes.
int64_t numel(const ArgView& shape, const Node& n) {
  int64_t count = 1;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i].kind() != FX_ARG_INT) {
      refuse(kSizes, FX_FAILED_PRECONDITION,
             "node '" + std::string(n.name()) +
                 "' has a symbolic size; its bytes depend on the inputs");
    }
    count *= shape[i].as_int();
  }
  return count;
}

}  // namespace

bool get_size_of_all_nodes(Graph& g, const fxp::Options&) {
  std::vector<std::pair<Node, Arg>> sizes;
  for (Node n : g) {
    if (n.op() == FX_OP_OUTPUT) break;
    const ArgView meta = n.meta("tensor_meta");
    if (!meta || meta.is_none()) {
      refuse(kSizes, FX_FAILED_PRECONDITION,
             "Node " + std::string(n.name()) +
                 " has no tensor metadata associated with it! Check that "
                 "shape propagation has run.");
    }
    const ArgView shape = fxp::dict_get(meta, "shape");
    const ArgView dtype = fxp::dict_get(meta, "dtype");
    if (meta.kind() != FX_ARG_DICT || !shape || !dtype) {
      refuse(kSizes, FX_FAILED_PRECONDITION,
             "node '" + std::string(n.name()) +
                 "' does not produce one tensor (its tensor_meta has no "
                 "shape); torch's get_size_of_node fails on it too");
    }
    const int64_t output_elems = numel(shape, n);
    int64_t total_elems = output_elems;
    if (n.op() == FX_OP_CALL_MODULE) {
      const std::string target(n.target());
      for (const fxp::ModuleParameter& p :
           fxp::module_parameters(g, target.c_str())) {
        int64_t count = 1;
        for (int64_t size : p.shape) count *= size;
        total_elems += count;
      }
    }
    const int64_t bytes = element_size(dtype.as_string(), n);
    sizes.emplace_back(
        n, Arg::tuple({Arg(bytes * output_elems), Arg(bytes * total_elems)}));
  }
  for (auto& [n, size] : sizes) n.set_meta("size_bytes", size);
  return !sizes.empty();
}

}  // namespace fx_optimization
