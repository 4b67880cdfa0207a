// get_size_of_all_nodes (libfx_optimization.so): torch 1.13's
// torch.fx.passes.graph_manipulation.get_size_of_all_nodes. Each node
// before the output gets torch's size_bytes(output_size, total_size), as
// meta['size_bytes'] = (output, total) (torch sets it as the attribute
// node.size_bytes): the bytes of its result from meta['tensor_meta'] (run
// shape_prop first, as torch's `args` runs ShapeProp), plus, for a
// call_module, those of the module's parameters (named_parameters:
// recursive, a shared tensor once); the element size of the result's dtype
// counts for the parameters too, as in torch. A node without tensor_meta is
// refused with torch's message, one whose result is not one tensor (torch
// fails reading its shape) or has a symbolic size is refused naming it.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "fx/plugin_api.hpp"
#include "plugins/common/plugin_util.h"
#include "plugins/optimization/passes.h"

namespace fx_optimization {
namespace {

using fxp::Arg;
using fxp::ArgView;
using fxp::Graph;
using fxp::Node;

constexpr const char* kSizes = "get_size_of_all_nodes";

// Refuses, naming the pass (torch raises or asserts there).
[[noreturn]] void refuse(const std::string& what) {
  fx_plugins::refuse_in(kSizes, FX_FAILED_PRECONDITION, what);
}

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
  refuse("node '" + std::string(n.name()) + "' has dtype '" + dtype +
         "', whose element size is unknown");
}

// The number of elements of the tensor meta['tensor_meta'] describes.
int64_t numel(const ArgView& shape, const Node& n) {
  int64_t count = 1;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i].kind() != FX_ARG_INT) {
      refuse("node '" + std::string(n.name()) +
             "' has a symbolic size; its bytes depend on the inputs");
    }
    count *= shape[i].as_int();
  }
  return count;
}

}  // namespace

// Each node's sizes are set as they are found (a refusal further on is
// rolled back by the pass manager): no 100k pending tuples.
bool get_size_of_all_nodes(Graph& g, const fxp::Options&) {
  bool changed = false;
  for (Node n : g) {
    if (n.op() == FX_OP_OUTPUT) break;
    const ArgView meta = n.meta("tensor_meta");
    if (!meta || meta.is_none()) {
      refuse("Node " + std::string(n.name()) +
             " has no tensor metadata associated with it! Check that "
             "shape propagation has run.");
    }
    const ArgView shape = fxp::dict_get(meta, "shape");
    const ArgView dtype = fxp::dict_get(meta, "dtype");
    if (meta.kind() != FX_ARG_DICT || !shape || !dtype) {
      refuse("node '" + std::string(n.name()) +
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
    n.set_meta("size_bytes", Arg::tuple({Arg(bytes * output_elems),
                                         Arg(bytes * total_elems)}));
    changed = true;
  }
  return changed;
}

}  // namespace fx_optimization
