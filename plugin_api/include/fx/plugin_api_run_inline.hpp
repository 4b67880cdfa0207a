// The inline bodies of the wrapper's free functions that run a graph and
// reach its module: run_graph, evaluate, example inputs, submodules and
// attributes, parameters, operator schemas and signatures, output files.
//
// Part of the wrapper declared (and documented) in fx/plugin_api.hpp,
// which includes it through fx/plugin_api_inline.hpp. Include
// fx/plugin_api.hpp, not this file. Every definition here is inline (or a
// template), so the wrapper stays header-only.
#ifndef FX_PLUGIN_API_RUN_INLINE_HPP_
#define FX_PLUGIN_API_RUN_INLINE_HPP_

// Makes this header self-contained for tools that parse it alone; when
// plugin_api.hpp is the includer its guard makes this a no-op.
#include "fx/plugin_api.hpp"

namespace fxp {

// ------------------------------------------------ running and module access

namespace detail {
// Carries a C++ exception from a callback across the host, which only sees
// the status that stops the run; rethrown once the host has returned.
struct CallbackState {
  std::function<void(Node, RuntimeValue)> fn;
  std::exception_ptr error;
};
inline FxStatus* callback_trampoline(FxNode* node, const FxValue* value,
                                     void* user_data) {
  auto* state = static_cast<CallbackState*>(user_data);
  try {
    state->fn(Node(node), RuntimeValue(value));
    return nullptr;
  } catch (...) {
    state->error = std::current_exception();
    return api()->CreateStatus(FX_INTERNAL, "stopped by the plugin");
  }
}
inline void finish_callback(FxStatus* status, CallbackState& state) {
  if (state.error) {
    if (status) api()->ReleaseStatus(status);
    std::rethrow_exception(state.error);
  }
  check(status);
}
}  // namespace detail

inline void run_graph(Graph& g, const std::vector<const DLTensor*>& inputs,
                      bool meta,
                      std::function<void(Node, RuntimeValue)> on_node) {
  detail::CallbackState state{std::move(on_node), nullptr};
  FxStatus* s =
      api()->GraphRun(g.get(), inputs.data(), inputs.size(), meta ? 1 : 0,
                      &detail::callback_trampoline, &state);
  detail::finish_callback(s, state);
}

inline void evaluate(Graph& g, Node node,
                     std::function<void(RuntimeValue)> on_value) {
  detail::CallbackState state{
      [&on_value](Node, RuntimeValue v) { on_value(v); }, nullptr};
  FxStatus* s = api()->GraphEvaluate(g.get(), node.get(),
                                     &detail::callback_trampoline, &state);
  detail::finish_callback(s, state);
}

inline std::vector<Tensor> example_inputs(const Graph& g) {
  std::vector<Tensor> out;
  size_t n = api()->GraphNumExampleInputs(g.get());
  for (size_t i = 0; i < n; ++i) {
    DLManagedTensor* t = nullptr;
    check(api()->GraphExampleInput(g.get(), i, &t));
    out.emplace_back(t);
  }
  return out;
}

inline std::vector<std::vector<Tensor>> example_batches(const Graph& g) {
  std::vector<std::vector<Tensor>> out;
  if (api()->version < 10) {
    std::vector<Tensor> first = example_inputs(g);
    if (!first.empty()) out.push_back(std::move(first));
    return out;
  }
  const size_t batches = api()->GraphNumExampleBatches(g.get());
  const size_t inputs = api()->GraphNumExampleInputs(g.get());
  for (size_t b = 0; b < batches; ++b) {
    std::vector<Tensor> batch;
    for (size_t i = 0; i < inputs; ++i) {
      DLManagedTensor* t = nullptr;
      check(api()->GraphExampleBatchInput(g.get(), b, i, &t));
      batch.emplace_back(t);
    }
    out.push_back(std::move(batch));
  }
  return out;
}

inline Graph add_subgraph_module(Graph& g, const char* name) {
  FxGraph* out = nullptr;
  check(api()->GraphAddSubgraphModule(g.get(), name, &out));
  return Graph(out);
}

inline Graph submodule_graph(Graph& g, const char* name) {
  require_api_version(16, "GraphSubmoduleGraph");
  FxGraph* out = nullptr;
  check(api()->GraphSubmoduleGraph(g.get(), name, &out));
  return Graph(out);
}

inline void keep_used_attrs(Graph& g) {
  require_api_version(17, "GraphKeepUsedAttrs");
  check(api()->GraphKeepUsedAttrs(g.get()));
}

inline void share_attr(Graph& g, Graph& sub, const char* name) {
  check(api()->GraphShareAttr(g.get(), sub.get(), name));
}

inline void share_attr(Graph& g, Graph& sub, const char* name,
                       const char* as_name) {
  if (api()->version < 15 && std::strcmp(name, as_name) == 0) {
    return share_attr(g, sub, name);
  }
  require_api_version(15, "GraphShareAttrAs");
  check(api()->GraphShareAttrAs(g.get(), sub.get(), name, as_name));
}

inline std::vector<ModuleParameter> module_parameters(const Graph& g,
                                                      const char* name) {
  require_api_version(11, "GraphModuleParameters");
  FxArg* out = nullptr;
  check(api()->GraphModuleParameters(g.get(), name, &out));
  const Arg dict = Arg::adopt(out);
  std::vector<ModuleParameter> params;
  for (size_t i = 0; i < dict.view().size(); ++i) {
    ModuleParameter p{dict.view().key(i), {}};
    const ArgView shape = dict.view()[i];
    for (size_t d = 0; d < shape.size(); ++d) {
      p.shape.push_back(shape[d].as_int());
    }
    params.push_back(std::move(p));
  }
  return params;
}

inline std::vector<std::string> operator_schemas(const char* target) {
  require_api_version(12, "OperatorSchemas");
  FxArg* out = nullptr;
  check(api()->OperatorSchemas(target, &out));
  const Arg list = Arg::adopt(out);
  std::vector<std::string> schemas;
  for (size_t i = 0; i < list.view().size(); ++i) {
    schemas.emplace_back(list.view()[i].as_string());
  }
  return schemas;
}

inline void write_output_file(const std::string& path, std::string_view bytes) {
  require_api_version(13, "WriteOutputFile");
  check(api()->WriteOutputFile(path.c_str(), bytes.data(), bytes.size()));
}

inline std::optional<std::vector<SignatureParam>> target_signature(
    const Graph& g, FxOpcode op, const std::string& target) {
  require_api_version(14, "TargetSignature");
  FxArg* out = nullptr;
  FxStatus* status = api()->TargetSignature(g.get(), op, target.c_str(), &out);
  if (status != nullptr && api()->GetStatusCode(status) == FX_NOT_FOUND) {
    api()->ReleaseStatus(status);
    return std::nullopt;
  }
  check(status);
  const Arg list = Arg::adopt(out);
  std::vector<SignatureParam> params;
  for (size_t i = 0; i < list.view().size(); ++i) {
    const ArgView d = list.view()[i];
    SignatureParam p;
    for (size_t k = 0; k < d.size(); ++k) {
      if (d.key(k) == "name") p.name = d[k].as_string();
      if (d.key(k) == "kind") p.kind = d[k].as_string();
      if (d.key(k) == "default") p.default_value = Arg(d[k]);
    }
    params.push_back(std::move(p));
  }
  return params;
}

inline std::optional<std::string> target_return_type(
    const Graph& g, FxOpcode op, const std::string& target) {
  require_api_version(14, "TargetReturnType");
  char* out = nullptr;
  FxStatus* status = api()->TargetReturnType(g.get(), op, target.c_str(), &out);
  if (status != nullptr && api()->GetStatusCode(status) == FX_NOT_FOUND) {
    api()->ReleaseStatus(status);
    return std::nullopt;
  }
  check(status);
  return take_string(out);
}

inline Arg module_config(const Graph& g, const char* name) {
  FxArg* out = nullptr;
  check(api()->GraphModuleConfig(g.get(), name, &out));
  return Arg::adopt(out);
}

inline void add_module(Graph& g, const char* name, const char* type,
                       const Arg& config) {
  check(api()->GraphAddModule(g.get(), name, type, config.get()));
}

inline ArgView dict_get(ArgView dict, std::string_view key) {
  // The host's own key strings, compared where they lie (no std::string
  // per key: a module's config is asked of every node a pass visits).
  const size_t size = dict.size();
  for (size_t i = 0; i < size; ++i) {
    const char* k = api()->ArgKey(dict.get(), i);
    if (k != nullptr && key == k) return dict[i];
  }
  return ArgView();
}

inline Value op(const char* target, const Value& x, std::vector<Arg> rest,
                const Kwargs& kwargs) {
  rest.insert(rest.begin(), Arg(x.node()));
  return x.graph().call_function(target, rest, kwargs);
}

}  // namespace fxp

#endif  // FX_PLUGIN_API_RUN_INLINE_HPP_
