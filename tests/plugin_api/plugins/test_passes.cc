// Passes for the pass manager tests, built as a plugin (libtest_passes.so)
// against plugin_api/include alone. Each pass exercises one behaviour of the
// host: options, ordering constraints, properties, and every way to fail.
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "fx/plugin_api.hpp"

namespace {

// relu(x) -> (x > 0) * x, the docs' decomposition.
bool decompose_relu(fxp::Graph& g, const fxp::Options&) {
  bool changed = false;
  for (fxp::Node n : g.find_nodes(FX_OP_CALL_FUNCTION, "torch.relu")) {
    auto guard = g.inserting_before(n);
    fxp::Value x = n.arg(0).node();
    fxp::Value y = (x > 0) * x;
    n.replace_all_uses_with(y.node());
    g.erase_node(n);
    changed = true;
  }
  return changed;
}

// Records the Python type of every value and a tensor_meta for tensors
// (placeholders and call nodes), as ShapeProp would; with fail_on=NAME it
// skips that node's tensor_meta, breaking its declared postcondition.
bool fake_shape_prop(fxp::Graph& g, const fxp::Options& options) {
  std::string skip = options.get_string("fail_on");
  for (fxp::Node n : g) {
    if (n.op() == FX_OP_OUTPUT) continue;
    n.set_meta("type", fxp::Arg("torch.Tensor"));
    if (n.name() == skip) continue;
    n.set_meta("tensor_meta", fxp::Arg("fake"));
  }
  return true;
}

// Requires tensor_meta: counts the nodes carrying it into the output's meta.
bool read_meta(fxp::Graph& g, const fxp::Options&) {
  int64_t count = 0;
  for (fxp::Node n : g) count += n.meta("tensor_meta") ? 1 : 0;
  g.output_node().set_meta("tensor_meta_count", fxp::Arg(count));
  return true;
}

// Writes its options, as the host bound them, into the output node's meta.
bool echo_options(fxp::Graph& g, const fxp::Options& options) {
  std::string text = std::string(options.get_bool("flag") ? "true" : "false") +
                     " " + std::to_string(options.get_int("count")) + " " +
                     std::to_string(options.get_float("scale")) + " " +
                     options.get_string("dtype") + " [";
  for (const std::string& item : options.get_list("rules")) {
    text += item + ";";
  }
  text += "]";
  g.output_node().set_meta("options", fxp::Arg(text.c_str()));
  return true;
}

// Changes the graph, then reports failure.
bool edit_then_fail(fxp::Graph& g, const fxp::Options&) {
  for (fxp::Node n : g.find_nodes(FX_OP_CALL_FUNCTION, "operator.add")) {
    n.set_target("operator.mul");
  }
  g.output_node().set_meta("touched", fxp::Arg(true));
  throw fxp::Error(FX_FAILED_PRECONDITION, "edit_then_fail gives up");
}

// Moves the output node to the front: a use before definition.
bool break_graph(fxp::Graph& g, const fxp::Options&) {
  fxp::Node first = *g.begin();
  first.prepend(g.output_node());
  return true;
}

// Adds a second output node in mid-graph (torch.fx's lint accepts it).
bool second_output(fxp::Graph& g, const fxp::Options&) {
  fxp::Node first = *g.begin();
  auto guard = g.inserting_after(first);
  g.create_node(FX_OP_OUTPUT, "output", {fxp::Arg(first)}, {});
  return true;
}

// Makes the first placeholder's target torch.relu (its op stays).
bool retarget_placeholder(fxp::Graph& g, const fxp::Options&) {
  (*g.begin()).set_target("torch.relu");
  return true;
}

// Replaces every parameter it can read with zeros, then fails.
bool zero_weights_then_fail(fxp::Graph& g, const fxp::Options& options) {
  for (const std::string& name : options.get_list("names")) {
    DLManagedTensor* t = g.get_attr_tensor(name.c_str());
    // Reuse the view's storage description, pointing at fresh zeros.
    DLTensor& d = t->dl_tensor;
    int64_t count = 1;
    for (int i = 0; i < d.ndim; ++i) count *= d.shape[i];
    struct Owned {
      DLManagedTensor managed;
      int64_t shape[8];
      float* data;
    };
    auto* owned = new Owned();
    owned->data = static_cast<float*>(std::calloc(count, sizeof(float)));
    for (int i = 0; i < d.ndim; ++i) owned->shape[i] = d.shape[i];
    owned->managed.dl_tensor = d;
    owned->managed.dl_tensor.data = owned->data;
    owned->managed.dl_tensor.shape = owned->shape;
    owned->managed.dl_tensor.strides = nullptr;
    owned->managed.dl_tensor.byte_offset = 0;
    owned->managed.manager_ctx = owned;
    owned->managed.deleter = [](DLManagedTensor* self) {
      auto* o = static_cast<Owned*>(self->manager_ctx);
      std::free(o->data);
      delete o;
    };
    if (t->deleter) t->deleter(t);
    g.set_attr_tensor(name.c_str(), &owned->managed);
  }
  throw fxp::Error(FX_INTERNAL, "zero_weights_then_fail gives up");
}

// Calls `f` on every element of a float32 tensor, in place.
template <typename F>
void for_each_float(const DLTensor& d, F f) {
  int64_t count = 1;
  for (int i = 0; i < d.ndim; ++i) count *= d.shape[i];
  float* data =
      reinterpret_cast<float*>(static_cast<char*>(d.data) + d.byte_offset);
  for (int64_t i = 0; i < count; ++i) f(data[i]);
}

// Doubles each named float parameter in place, through GraphGetAttr's view
// (what a pass should not do; the host rolls it back all the same), then
// fails when `fail` is set. Says it changed nothing.
bool double_in_place(fxp::Graph& g, const fxp::Options& options) {
  for (const std::string& name : options.get_list("names")) {
    DLManagedTensor* t = g.get_attr_tensor(name.c_str());
    for_each_float(t->dl_tensor, [](float& v) { v *= 2; });
    if (t->deleter) t->deleter(t);
  }
  if (options.get_bool("fail")) {
    throw fxp::Error(FX_INTERNAL, "double_in_place gives up");
  }
  return false;
}

bool noop(fxp::Graph&, const fxp::Options&) { return false; }

// What keep_views, keep_handles and their partners keep between passes, as
// a plugin that misbehaves would (in statics, across passes).
std::vector<DLManagedTensor*>& kept_views() {
  static std::vector<DLManagedTensor*> views;
  return views;
}
FxGraph* kept_graph = nullptr;
FxNode* kept_node = nullptr;

// Takes a view of each named float parameter and keeps it (never releases
// it); changes nothing.
bool keep_views(fxp::Graph& g, const fxp::Options& options) {
  for (const std::string& name : options.get_list("names")) {
    kept_views().push_back(g.get_attr_tensor(name.c_str()));
  }
  return false;
}

// Writes 7 into every element of the views keep_views kept (in an earlier
// pass), then fails.
bool write_kept_views_then_fail(fxp::Graph&, const fxp::Options&) {
  for (DLManagedTensor* t : kept_views()) {
    for_each_float(t->dl_tensor, [](float& v) { v = 7; });
  }
  throw fxp::Error(FX_INTERNAL, "write_kept_views_then_fail gives up");
}

// Keeps the graph's handle and its first node's, marks that node's meta,
// then fails when `fail` is set (so the graph is rolled back).
bool keep_handles(fxp::Graph& g, const fxp::Options& options) {
  kept_graph = g.get();
  kept_node = fxp::api()->GraphFirstNode(g.get());
  fxp::check(fxp::api()->NodeSetMeta(kept_node, "kept", fxp::Arg(1).get()));
  if (options.get_bool("fail")) {
    throw fxp::Error(FX_INTERNAL, "keep_handles gives up");
  }
  return true;
}

// Uses the handles keep_handles kept in an earlier pass: the getters must
// answer as for NULL and an edit must fail; the edit's status (or its
// absence) is recorded in this pass's graph as the output's meta['stale'].
bool use_kept_handles(fxp::Graph& g, const fxp::Options&) {
  std::string seen =
      fxp::api()->NodeName(kept_node) == nullptr
          ? "name=NULL"
          : "name=" + std::string(fxp::api()->NodeName(kept_node));
  seen += " nodes=" + std::to_string(fxp::api()->GraphNumNodes(kept_graph));
  FxStatus* s = fxp::api()->NodeSetMeta(kept_node, "again", fxp::Arg(2).get());
  seen += s ? " status=" + std::string(fxp::api()->GetStatusMessage(s))
            : " status=OK";
  if (s) fxp::api()->ReleaseStatus(s);
  FxNode* out = fxp::api()->GraphOutputNode(g.get());
  fxp::check(fxp::api()->NodeSetMeta(out, "stale", fxp::Arg(seen).get()));
  return true;
}

// Rebuilds module `name` from its own config, zeroes its weight, then fails.
bool rebuild_module_then_fail(fxp::Graph& g, const fxp::Options& options) {
  std::string name = options.get_string("name");
  fxp::Arg config = fxp::module_config(g, name.c_str());
  fxp::add_module(g, name.c_str(), g.module_type(name.c_str()).c_str(), config);
  throw fxp::Error(FX_INTERNAL, "rebuild_module_then_fail gives up");
}

// Runs the graph on meta inputs of the shape given as an option and records
// each tensor's shape as meta['shape_seen'] ("2x3").
bool record_shapes(fxp::Graph& g, const fxp::Options& options) {
  std::vector<int64_t> shape;
  for (const std::string& d : options.get_list("shape")) {
    shape.push_back(std::stoll(d));
  }
  DLTensor input{};
  input.ndim = static_cast<int32_t>(shape.size());
  input.shape = shape.data();
  input.dtype = DLDataType{kDLFloat, 32, 1};
  const DLTensor* inputs[] = {&input};
  std::vector<std::pair<FxNode*, std::string>> seen;
  auto on_node = [](FxNode* node, const FxValue* value,
                    void* user_data) -> FxStatus* {
    auto* out =
        static_cast<std::vector<std::pair<FxNode*, std::string>>*>(user_data);
    if (fxp::api()->ValueKind(value) != FX_VALUE_TENSOR) return nullptr;
    FxTensorMeta meta;
    FxStatus* s = fxp::api()->ValueTensorMeta(value, &meta);
    if (s) return s;
    std::string text;
    for (int32_t i = 0; i < meta.ndim; ++i) {
      text += (i ? "x" : "") + std::to_string(meta.shape[i]);
    }
    out->emplace_back(node, text + " " + meta.dtype_name);
    return nullptr;
  };
  fxp::check(
      fxp::api()->GraphRun(g.get(), inputs, 1, /*meta=*/1, on_node, &seen));
  for (auto& [node, text] : seen) {
    fxp::Node(node).set_meta("shape_seen", fxp::Arg(text));
  }
  return !seen.empty();
}

// test_vendor.scaled_add(input, other, alpha=1.0) = input + alpha * other,
// for contiguous float32 tensors of one shape.
struct OwnedTensor {
  DLManagedTensor managed;
  std::vector<int64_t> shape;
  std::vector<float> data;
};

// What the kernel and register_extensions were lent, kept past their call
// as a plugin that misbehaves would (use_kept_lent_handles uses them).
const FxOpCall* kept_call = nullptr;
FxRegistrar* kept_registrar = nullptr;

FxStatus* scaled_add_kernel(const FxApi* api, const FxOpCall* call, void*,
                            DLManagedTensor** out) {
  kept_call = call;
  DLManagedTensor* a = nullptr;
  DLManagedTensor* b = nullptr;
  double alpha = 1.0;
  FxStatus* s = api->CallTensorArg(call, "input", &a);
  if (!s) s = api->CallTensorArg(call, "other", &b);
  if (!s) s = api->CallFloatArg(call, "alpha", &alpha);
  if (!s) {
    auto* result = new OwnedTensor();
    const DLTensor& x = a->dl_tensor;
    result->shape.assign(x.shape, x.shape + x.ndim);
    int64_t count = 1;
    for (int64_t d : result->shape) count *= d;
    result->data.resize(count);
    const float* xa = static_cast<const float*>(x.data);
    const float* xb = static_cast<const float*>(b->dl_tensor.data);
    for (int64_t i = 0; i < count; ++i) {
      result->data[i] = xa[i] + static_cast<float>(alpha) * xb[i];
    }
    DLTensor& r = result->managed.dl_tensor;
    r.data = result->data.data();
    r.device = DLDevice{kDLCPU, 0};
    r.ndim = x.ndim;
    r.dtype = DLDataType{kDLFloat, 32, 1};
    r.shape = result->shape.data();
    result->managed.manager_ctx = result;
    result->managed.deleter = [](DLManagedTensor* self) {
      delete static_cast<OwnedTensor*>(self->manager_ctx);
    };
    *out = &result->managed;
  }
  if (a && a->deleter) a->deleter(a);
  if (b && b->deleter) b->deleter(b);
  return s;
}

FxStatus* scaled_add_shape(const FxApi* api, const FxOpCall* call, void*,
                           FxTensorSpec* out) {
  FxTensorMeta meta;
  FxStatus* s = api->CallTensorMeta(call, "input", &meta);
  if (s) return s;
  out->ndim = meta.ndim;
  for (int32_t i = 0; i < meta.ndim; ++i) out->shape[i] = meta.shape[i];
  out->dtype = meta.dtype;
  return nullptr;
}

// Modules of type test_vendor.Block are leaves; others: no opinion.
int block_is_leaf(const char* module_type, const char*, void*) {
  return std::string(module_type) == "test_vendor.Block" ? 1 : -1;
}

FxStatus* register_extensions(const FxApi* api, FxRegistrar* registrar) {
  kept_registrar = registrar;
  static const FxCustomOp scaled_add = {
      "test_vendor.scaled_add", "input, other, alpha=1.0", scaled_add_kernel,
      scaled_add_shape, nullptr};
  FxStatus* s = api->RegisterCustomOp(registrar, &scaled_add);
  if (s) return s;
  return api->RegisterLeafModuleRule(registrar, block_is_leaf, nullptr);
}

// Uses what the host lent past its call: the call scaled_add's kernel last
// saw, register_extensions' registrar, and a status it released (twice); the
// host's answers go into the output's meta['lent'] ("none" where nothing was
// kept).
bool use_kept_lent_handles(fxp::Graph& g, const fxp::Options&) {
  const FxApi* api = fxp::api();
  auto code_of = [&](FxStatus* s) -> std::string {
    std::string code = s == nullptr ? "OK"
                       : api->GetStatusCode(s) == FX_FAILED_PRECONDITION
                           ? "FAILED_PRECONDITION"
                           : "another error";
    api->ReleaseStatus(s);
    return code;
  };
  double alpha = 0;
  std::string seen =
      "call=" + (kept_call
                     ? code_of(api->CallFloatArg(kept_call, "alpha", &alpha))
                     : std::string("none"));
  seen += " registrar=" +
          (kept_registrar
               ? code_of(api->RegisterLeafOp(kept_registrar, "aten::relu"))
               : std::string("none"));
  FxStatus* released = api->CreateStatus(FX_INTERNAL, "released");
  api->ReleaseStatus(released);
  seen += " released_status=" + std::string(api->GetStatusMessage(released));
  api->ReleaseStatus(released);  // a second release does nothing
  g.output_node().set_meta("lent", fxp::Arg(seen));
  return true;
}

// Edits the graph of the child GraphModule `child` (GraphSubmoduleGraph):
// every node gets meta['seen'], with `scale` the child's attribute of that
// name is set to `scale` times itself (through the child's graph), with
// `fail` it then fails, with `break` it leaves the child's graph invalid (a
// use before definition), with `replace` it then replaces the child by a
// ReLU module.
bool edit_child_graph(fxp::Graph& g, const fxp::Options& options) {
  fxp::Graph child =
      fxp::submodule_graph(g, options.get_string("child").c_str());
  for (fxp::Node n : child) n.set_meta("seen", fxp::Arg(true));
  const std::string scale = options.get_string("scale");
  if (!scale.empty()) {
    fxp::Tensor t(child.get_attr_tensor(scale.c_str()));
    fxp::Tensor scaled = fxp::make_tensor({t.numel()}, fxp::kFloat32);
    for (int64_t i = 0; i < t.numel(); ++i) {
      scaled.mutable_data<float>()[i] = 2 * t.data<float>()[i];
    }
    child.set_attr_tensor(scale.c_str(), scaled.release());
  }
  if (options.get_bool("break")) (*child.begin()).prepend(child.output_node());
  if (options.get_bool("replace")) {
    fxp::add_module(g, options.get_string("child").c_str(), "torch.nn.ReLU",
                    fxp::Arg::dict({}));
  }
  if (options.get_bool("fail")) {
    throw fxp::Error(FX_FAILED_PRECONDITION, "edit_child_graph gives up");
  }
  return true;
}

// GraphKeepUsedAttrs on the graph (or on the graph of the child
// GraphModule `child`): first borrows the graph of child `lend`, sets the
// tensor `set` to sevens, erases the unused nodes named in `erase`, adds a
// child GraphModule `add` calling `lin` (and a call of it), a get_attr of
// `missing` when given, then keeps what the graph uses; with `fail` it
// then fails.
bool keep_used_attrs(fxp::Graph& g, const fxp::Options& options) {
  const std::string lend = options.get_string("lend");
  if (!lend.empty()) (void)fxp::submodule_graph(g, lend.c_str());
  const std::string set = options.get_string("set");
  if (!set.empty()) {
    fxp::Tensor t(g.get_attr_tensor(set.c_str()));
    fxp::Tensor sevens = fxp::make_tensor(t.shape(), fxp::kFloat32);
    for (int64_t i = 0; i < t.numel(); ++i) {
      sevens.mutable_data<float>()[i] = 7;
    }
    g.set_attr_tensor(set.c_str(), sevens.release());
  }
  const std::string child_name = options.get_string("child");
  fxp::Graph target =
      child_name.empty() ? g : fxp::submodule_graph(g, child_name.c_str());
  for (const std::string& name : options.get_list("erase")) {
    for (fxp::Node n : target) {
      if (n.name() == name) {
        target.erase_node(n);
        break;
      }
    }
  }
  const std::string add = options.get_string("add");
  if (!add.empty()) {
    // A new child GraphModule calling the root's `lin`, called (dead) by
    // the graph.
    fxp::Graph sub = fxp::add_subgraph_module(g, add.c_str());
    fxp::share_attr(g, sub, "lin");
    fxp::Node x = sub.create_node(FX_OP_PLACEHOLDER, "x");
    fxp::Node lin = sub.create_node(FX_OP_CALL_MODULE, "lin", {fxp::Arg(x)});
    sub.create_node(FX_OP_OUTPUT, "output", {fxp::Arg(lin)});
    auto at = g.inserting_before(g.output_node());
    g.create_node(FX_OP_CALL_MODULE, add.c_str(), {fxp::Arg(*g.begin())});
  }
  const std::string missing = options.get_string("missing");
  if (!missing.empty()) {
    auto at = target.inserting_before(target.output_node());
    target.create_node(FX_OP_GET_ATTR, missing.c_str());
  }
  fxp::keep_used_attrs(target);
  if (options.get_bool("fail")) {
    throw fxp::Error(FX_FAILED_PRECONDITION, "keep_used_attrs gives up");
  }
  return true;
}

// A pass body without the wrapper's trampoline: the exception crosses the C
// boundary, which a correct plugin never lets happen; the host survives it.
FxStatus* throw_through_c(const FxApi*, FxGraph*, const FxOptions*, void*,
                          int*) {
  throw std::runtime_error("thrown through the C boundary");
}

}  // namespace

FXP_PLUGIN_WITH_EXTENSIONS(
    "test_passes", "1.0", register_extensions,
    fxp::pass<decompose_relu>("decompose_relu", "relu(x) -> (x > 0) * x")
        .invalidates({"tensor_meta"}),
    fxp::pass<fake_shape_prop>("fake_shape_prop",
                               "records meta['type'] and a fake tensor_meta")
        .option("fail_on", FX_OPTION_STRING, "",
                "a node left without tensor_meta")
        .produces({"tensor_meta"}),
    fxp::pass<read_meta>("read_meta", "counts nodes with tensor_meta")
        .requires_property({"tensor_meta"}),
    fxp::pass<echo_options>("echo_options", "writes its options into meta")
        .option("flag", FX_OPTION_BOOL, "false", "a bool")
        .option("count", FX_OPTION_INT, "3", "an int")
        .option("scale", FX_OPTION_FLOAT, "0.5", "a float")
        .option("dtype", FX_OPTION_STRING, "int8", "a string")
        .option("rules", FX_OPTION_STRING_LIST, "relu,gelu", "a list"),
    fxp::pass<edit_then_fail>("edit_then_fail",
                              "turns add into mul, then fails"),
    fxp::pass<break_graph>("break_graph", "leaves a use before definition"),
    fxp::pass<second_output>("second_output",
                             "adds a second output node in mid-graph"),
    fxp::pass<retarget_placeholder>("retarget_placeholder",
                                    "renames the first placeholder's target"),
    fxp::pass<retarget_placeholder>("declared_retarget_placeholder",
                                    "renames the first placeholder's target, "
                                    "declaring it changes the signature")
        .invalidates({"signature"}),
    fxp::pass<zero_weights_then_fail>("zero_weights_then_fail",
                                      "replaces weights, then fails")
        .option("names", FX_OPTION_STRING_LIST, "", "parameters to replace"),
    fxp::pass<double_in_place>("double_in_place",
                               "doubles parameters in place; may then fail")
        .option("names", FX_OPTION_STRING_LIST, "", "float parameters")
        .option("fail", FX_OPTION_BOOL, "false", "fail afterwards"),
    fxp::pass<keep_views>("keep_views",
                          "keeps views of parameters, never releases them")
        .option("names", FX_OPTION_STRING_LIST, "", "float parameters"),
    fxp::pass<write_kept_views_then_fail>(
        "write_kept_views_then_fail",
        "writes through the views keep_views kept, then fails"),
    fxp::pass<keep_handles>("keep_handles",
                            "keeps graph and node handles; may then fail")
        .option("fail", FX_OPTION_BOOL, "false", "fail afterwards"),
    fxp::pass<use_kept_handles>("use_kept_handles",
                                "uses the handles keep_handles kept"),
    fxp::pass<use_kept_lent_handles>(
        "use_kept_lent_handles",
        "uses a kernel's call, a registrar and a status past their time"),
    fxp::pass<noop>("first", "declares run_before second")
        .run_before({"second"}),
    fxp::pass<noop>("second", "declares nothing"),
    fxp::pass<noop>("third", "declares run_after second").run_after({"second"}),
    fxp::pass<noop>("cycle_a", "declares run_after cycle_b")
        .run_after({"cycle_b"}),
    fxp::pass<noop>("cycle_b", "declares run_after cycle_a")
        .run_after({"cycle_a"}),
    fxp::PassDef("throw_through_c", "throws across the C boundary",
                 &throw_through_c),
    fxp::pass<rebuild_module_then_fail>("rebuild_module_then_fail",
                                        "replaces a module, then fails")
        .option("name", FX_OPTION_STRING, "", "the module"),
    fxp::pass<edit_child_graph>("edit_child_graph",
                                "marks a child GraphModule's nodes")
        .option("child", FX_OPTION_STRING, "", "the child GraphModule")
        .option("scale", FX_OPTION_STRING, "", "an attribute to double")
        .option("fail", FX_OPTION_BOOL, "false", "then fail")
        .option("break", FX_OPTION_BOOL, "false", "then break its graph")
        .option("replace", FX_OPTION_BOOL, "false", "then replace the child"),
    fxp::pass<keep_used_attrs>("keep_used_attrs",
                               "keeps the attributes the graph uses")
        .option("child", FX_OPTION_STRING, "", "a child GraphModule's instead")
        .option("lend", FX_OPTION_STRING, "", "a child graph to borrow first")
        .option("set", FX_OPTION_STRING, "", "a tensor to set to sevens first")
        .option("add", FX_OPTION_STRING, "", "a child GraphModule to add first")
        .option("erase", FX_OPTION_STRING_LIST, "", "unused nodes to erase")
        .option("missing", FX_OPTION_STRING, "", "a target to get_attr first")
        .option("fail", FX_OPTION_BOOL, "false", "then fail"),
    fxp::pass<record_shapes>("record_shapes", "records shapes from a meta run")
        .option("shape", FX_OPTION_STRING_LIST, "2,3", "the input's shape"))
