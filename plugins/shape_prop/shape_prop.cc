// libfx_shape_prop.so: torch.fx's ShapeProp as a plugin.
//
// Runs the graph's module once and records, on every node (the output too, as
// ShapeProp does), meta['type'] (the Python type of the value) and, for
// tensors, meta['tensor_meta']: a dict mirroring torch.fx's TensorMetadata
// (shape, dtype, requires_grad, stride, memory_format, is_quantized, qparams).
// Tuples and lists of tensors get a tuple of them, as ShapeProp's
// map_aggregate does.
//
// Inputs: the example inputs the host holds (`fx run --inputs IN.pt`), run
// for real; otherwise shapes and dtypes from the options, run on meta tensors
// (nothing is computed). `meta=true` forces a meta run of the example inputs'
// shapes.
//
// Symbolic shapes: sizes named by symbols (`shapes=Bx3x224x224`, `2*S`,
// with `hints=B:8` for the values to trace with), a symbolic graph's own
// placeholders (make_fx(tracing_mode="symbolic")), or `symbolic=true`: the
// host's symbolic shape propagation (GraphSymbolicShapeProp) writes
// tensor_meta whose sizes are expressions of the symbols; an operator
// without a shape rule on symbolic inputs fails naming the node.
#include <string>
#include <utility>
#include <vector>

#include "fx/plugin_api.hpp"
#include "plugins/common/plugin_util.h"

namespace {

using fxp::Arg;

// The tensor_meta of a value: a dict for a tensor, a tuple for a sequence
// holding tensors; `found` says whether any tensor was seen.
Arg value_meta(const fxp::RuntimeValue& v, bool* found) {
  switch (v.kind()) {
    case FX_VALUE_TENSOR:
      *found = true;
      return fx_plugins::tensor_meta_arg(v.tensor_meta());
    case FX_VALUE_SEQUENCE: {
      std::vector<Arg> items;
      for (size_t i = 0; i < v.size(); ++i) {
        items.push_back(value_meta(v.item(i), found));
      }
      return Arg::tuple(items);
    }
    case FX_VALUE_INT:
      return Arg(v.as_int());
    case FX_VALUE_FLOAT:
      return Arg(v.as_float());
    case FX_VALUE_BOOL:
      return Arg(v.as_bool());
    default:
      return Arg();
  }
}

// The Python type of a node's value: torch.return_types.NAME for the ops
// that return one (a tuple to the host).
std::string type_name(const fxp::Node& n, const fxp::RuntimeValue& v) {
  std::string type = v.type_name();
  if (type != "tuple") return type;
  if (n.op() == FX_OP_OUTPUT && n.num_args() == 1 && n.arg(0).is_node()) {
    fxp::Node returned = n.arg(0).node();
    return type_name(returned, v);
  }
  std::string_view t = n.target();
  if (n.op() == FX_OP_CALL_FUNCTION && t.rfind("torch.", 0) == 0) {
    t.remove_prefix(6);
  } else if (n.op() != FX_OP_CALL_METHOD) {
    return type;
  }
  static const char* const kReturnTypes[] = {
      "topk",      "sort",      "kthvalue", "mode",
      "median",    "nanmedian", "max",      "min",
      "cummax",    "cummin",    "aminmax",  "slogdet",
      "qr",        "svd",       "geqrf",    "triangular_solve",
      "lu_unpack", "frexp",     "histogram"};
  for (const char* r : kReturnTypes) {
    if (t == r) return std::string("torch.return_types.") + r;
  }
  return type;
}

// The run's inputs: DLTensor descriptions (data only for a real run), the
// shapes they point to, and whether the run is on meta tensors.
struct InputDescriptions {
  std::vector<std::vector<int64_t>> shape_store;
  std::vector<DLTensor> described;
  bool meta = false;
};

// Inputs from the shapes and dtypes options (a meta run).
void describe_shapes(const std::vector<std::string>& shapes,
                     const std::vector<std::string>& dtypes, size_t num_inputs,
                     InputDescriptions& in) {
  in.meta = true;
  if (shapes.size() != num_inputs) {
    throw fxp::Error(FX_INVALID_ARGUMENT,
                     "shapes gives " + std::to_string(shapes.size()) +
                         " inputs, the graph has " +
                         std::to_string(num_inputs) + " placeholders");
  }
  in.shape_store.reserve(shapes.size());
  for (size_t i = 0; i < shapes.size(); ++i) {
    in.shape_store.push_back(fx_plugins::parse_shape(shapes[i]));
    DLTensor t{};
    t.ndim = static_cast<int32_t>(in.shape_store.back().size());
    t.shape = in.shape_store.back().data();
    std::string dtype = dtypes.empty()      ? "float32"
                        : i < dtypes.size() ? dtypes[i]
                                            : dtypes.back();
    t.dtype = fx_plugins::parse_dtype(dtype);
    t.device = DLDevice{kDLCPU, 0};
    in.described.push_back(t);
  }
}

// Inputs from the host's example inputs.
void describe_examples(const std::vector<fxp::Tensor>& examples,
                       size_t num_inputs, InputDescriptions& in) {
  for (size_t i = 0; i < num_inputs; ++i) {
    in.described.push_back(examples[i].dl());
    // Contiguous inputs get the default strides (a size-1 dim's stride is
    // arbitrary in a loaded tensor; torch.fx sees the default one).
    if (examples[i].is_contiguous()) in.described.back().strides = nullptr;
  }
}

// The shape a placeholder already carries (its earlier tensor_meta, else the
// tracer's meta['shape']); sets `dtype` from the tensor_meta.
std::vector<int64_t> placeholder_shape(const fxp::Node& p, std::string& dtype) {
  std::vector<int64_t> shape;
  fxp::ArgView known = p.meta("tensor_meta");
  if (known && known.kind() == FX_ARG_DICT) {
    fxp::ArgView sizes = fxp::dict_get(known, "shape");
    for (size_t i = 0; sizes && i < sizes.size(); ++i) {
      shape.push_back(sizes[i].as_int());
    }
    if (fxp::ArgView d = fxp::dict_get(known, "dtype")) {
      dtype = d.as_string();
    }
    if (!sizes) known = fxp::ArgView();
  }
  if (!known) {
    fxp::ArgView sizes = p.meta("shape");
    if (!sizes ||
        (sizes.kind() != FX_ARG_LIST && sizes.kind() != FX_ARG_TUPLE)) {
      throw fxp::Error(FX_FAILED_PRECONDITION,
                       "shape_prop needs inputs: example inputs from the host "
                       "(fx run --inputs IN.pt), the shapes option "
                       "(shapes=1x3x224x224, dtypes=float32), or placeholder "
                       "shapes; placeholder '" +
                           std::string(p.name()) + "' has none");
    }
    for (size_t i = 0; i < sizes.size(); ++i) {
      shape.push_back(sizes[i].as_int());
    }
  }
  return shape;
}

// Shapes the placeholders already carry: the tracer's meta['shape']
// (Tracer::placeholder_shapes) or an earlier tensor_meta (a meta run).
void describe_placeholders(fxp::Graph& g, InputDescriptions& in) {
  in.meta = true;
  for (const fxp::Node& p : fx_plugins::placeholders(g)) {
    std::string dtype = "float32";
    std::vector<int64_t> shape = placeholder_shape(p, dtype);
    in.shape_store.push_back(shape);
    DLTensor t{};
    t.ndim = static_cast<int32_t>(shape.size());
    t.dtype = fx_plugins::parse_dtype(dtype);
    t.device = DLDevice{kDLCPU, 0};
    in.described.push_back(t);
  }
  for (size_t i = 0; i < in.described.size(); ++i) {
    in.described[i].shape = in.shape_store[i].data();
  }
}

// Runs the graph and records meta['type'] and meta['tensor_meta'] on every
// node; false when no node ran.
bool run_and_record(fxp::Graph& g, const std::vector<const DLTensor*>& inputs,
                    bool meta) {
  std::vector<std::pair<fxp::Node, Arg>> found_meta;
  std::vector<std::pair<fxp::Node, std::string>> types;
  fxp::run_graph(g, inputs, meta, [&](fxp::Node n, fxp::RuntimeValue v) {
    types.emplace_back(n, type_name(n, v));
    bool found = false;
    Arg m = value_meta(v, &found);
    if (found) found_meta.emplace_back(n, std::move(m));
  });
  // The graph may not change during the run: record afterwards.
  for (auto& [n, type] : types) n.set_meta("type", Arg(type));
  for (auto& [n, m] : found_meta) n.set_meta("tensor_meta", m);
  return !types.empty();
}

// Whether a size list names a symbol ("Bx3x224x224", "2*S").
bool names_symbols(const std::vector<std::string>& shapes) {
  for (const std::string& s : shapes) {
    for (char c : s) {
      if (!(c >= '0' && c <= '9') && c != 'x') return true;
    }
  }
  return false;
}

// Whether a placeholder's tensor_meta holds a symbolic size.
bool has_symbolic_placeholders(fxp::Graph& g) {
  for (const fxp::Node& p : fx_plugins::placeholders(g)) {
    fxp::ArgView meta = p.meta("tensor_meta");
    fxp::ArgView sizes = meta ? fxp::dict_get(meta, "shape") : fxp::ArgView();
    for (size_t i = 0; sizes && i < sizes.size(); ++i) {
      if (sizes[i].is_symint()) return true;
    }
  }
  return false;
}

bool shape_prop(fxp::Graph& g, const fxp::Options& options) {
  std::vector<std::string> named = options.get_list("shapes");
  bool symbolic = options.get_bool("symbolic") || names_symbols(named) ||
                  (named.empty() && has_symbolic_placeholders(g));
  if (symbolic) {
    // hints=B:8,H:224 (a pipeline's '=' separates options): NAME=VALUE.
    std::vector<std::string> hints = options.get_list("hints");
    for (std::string& h : hints) {
      if (size_t colon = h.find(':'); colon != std::string::npos)
        h[colon] = '=';
    }
    g.symbolic_shape_prop(named, hints);
    return true;
  }

  size_t num_inputs = fx_plugins::placeholders(g).size();
  std::vector<fxp::Tensor> examples;
  if (options.get_bool("use_example_inputs")) examples = fxp::example_inputs(g);
  std::vector<std::string> shapes = options.get_list("shapes");
  std::vector<std::string> dtypes = options.get_list("dtypes");

  InputDescriptions in;
  in.meta = options.get_bool("meta");
  if (!shapes.empty()) {
    describe_shapes(shapes, dtypes, num_inputs, in);
  } else if (examples.size() >= num_inputs && num_inputs > 0) {
    describe_examples(examples, num_inputs, in);
  } else if (num_inputs > 0) {
    describe_placeholders(g, in);
  }
  std::vector<const DLTensor*> inputs;
  for (const DLTensor& t : in.described) inputs.push_back(&t);
  return run_and_record(g, inputs, in.meta);
}

}  // namespace

FXP_PLUGIN(
    "fx_shape_prop", "1.0",
    fxp::pass<shape_prop>("shape_prop",
                          "records meta['type'] and meta['tensor_meta'] on "
                          "every node (torch.fx ShapeProp)")
        .option("shapes", FX_OPTION_STRING_LIST, "",
                "input shapes, one per placeholder (1x3x224x224); given, the "
                "run uses meta tensors")
        .option("dtypes", FX_OPTION_STRING_LIST, "float32",
                "input dtypes, one per placeholder (the last repeats)")
        .option("use_example_inputs", FX_OPTION_BOOL, "true",
                "run on the host's example inputs when there are some")
        .option("meta", FX_OPTION_BOOL, "false",
                "run on meta tensors of the example inputs' shapes")
        .option("symbolic", FX_OPTION_BOOL, "false",
                "symbolic sizes: those shapes names (Bx3x224x224), else the "
                "graph's own (also chosen when shapes names a symbol or the "
                "placeholders' tensor_meta is symbolic)")
        .option("hints", FX_OPTION_STRING_LIST, "",
                "values to trace symbols with (B:8); others take 64, 96, ...")
        .produces({"tensor_meta"})
        .idempotent())
